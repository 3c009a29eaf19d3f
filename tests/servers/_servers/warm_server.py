"""A test MCP server for the warm pools (``servers/_warm.py``), built with the SDK (2.x).

Tools: ``pid`` (this process's id), ``hold`` (waits, counting the calls of ``hold`` in
flight), ``peak`` (the most calls of ``hold`` ever in flight at once), ``grow`` (adds a
tool of the given name, which answers ``{"grown": name}``, and announces the change:
on a 2026-07-28 connection to the ``subscriptions/listen`` streams, on an earlier one
with ``notifications/tools/list_changed``), ``say`` (writes a line to stderr).

Environment: ``WARM_STARTS`` (a file that gets a line with the process id at each
start); ``WARM_TAG`` (returned by ``pid``: tells two configs' processes apart).

Usage: ``python warm_server.py`` (stdio).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("warm", version="1.0", log_level="WARNING")


class _Calls:
    in_flight = 0
    peak = 0


@server.tool()
async def pid() -> dict[str, Any]:
    """This process's id, and its ``WARM_TAG``."""
    return {"pid": os.getpid(), "tag": os.environ.get("WARM_TAG", "")}


@server.tool()
async def hold(seconds: float = 0.2, name: str = "") -> dict[str, Any]:
    """Wait ``seconds``; the calls of ``hold`` in flight as it began (itself included)."""
    _Calls.in_flight += 1
    _Calls.peak = max(_Calls.peak, _Calls.in_flight)
    seen = _Calls.in_flight
    try:
        await anyio.sleep(seconds)
    finally:
        _Calls.in_flight -= 1
    return {"in_flight": seen, "name": name}


@server.tool()
async def peak() -> dict[str, Any]:
    """The most calls of ``hold`` in flight at once so far."""
    return {"peak": _Calls.peak}


@server.tool()
async def say(text: str) -> dict[str, Any]:
    """Write ``text`` to stderr (one line)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    return {"said": text}


@server.tool()
async def grow(name: str, ctx: Context) -> dict[str, Any]:
    """Add a tool ``name`` and announce that the tools changed."""

    async def grown() -> dict[str, Any]:
        return {"grown": name}

    server.add_tool(grown, name=name, description=f"added by grow({name!r})")
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return {"added": name}


def main() -> None:
    starts = os.environ.get("WARM_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server.run()


if __name__ == "__main__":
    main()
