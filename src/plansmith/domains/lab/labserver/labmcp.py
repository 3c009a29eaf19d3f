"""The MCP face of ``plansmith-lab`` (mcp 1.x FastMCP): one tool per entry of ``labtools``.

Each tool forwards its validated arguments, with the idempotency key from the
request ``_meta`` (``io.plansmith/idempotency-key``), to a robot: the one in this
process (``Local``; also in the robot process, which serves the sessions that
role servers hand over, ``serve_handed_over``), or the shared robot process
(``labhub.Hub``). A refused call becomes an ``isError`` result that carries the
simulator's message. stdio is read and written on the event loop when it is a
pipe or socket (mcp 1.9.4's ``stdio_server`` would use a worker thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from labhub import is_stream
from labtools import ToolSpec, tools_for
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations

__all__ = ["IDEMPOTENCY_KEY", "Robot", "Local", "build", "serve", "serve_handed_over"]

IDEMPOTENCY_KEY = "io.plansmith/idempotency-key"
_READ_ONLY = {"get_deck_state", "get_run_log"}


class Robot(Protocol):
    """Runs one tool: ``(True, result JSON)`` or ``(False, why it was refused)``."""

    async def answer(
        self, tool: str, args: dict[str, Any], key: str | None
    ) -> tuple[bool, str]: ...


class Local:
    """The robot in this process (``labrobot.Robot``), called on the event loop's thread."""

    def __init__(self, robot: Any) -> None:
        self._robot = robot

    async def answer(self, tool: str, args: dict[str, Any], key: str | None) -> tuple[bool, str]:
        ok, text = self._robot.answer(tool, args, key)
        return bool(ok), str(text)


def _key(ctx: Context[Any, Any, Any]) -> str | None:
    meta = ctx.request_context.meta
    extra = (meta.model_extra or {}) if meta is not None else {}
    key = extra.get(IDEMPOTENCY_KEY)
    return key if isinstance(key, str) and key else None


def _handler(spec: ToolSpec, robot: Robot) -> Callable[..., Awaitable[str]]:
    async def handler(ctx: Context[Any, Any, Any], **arguments: Any) -> str:
        ok, text = await robot.answer(spec.name, arguments, _key(ctx))
        if not ok:
            raise ToolError(text)
        return text

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    params = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in spec.signature.parameters.values()
    ]
    handler.__signature__ = inspect.Signature([ctx_param, *params])  # type: ignore[attr-defined]
    handler.__name__ = spec.name
    handler.__doc__ = spec.description
    return handler


def build(role: str, robot: Robot) -> FastMCP:
    """The MCP server of one role (``movement``, ``liquid``, ``modules`` or ``all``)."""
    name = "plansmith-lab" if role == "all" else f"plansmith-lab-{role}"
    server = FastMCP(
        name,
        instructions=(
            "An Opentrons Flex on the Opentrons protocol simulator. Load modules, labware and "
            "pipettes first; refer to them by the names you gave (or by slot and mount)."
        ),
        log_level="ERROR",
    )
    for spec in tools_for(role):
        annotations = ToolAnnotations(
            readOnlyHint=spec.name in _READ_ONLY,
            destructiveHint=spec.name == "reset_robot",
            idempotentHint=spec.name in _READ_ONLY,
            openWorldHint=False,
        )
        server.add_tool(
            _handler(spec, robot),
            name=spec.name,
            description=spec.description,
            annotations=annotations,
        )
    return server


class _LinesIn:
    """The client's messages, line by line, read on the event loop (no worker thread)."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self._reader = reader
        self._transport = transport

    def close(self) -> None:
        self._transport.close()

    def __aiter__(self) -> _LinesIn:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8")


class _LinesOut:
    """Writes to the client on the event loop (no worker thread)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()


async def _pipes(fd_in: int, fd_out: int) -> tuple[_LinesIn, _LinesOut]:
    """``fd_in`` and ``fd_out`` (pipes or sockets, which this function now owns) as
    event-loop streams.

    mcp 1.9.4's ``stdio_server`` reads and writes through ``anyio.wrap_file``: every
    line read, write and flush is a hop to a worker thread and back (a dozen per
    tool call). Pipes can be read and written on the loop itself.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**26, loop=loop)
    reading, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
        os.fdopen(fd_in, "rb", buffering=0),
    )
    try:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop),
            os.fdopen(fd_out, "wb", buffering=0),
        )
    except BaseException:
        reading.close()
        raise
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return _LinesIn(reader, reading), _LinesOut(writer)


async def _run(server: FastMCP, lines_in: _LinesIn, lines_out: _LinesOut) -> None:
    async with stdio_server(lines_in, lines_out) as (read_stream, write_stream):  # type: ignore[arg-type]
        low = server._mcp_server  # what run_stdio_async runs, on our streams
        await low.run(read_stream, write_stream, low.create_initialization_options())


async def serve(server: FastMCP, on_exit: Callable[[], Awaitable[None]] | None = None) -> None:
    """Serve ``server`` on stdio until the client closes stdin, then run ``on_exit``."""
    try:
        stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
        if not (is_stream(stdin) and is_stream(stdout)):
            await server.run_stdio_async()
            return
        await _run(server, *await _pipes(os.dup(stdin), os.dup(stdout)))
    finally:
        if on_exit is not None:
            await on_exit()


async def serve_handed_over(
    server: FastMCP, fd_in: int, fd_out: int, control: socket.socket
) -> None:
    """Serve ``server`` on a client's stdio that a facade handed over (``labhub.hand_over``)
    until the client closes it, or until ``control`` (the facade's connection) closes."""
    ends: list[Any] = []
    try:
        lines_in, lines_out = await _pipes(fd_in, fd_out)
        ends = [lines_in, lines_out]
        fd_in = fd_out = -1
        async with anyio.create_task_group() as tasks:

            async def watch() -> None:
                await anyio.wait_socket_readable(control)  # EOF: the facade is gone
                tasks.cancel_scope.cancel()

            tasks.start_soon(watch)
            await _run(server, lines_in, lines_out)
            tasks.cancel_scope.cancel()
    finally:
        for end in ends:
            end.close()
        for fd in (fd_in, fd_out):
            if fd >= 0:
                with contextlib.suppress(OSError):  # _pipes may have closed it already
                    os.close(fd)
