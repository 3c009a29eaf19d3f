"""A small MCP server for plansmith's tests, built with the SDK (mcp 2.x ``MCPServer``).

Tools: ``echo`` (structured), ``echo_text`` (text only), ``work`` (records each call and
honours the idempotency key), ``sleep``, ``fail`` (an ``is_error`` result, optionally
marked retryable), ``flaky`` (fails its first N calls per key), ``malformed`` (text
that is not JSON), ``die`` (the process exits mid-call), ``progress``.

Environment: ``COUNTER_LOG`` (a file that gets one JSON line per call of ``work``,
``flaky`` and ``die``: tool, key, arguments); ``COUNTER_DIE_AT_START=1`` (exit before
serving: a server that dies at start-up); ``COUNTER_PID_FILE`` (write the process id
there); ``COUNTER_STARTS`` (a file that gets a line with the process id at each
start); ``COUNTER_DIE_ONCE`` (a file: ``die`` exits only when this file does not exist
yet, and creates it, so a restarted server succeeds); ``COUNTER_HOLD_AFTER=N`` (the
calls of ``work`` after this process's N-th are logged, then never return: a run cannot
finish before a test kills its engine) with
``COUNTER_HOLD_ONCE`` (a file: the first held call creates it, which tells the test that
a call is held; a server that finds it already there holds nothing, so a restarted server
serves every call) and ``COUNTER_KILL_HELD=K`` (once K calls are held, the server kills
itself with SIGKILL: a crash with those K calls in flight); ``COUNTER_ECHO_REFUSES=A|B``
(``echo`` answers a tool error for those values: a cause a person can fix);
``COUNTER_START_GATE=FILE`` (a start waits, before it serves, until FILE exists: a slow
start-up that the test ends) with ``COUNTER_GATE_FROM=N`` (only the N-th start and later
wait, counted in ``COUNTER_STARTS``; default 1); ``COUNTER_EXITED=FILE`` (written when
the server ends by itself, its stdin closed: not when it is killed).

Usage: ``python counter_server.py`` (stdio), ``python counter_server.py http PORT``
(streamable HTTP at /mcp) or ``python counter_server.py sse PORT`` (HTTP+SSE at /sse).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

KEY = "io.plansmith/idempotency-key"

server = MCPServer("counter", version="1.0", log_level="WARNING")
_results: dict[str, dict[str, Any]] = {}
_failures: dict[str, int] = {}


class _Hold:
    """For ``COUNTER_HOLD_AFTER``: this process's calls of ``work`` so far, and whether it
    holds (decided at its first call past the limit)."""

    calls = 0
    holding: bool | None = None
    held = 0


def _key(ctx: Context) -> str | None:
    meta = ctx.request_context.meta or {}
    value = meta.get(KEY)
    return value if isinstance(value, str) else None


def _log(tool: str, key: str | None, args: dict[str, Any]) -> None:
    path = os.environ.get("COUNTER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "key": key, "args": args}) + "\n")
            f.flush()


async def _hold_if_asked() -> None:
    """Never return, for the calls of ``work`` after the ``COUNTER_HOLD_AFTER``-th."""
    after = os.environ.get("COUNTER_HOLD_AFTER")
    if after is None:
        return
    _Hold.calls += 1
    if _Hold.calls <= int(after):
        return
    if _Hold.holding is None:
        marker = os.environ.get("COUNTER_HOLD_ONCE")
        _Hold.holding = marker is None or not os.path.exists(marker)
        if marker is not None and _Hold.holding:
            with open(marker, "w", encoding="utf-8") as f:
                f.write("held\n")
    if _Hold.holding:
        _Hold.held += 1
        if _Hold.held == int(os.environ.get("COUNTER_KILL_HELD", "0")):
            os.kill(os.getpid(), signal.SIGKILL)
        await anyio.sleep_forever()


@server.tool()
async def echo(x: Any) -> dict[str, Any]:
    """Return ``{"value": x}``; a tool error for the values ``COUNTER_ECHO_REFUSES`` lists."""
    refused = os.environ.get("COUNTER_ECHO_REFUSES")
    if refused and str(x) in refused.split("|"):
        raise ToolError(f"echo refuses {x!r} (COUNTER_ECHO_REFUSES)")
    return {"value": x}


@server.tool(structured_output=False)
async def echo_text(text: str) -> str:
    """Return ``text`` as text content."""
    return text


@server.tool()
async def work(name: str, ctx: Context, cost: int = 1) -> dict[str, Any]:
    """Do some work once per idempotency key: a repeated key returns the first result."""
    key = _key(ctx)
    _log("work", key, {"name": name, "cost": cost})
    await _hold_if_asked()
    if key is not None and key in _results:
        return _results[key]
    result = {"name": name, "done": f"{name}!", "cost": cost, "key": key}
    if key is not None:
        _results[key] = result
    return result


@server.tool()
def block(seconds: float) -> dict[str, Any]:
    """Sleep without yielding (a server busy in one call): stdin's end goes unseen."""
    _log("block", None, {"seconds": seconds})
    time.sleep(seconds)
    return {"slept": seconds}


@server.tool()
async def wait_for_file(path: str) -> dict[str, Any]:
    """Return once the file ``path`` exists (a test opens this gate when it is ready)."""
    _log("wait_for_file", None, {"path": path})
    while not os.path.exists(path):
        await anyio.sleep(0.01)
    return {"slept": 0}


@server.tool()
async def sleep(seconds: float) -> dict[str, Any]:
    """Sleep, then return the seconds slept."""
    _log("sleep", None, {"seconds": seconds})
    await anyio.sleep(seconds)
    return {"slept": seconds}


@server.tool()
async def fail(message: str = "boom", retryable: bool = False) -> CallToolResult:
    """An ``is_error`` result; ``retryable`` marks it in the result ``_meta``."""
    meta = {"io.plansmith/retryable": True} if retryable else None
    return CallToolResult(
        content=[TextContent(type="text", text=message)], is_error=True, _meta=meta
    )


@server.tool()
async def flaky(name: str, fails: int, ctx: Context) -> CallToolResult:
    """Fail (marked retryable) the first ``fails`` calls for a key, then succeed."""
    key = _key(ctx) or name
    _log("flaky", key, {"name": name, "fails": fails})
    seen = _failures.get(key, 0)
    if seen < fails:
        _failures[key] = seen + 1
        return CallToolResult(
            content=[TextContent(type="text", text=f"transient failure {seen + 1} of {fails}")],
            is_error=True,
            _meta={"io.plansmith/retryable": True},
        )
    result = {"name": name, "attempts": seen + 1}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(result))], structured_content=result
    )


@server.tool()
async def refuse(reason: str = "not allowed") -> dict[str, Any]:
    """A tool error raised as ``ToolError`` (``is_error``, not retryable)."""
    raise ToolError(reason)


@server.tool(structured_output=False)
async def malformed() -> str:
    """Text that is not JSON."""
    return "this is {not json"


@server.tool()
async def die(ctx: Context) -> dict[str, Any]:
    """Exit the process in the middle of the call (once, when COUNTER_DIE_ONCE is set)."""
    _log("die", _key(ctx), {})
    marker = os.environ.get("COUNTER_DIE_ONCE")
    if marker is None or not os.path.exists(marker):
        if marker is not None:
            with open(marker, "w", encoding="utf-8") as f:
                f.write("died\n")
        os._exit(17)
    return {"survived": True}


@server.tool()
async def progress(n: int, ctx: Context) -> dict[str, Any]:
    """Report progress ``n`` times, then return."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, message=f"step {i + 1}")
    return {"n": n}


def _wait_at_gate(starts: str | None) -> None:
    """For ``COUNTER_START_GATE``: wait until its file exists (from the ``COUNTER_GATE_FROM``-th
    start on)."""
    gate = os.environ.get("COUNTER_START_GATE")
    if not gate:
        return
    if starts:
        with open(starts, encoding="utf-8") as f:
            count = len(f.read().splitlines())
        if count < int(os.environ.get("COUNTER_GATE_FROM", "1")):
            return
    while not os.path.exists(gate):
        time.sleep(0.01)


def main() -> None:
    pid_file = os.environ.get("COUNTER_PID_FILE")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
    starts = os.environ.get("COUNTER_STARTS")
    if starts:  # one line per start: a test counts them
        with open(starts, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    _wait_at_gate(starts)
    for line in filter(None, os.environ.get("COUNTER_STDERR", "").split("|")):
        sys.stderr.write(line + "\n")  # lines on its error output at start-up, as asked
        sys.stderr.flush()
    if os.environ.get("COUNTER_DIE_AT_START") == "1":
        sys.stderr.write("counter: dying at start-up as asked\n")
        sys.exit(3)
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["sse"]:  # the older HTTP+SSE transport, at /sse
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
    exited = os.environ.get("COUNTER_EXITED")
    if exited:  # it saw its stdin close and ended by itself (not killed)
        with open(exited, "w", encoding="utf-8") as f:
            f.write("exited\n")


if __name__ == "__main__":
    main()
