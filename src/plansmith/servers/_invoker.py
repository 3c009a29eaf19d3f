"""The MCP tool invoker: ``ToolInvoker`` over a :class:`ServerPool`."""

from __future__ import annotations

from plansmith.execution import ToolCall, ToolResult
from plansmith.servers._pool import ServerPool

__all__ = ["McpInvoker"]


class McpInvoker:
    """Calls each tool on its pooled server, with the idempotency key in ``_meta``."""

    def __init__(self, pool: ServerPool) -> None:
        self.pool = pool

    async def invoke(self, call: ToolCall) -> ToolResult:
        return await self.pool.call(
            call.server, call.tool, dict(call.arguments), key=call.key, on_progress=call.on_progress
        )
