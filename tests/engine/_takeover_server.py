"""A slow stdio MCP server for the take-over tests: ``slow(name)`` logs each call (its
idempotency key, at the start) to ``TAKEOVER_LOG``, sleeps ``TAKEOVER_DELAY`` seconds,
then returns ``{"done": "NAME!"}``.

``TAKEOVER_HOLD_AFTER=N`` with ``TAKEOVER_HOLD_ONCE`` (a file): the calls after this
process's N-th are logged, then never return, so the engine's run cannot finish before a
test kills it; the first held call creates the file (which tells the test that a call is
held), and a server that finds it already there holds nothing, so the server of the
engine that takes the run over serves every call."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

KEY = "io.plansmith/idempotency-key"

server = MCPServer("slow", version="1.0", log_level="WARNING")


class _Hold:
    """For ``TAKEOVER_HOLD_AFTER``: this process's calls so far, and whether it holds
    (decided at its first call past the limit)."""

    calls = 0
    holding: bool | None = None


async def _hold_if_asked() -> None:
    """Never return, for the calls after the ``TAKEOVER_HOLD_AFTER``-th."""
    after = os.environ.get("TAKEOVER_HOLD_AFTER")
    if after is None:
        return
    _Hold.calls += 1
    if _Hold.calls <= int(after):
        return
    if _Hold.holding is None:
        marker = os.environ["TAKEOVER_HOLD_ONCE"]
        _Hold.holding = not os.path.exists(marker)
        if _Hold.holding:
            with open(marker, "w", encoding="utf-8") as f:
                f.write("held\n")
    if _Hold.holding:
        await anyio.sleep_forever()


@server.tool()
async def slow(name: str, ctx: Context) -> dict[str, Any]:
    """Log the call, sleep, return ``{"done": "NAME!"}``."""
    meta = ctx.request_context.meta or {}
    with open(os.environ["TAKEOVER_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": meta.get(KEY), "name": name}) + "\n")
    await _hold_if_asked()
    await anyio.sleep(float(os.environ.get("TAKEOVER_DELAY", "0.3")))
    return {"done": f"{name}!"}


if __name__ == "__main__":
    server.run()
