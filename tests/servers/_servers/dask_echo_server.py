"""A small stdio MCP server for the Dask executor's tests and benchmark: it logs each call
with its own process id and its parent's (the Dask worker that spawned it).

Tools: ``work(name, seconds=0)`` (logs ``start`` and ``end``, sleeps ``seconds``, returns
``{"name", "done", "pid", "ppid", "server"}``), ``noop()`` (returns at once, no log),
``progress(n)``, ``fail(retryable)`` (an ``is_error`` result).

Environment: ``DASK_ECHO_LOG`` (a file that gets one JSON line per ``work`` event:
event, server, name, key, meta, pid, ppid); ``DASK_ECHO_NAME`` (the server's name in the
log); ``DASK_ECHO_HOLD`` (a ``work`` name that blocks, after logging ``start``, until
the process's parent dies: the test kills the worker there) and ``DASK_ECHO_HOLD_MARKER``
(a file: the hold happens only while it does not exist, and creates it, so the call made
again on a replacement worker finishes); ``DASK_ECHO_OVERLAP`` (a number N: each ``work``
call, after logging ``start``, waits until the log, which every server process of the
test shares, has shown N calls in flight at once, so a limit test sees its overlap for
sure; after ``DASK_ECHO_OVERLAP_DEADLINE`` seconds, default 60, it logs ``alone`` and
goes on, and the test fails saying so).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent

KEY = "io.plansmith/idempotency-key"

server = MCPServer("dask-echo", version="1.0", log_level="WARNING")


def _log(event: str, name: str, ctx: Context) -> None:
    path = os.environ.get("DASK_ECHO_LOG")
    if not path:
        return
    meta = dict(ctx.request_context.meta or {})
    line = {
        "event": event,
        "server": os.environ.get("DASK_ECHO_NAME", ""),
        "name": name,
        "key": meta.pop(KEY, None),
        "meta": {k: v for k, v in meta.items() if isinstance(v, str)},
        "pid": os.getpid(),
        "ppid": os.getppid(),
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


async def _hold(name: str) -> None:
    """Block while the marker is missing, until the parent (the worker) is gone."""
    marker = os.environ.get("DASK_ECHO_HOLD_MARKER")
    if name != os.environ.get("DASK_ECHO_HOLD") or not marker or os.path.exists(marker):
        return
    with open(marker, "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    parent = os.getppid()
    while os.getppid() == parent:
        await anyio.sleep(0.05)
    os._exit(0)  # orphaned: the worker that drove this call is dead


def _most_in_flight(path: str) -> int:
    """The most ``work`` calls the shared log has shown in flight at once."""
    now = most = 0
    with open(path, encoding="utf-8") as f:
        for text in f:
            try:
                event = json.loads(text)["event"]
            except (ValueError, KeyError):  # a line another process is writing
                continue
            now += {"start": 1, "end": -1}.get(event, 0)
            most = max(most, now)
    return most


async def _overlap(name: str, ctx: Context) -> None:
    """Wait until the log has shown ``DASK_ECHO_OVERLAP`` calls in flight at once."""
    want = int(os.environ.get("DASK_ECHO_OVERLAP", "0"))
    path = os.environ.get("DASK_ECHO_LOG")
    if want < 2 or not path:
        return
    with anyio.move_on_after(float(os.environ.get("DASK_ECHO_OVERLAP_DEADLINE", "60"))):
        while _most_in_flight(path) < want:
            await anyio.sleep(0.01)
        return
    _log("alone", name, ctx)


@server.tool()
async def work(name: str, ctx: Context, seconds: float = 0.0) -> dict[str, Any]:
    """Log, hold if asked, sleep ``seconds``, log again, return who did it."""
    _log("start", name, ctx)
    await _hold(name)
    await _overlap(name, ctx)
    if seconds:
        await anyio.sleep(seconds)
    _log("end", name, ctx)
    return {
        "name": name,
        "done": f"{name}!",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "server": os.environ.get("DASK_ECHO_NAME", ""),
    }


@server.tool()
async def noop() -> dict[str, Any]:
    """Nothing: the benchmark's per-call overhead."""
    return {"ok": True}


@server.tool()
async def progress(n: int, ctx: Context) -> dict[str, Any]:
    """Report progress ``n`` times, then return."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, message=f"step {i + 1}")
    return {"n": n}


@server.tool()
async def fail(retryable: bool = False) -> CallToolResult:
    """An ``is_error`` result; ``retryable`` marks it in the result ``_meta``."""
    meta = {"io.plansmith/retryable": True} if retryable else None
    return CallToolResult(
        content=[TextContent(type="text", text="it failed")], is_error=True, _meta=meta
    )


if __name__ == "__main__":
    server.run()
