"""The chaos suite's MCP server (mcp 2.x ``MCPServer``, stdio): the tools of the chaos
domain, a log of every call with its idempotency key, and faults on demand.

Tools (their answers: ``values.py``): ``fetch(name)`` -> ``{"data"}``, ``transform(name,
data)`` -> ``{"value"}``, ``combine(name, left, right)`` -> ``{"digest"}``, ``report(name,
parts)`` -> ``{"summary"}``; each declares its outputSchema and takes a little time.

Every call appends one JSON line to ``CHAOS_LOG`` before the tool does anything, written
with one ``write`` (O_APPEND) and fsynced: the server, tool, arguments, the idempotency
key of the request's ``_meta``, the process id and its parent's (the engine that started
it), the time, whether the key's result was stored already, the fault the call does and
the keys of the other calls in flight. A start record (``"event": "start"``) is logged
when the process starts. The server honours the key: a successful result is stored in
``CHAOS_STATE`` (one file per tool and key, written before the answer) and a repeated key
gets it back, also from a restarted server.

Environment:

- ``CHAOS_NAME``: the server's name in the log (``alpha``, ``beta``).
- ``CHAOS_LOG``, ``CHAOS_STATE``: the call log and the result store (none: not kept).
- ``CHAOS_DELAY_MS=LO-HI``: each call sleeps a random time in that range (default 5-100).
- ``CHAOS_START_DELAY=S``: sleep S seconds before serving (a slow start-up, which widens
  the window in which an engine is killed while its servers start).
- ``CHAOS_FAULT=KIND`` with ``CHAOS_FAULT_AT=TOOL:NAME`` (the call of TOOL whose ``name``
  argument is NAME) and ``CHAOS_FAULT_ONCE=FILE`` (the fault fires only while FILE does
  not exist, and creates it: once per run, across restarts). KIND is one of

  ``kill``       the process SIGKILLs itself in the middle of the call
  ``hang``       the call never answers (the server serves the others)
  ``stall``      the whole process stops (SIGSTOP): no call is answered again
  ``utf8``       the answer's line holds the byte 0xff (not UTF-8), written at once when
                 another call is in flight (else once one is, up to 1 s): the answers of
                 the calls in flight then come after it
  ``schema``     structured content that violates the tool's outputSchema
  ``is_error``   an ``isError`` result
  ``huge``       a right answer of about ``CHAOS_HUGE_MB`` MB (default 20)
  ``deep``       structured content nested ``CHAOS_DEEP`` levels deep (default 5000)

The raw answers (``utf8``, ``schema``, ``deep``) are written on the transport's stdout by
the server itself: the SDK writes its lines into a pipe that a relay thread copies to the
real stdout a whole line at a time, under the lock the raw answers take too, so that no
line is torn. After a raw answer the call waits (cancelled by the client or at exit), so
that the SDK sends no second answer.

Usage: ``python server.py`` (stdio).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
import values

KEY = "io.plansmith/idempotency-key"
NAME = os.environ.get("CHAOS_NAME", "chaos")

server = MCPServer(f"chaos-{NAME}", version="1.0", log_level="WARNING")


class Data(BaseModel):
    data: str


class Value(BaseModel):
    value: str


class Digest(BaseModel):
    digest: str


class Summary(BaseModel):
    summary: str


class _Wire:
    """The real stdout (a duplicate of fd 1 taken before the SDK claims it) and the lock
    that keeps its lines whole."""

    fd = -1
    lock = threading.Lock()

    @classmethod
    def write_line(cls, line: bytes) -> None:
        with cls.lock:
            view = memoryview(line + b"\n")
            while view:
                view = view[os.write(cls.fd, view) :]


def _relay(source: int) -> None:
    """Copy the SDK's lines from the pipe to the real stdout, each one whole."""
    with os.fdopen(source, "rb") as lines:
        for line in lines:
            _Wire.write_line(line.rstrip(b"\n"))


def _take_stdout() -> None:
    """Put a pipe on fd 1 for the SDK, with the relay copying it to the real stdout."""
    _Wire.fd = os.dup(1)
    read, write = os.pipe()
    os.dup2(write, 1)
    os.close(write)
    threading.Thread(target=_relay, args=(read,), daemon=True).start()


_in_flight: dict[str, str] = {}  # request id: idempotency key, of the calls not answered yet


def _append(record: dict[str, Any]) -> None:
    path = os.environ.get("CHAOS_LOG")
    if not path:
        return
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _store_path(tool: str, key: str) -> Path | None:
    state = os.environ.get("CHAOS_STATE")
    if not state:
        return None
    return Path(state) / f"{tool}-{key.replace('/', '_')}.json"


def _stored(tool: str, key: str | None) -> dict[str, Any] | None:
    path = _store_path(tool, key) if key else None
    if path is None or not path.is_file():
        return None
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def _store(tool: str, key: str | None, result: dict[str, Any]) -> None:
    path = _store_path(tool, key) if key else None
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def _fault_for(tool: str, name: str) -> str | None:
    """The fault this call does: CHAOS_FAULT when CHAOS_FAULT_AT names it and the fault
    has not fired yet (its CHAOS_FAULT_ONCE file is made here, atomically)."""
    kind = os.environ.get("CHAOS_FAULT")
    if not kind or os.environ.get("CHAOS_FAULT_AT") != f"{tool}:{name}":
        return None
    once = os.environ.get("CHAOS_FAULT_ONCE")
    if once:
        try:
            os.close(os.open(once, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            return None
    return kind


def _answer_raw(request_id: Any, result: bytes) -> None:
    """Answer the request ``request_id`` with the JSON object ``result`` (its members:
    without braces), written as is."""
    head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{{"resultType":"complete",'
    _Wire.write_line(head.encode() + result + b"}}")


async def _fault(kind: str, ctx: Context, result: dict[str, Any]) -> CallToolResult | None:
    """Do the fault ``kind``; the result to answer with, or None to answer ``result``."""
    request_id = ctx.request_context.request_id
    text = json.dumps([{"type": "text", "text": "chaos"}]).encode()
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "stall":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif kind == "hang":
        await anyio.sleep_forever()
    elif kind == "is_error":
        message = "chaos: this call fails with isError, as asked"
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
    elif kind == "huge":
        pad = "x" * (int(float(os.environ.get("CHAOS_HUGE_MB", "20")) * 1_000_000))
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result))],
            structured_content={**result, "pad": pad},
        )
    elif kind in ("utf8", "schema", "deep"):
        if kind == "utf8":
            with anyio.move_on_after(1.0):
                while len(_in_flight) < 2:
                    await anyio.sleep(0.002)
            others = sorted(k for r, k in _in_flight.items() if r != str(request_id))
            _append({"event": "inject", "kind": kind, "server": NAME, "others": others})
            raw = b'"content":[{"type":"text","text":"caf\xff"}],"structuredContent":'
            _answer_raw(request_id, raw + json.dumps(result).encode())
        elif kind == "schema":  # every field of the output schemas is a string
            wrong = dict.fromkeys(result, 42)
            _answer_raw(
                request_id,
                b'"content":' + text + b',"structuredContent":' + json.dumps(wrong).encode(),
            )
        else:
            depth = int(os.environ.get("CHAOS_DEEP", "5000"))
            nested = b'{"k":' * depth + b"1" + b"}" * depth
            _answer_raw(
                request_id, b'"content":' + text + b',"structuredContent":{"v":' + nested + b"}"
            )
        await anyio.sleep_forever()  # the SDK sends no second answer
    return None


async def _call(
    tool: str, name: str, arguments: dict[str, Any], ctx: Context, result: dict[str, Any]
) -> CallToolResult:
    """Log the call, sleep a little, do its fault if any, keep and return ``result``."""
    meta = ctx.request_context.meta or {}
    key = meta.get(KEY)
    key = key if isinstance(key, str) else None
    request_id = str(ctx.request_context.request_id)
    stored = _stored(tool, key)
    fault = _fault_for(tool, name)
    _in_flight[request_id] = key or ""
    try:
        _append(
            {
                "event": "call",
                "server": NAME,
                "tool": tool,
                "args": arguments,
                "key": key,
                "pid": os.getpid(),
                "ppid": os.getppid(),
                "time": time.time(),
                "stored": stored is not None,
                "fault": fault,
                "in_flight": sorted(k for r, k in _in_flight.items() if r != request_id),
            }
        )
        if fault != "utf8":  # the bad answer goes at once, while the others sleep
            low, _, high = os.environ.get("CHAOS_DELAY_MS", "5-100").partition("-")
            await anyio.sleep(random.uniform(float(low), float(high or low)) / 1000)
        if stored is not None:
            result = stored
        if fault is not None:
            answer = await _fault(fault, ctx, result)
            if answer is not None:
                return answer
        _store(tool, key, result)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result))], structured_content=result
        )
    finally:
        _in_flight.pop(request_id, None)


@server.tool()
async def fetch(name: str, ctx: Context) -> Annotated[CallToolResult, Data]:
    """The data of ``name``."""
    return await _call("fetch", name, {"name": name}, ctx, {"data": values.fetch(name)})


@server.tool()
async def transform(name: str, data: str, ctx: Context) -> Annotated[CallToolResult, Value]:
    """The value made of ``name``'s data."""
    result = {"value": values.transform(name, data)}
    return await _call("transform", name, {"name": name, "data": data}, ctx, result)


@server.tool()
async def combine(
    name: str, left: str, right: str, ctx: Context
) -> Annotated[CallToolResult, Digest]:
    """The digest of two values."""
    result = {"digest": values.combine(name, left, right)}
    return await _call("combine", name, {"name": name, "left": left, "right": right}, ctx, result)


@server.tool()
async def report(name: str, parts: list[str], ctx: Context) -> Annotated[CallToolResult, Summary]:
    """The summary of every join's digest."""
    result = {"summary": values.report(name, parts)}
    return await _call("report", name, {"name": name, "parts": parts}, ctx, result)


def main() -> None:
    _append(
        {
            "event": "start",
            "server": NAME,
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "time": time.time(),
        }
    )
    delay = float(os.environ.get("CHAOS_START_DELAY", "0"))
    if delay > 0:
        time.sleep(delay)
    _take_stdout()
    with contextlib.suppress(KeyboardInterrupt):
        server.run()


if __name__ == "__main__":
    main()
