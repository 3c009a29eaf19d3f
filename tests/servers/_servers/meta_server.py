"""A test MCP server that records the ``_meta`` of every call (mcp 2.x ``MCPServer``).

Tools: ``record`` (returns ``{"name", "meta"}``: the request's ``_meta`` as received) and
``flaky`` (fails, marked retryable, the first ``fails`` calls per name, then returns like
``record``).

Environment: ``META_LOG`` (a file that gets one JSON line per call: tool, name, meta).

Usage: ``python meta_server.py`` (stdio).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent

server = MCPServer("meta", version="1.0", log_level="WARNING")
_failures: dict[str, int] = {}


def _seen(tool: str, name: str, ctx: Context) -> dict[str, Any]:
    meta = {str(k): v for k, v in dict(ctx.request_context.meta or {}).items()}
    path = os.environ.get("META_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "name": name, "meta": meta}) + "\n")
    return {"name": name, "meta": meta}


@server.tool()
async def record(name: str, ctx: Context) -> dict[str, Any]:
    """Return the ``_meta`` this call came with."""
    return _seen("record", name, ctx)


@server.tool()
async def flaky(name: str, fails: int, ctx: Context) -> CallToolResult:
    """Fail (retryable) the first ``fails`` calls for ``name``; each call is recorded."""
    seen = _seen("flaky", name, ctx)
    count = _failures.get(name, 0)
    if count < fails:
        _failures[name] = count + 1
        return CallToolResult(
            content=[TextContent(type="text", text=f"transient failure {count + 1} of {fails}")],
            is_error=True,
            _meta={"io.plansmith/retryable": True},
        )
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(seen))], structured_content=seen
    )


if __name__ == "__main__":
    server.run()
