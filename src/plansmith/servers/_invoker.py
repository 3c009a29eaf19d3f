"""The MCP tool invoker: ``ToolInvoker`` over a tool pool (local or distributed)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import Any, Protocol, TextIO

from plansmith.binding import ToolCatalog
from plansmith.execution import ProgressFn, ReadyFn, ToolCall, ToolResult
from plansmith.servers._config import ServersConfig

__all__ = ["McpInvoker", "ToolPool", "PoolFactory", "CallByInvoke"]

_NONE: Mapping[str, str] = MappingProxyType({})


class ToolPool(Protocol):
    """Where tool calls go: :class:`ServerPool` here, or a pool spread over a cluster."""

    async def start(self, names: tuple[str, ...] | None = None) -> ToolCatalog: ...

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        key: str | None = None,
        on_progress: ProgressFn | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> ToolResult: ...


class CallByInvoke:
    """``ToolPool.call`` for a pool whose own entry is ``invoke(ToolCall)`` (the one
    ``McpInvoker`` hands the runner's calls to as they are)."""

    def invoke(self, call: ToolCall) -> Awaitable[ToolResult]:
        raise NotImplementedError

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        key: str | None = None,
        on_progress: ProgressFn | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> ToolResult:
        """Call ``tool`` of ``server``; failures raise ``ToolCallError`` with their class.

        ``key`` goes into ``_meta`` as the idempotency key, beside ``meta``'s entries.
        """
        return await self.invoke(
            ToolCall(
                server, tool, arguments, key or "", on_progress=on_progress, meta=meta or _NONE
            )
        )


#: makes the pool for one run: ``factory(config, errlog)``, used as ``async with``
PoolFactory = Callable[[ServersConfig, TextIO | None], AbstractAsyncContextManager[ToolPool]]


class McpInvoker:
    """Calls each tool on its pooled server, with the idempotency key in ``_meta``."""

    def __init__(self, pool: ToolPool) -> None:
        self.pool = pool
        direct = getattr(pool, "invoke", None)
        if direct is not None:  # ``ServerPool.invoke`` takes the call as it is
            self.invoke = direct  # type: ignore[method-assign]  # one coroutine less a call
        # ``ServerPool.ready``: ``TimeoutInvoker`` waits for a server's start with it
        self.ready: ReadyFn | None = getattr(pool, "ready", None)

    async def invoke(self, call: ToolCall) -> ToolResult:
        return await self.pool.call(
            call.server,
            call.tool,
            dict(call.arguments),
            key=call.key,
            on_progress=call.on_progress,
            meta=call.meta or None,
        )
