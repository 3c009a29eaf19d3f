"""A slow stdio MCP server for the take-over tests: ``slow(name)`` logs each call (its
idempotency key, at the start) to ``TAKEOVER_LOG``, sleeps ``TAKEOVER_DELAY`` seconds,
then returns ``{"done": "NAME!"}``."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

KEY = "io.plansmith/idempotency-key"

server = MCPServer("slow", version="1.0", log_level="WARNING")


@server.tool()
async def slow(name: str, ctx: Context) -> dict[str, Any]:
    """Log the call, sleep, return ``{"done": "NAME!"}``."""
    meta = ctx.request_context.meta or {}
    with open(os.environ["TAKEOVER_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": meta.get(KEY), "name": name}) + "\n")
    await anyio.sleep(float(os.environ.get("TAKEOVER_DELAY", "0.3")))
    return {"done": f"{name}!"}


if __name__ == "__main__":
    server.run()
