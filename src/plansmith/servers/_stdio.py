"""The pool's stdio transport: the MCP SDK's ``stdio_client`` with two things changed.

Why it exists: the SDK's reader (mcp 2.3.0, ``mcp/client/stdio.py``) splits
``(buffer + chunk).split("\\n")`` on every 64 KiB chunk it reads, which copies the line
read so far each time: one answer line of n bytes costs O(n² / 64 KiB) of the engine's
event loop (1, 5, 10, 20 MB: 0.03, 0.29, 0.76, 2.18 s; docs/benchmarks.md, Long answer
lines), and every other answer of that server waits behind it. Here:

- **Lines in linear time** (``_Lines``): a line's chunks are kept as they come, scanned
  once for a newline, and joined once, at its end. A line longer than ``max_line`` bytes
  is not kept: the request it answers (read from the line's start,
  ``_unreadable.response_id``) fails with a ``PARSE_ERROR`` that gives the limit, the
  rest of the line is skipped, and the lines after it are read as before. Bytes are
  decoded a line at a time with the parameters' encoding and error handler (the pool's:
  UTF-8 with ``surrogateescape``; a newline byte never occurs inside a UTF-8 character).
- **A stopped server closes promptly.** Closing sends SIGCONT to the server's process
  group as it closes the server's stdin (and again before SIGTERM): a server stopped by
  SIGSTOP sees neither its stdin close nor SIGTERM, so the SDK's shutdown waited out both
  of its 2 s graces before it sent SIGKILL.

Everything else is the SDK's, through its own helpers: the process start (a session of
its own, the SDK's inherited environment under the given one), the writer, and the
shutdown (stdin closed, a grace, SIGTERM to the process group, a grace, SIGKILL),
shielded and bounded. mcp is pinned (pyproject.toml): these helpers are checked against
that version by the tests of this module.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio
import anyio.lowlevel
from mcp.client._transport import TransportStreams
from mcp.client.stdio import (
    _KILL_REAP_TIMEOUT,
    _WRITER_FLUSH_TIMEOUT,
    PROCESS_TERMINATION_TIMEOUT,
    StdioServerParameters,
    _aclose_all,
    _close_pipe,
    _close_subprocess_transport,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _parse_line,
    _terminate_process_tree,
    _wait_for_process_exit,
    get_default_environment,
    logger,
)
from mcp.os.win32.utilities import ServerProcess, close_process_job
from mcp.shared.message import SessionMessage
from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError

from plansmith.servers._unreadable import response_id

__all__ = ["DEFAULT_MAX_ANSWER", "stdio_transport"]

#: bytes one line a server writes may hold (an answer with its JSON-RPC envelope)
DEFAULT_MAX_ANSWER = 64 * 1024 * 1024
_HEAD = 64 * 1024  # bytes of a line past the limit searched for the id of its request


class _Lines:
    """Splits a byte stream into lines in linear time: each chunk is searched for
    newlines once, and a line's pieces are joined once, at its end. ``feed`` gives what
    the session gets for each line that ended: a message, or an error as a value (the
    SDK's convention)."""

    __slots__ = ("encoding", "errors", "max_line", "parts", "size", "skipping")

    def __init__(self, max_line: int, encoding: str = "utf-8", errors: str = "strict") -> None:
        self.max_line = max_line
        self.encoding = encoding
        self.errors = errors
        self.parts: list[bytes] = []  # the line read so far, in pieces
        self.size = 0  # their length
        self.skipping = False  # in a line past the limit (its request was answered)

    def feed(self, chunk: bytes) -> list[SessionMessage | Exception]:
        items: list[SessionMessage | Exception] = []
        start = 0
        end = chunk.find(b"\n")
        while end >= 0:
            piece = chunk[start:end]
            if self.skipping:
                self.skipping = False
            elif self.size + len(piece) > self.max_line:
                items.append(self._too_long(piece))
            else:
                line = b"".join((*self.parts, piece)) if self.parts else piece
                items.append(self._parse(line))
            self.parts.clear()
            self.size = 0
            start = end + 1
            end = chunk.find(b"\n", start)
        if start < len(chunk) and not self.skipping:
            rest = chunk[start:] if start else chunk
            if self.size + len(rest) > self.max_line:
                items.append(self._too_long(rest))
                self.parts.clear()
                self.size = 0
                self.skipping = True
            else:
                self.parts.append(rest)
                self.size += len(rest)
        return items

    def _parse(self, line: bytes) -> SessionMessage | Exception:
        try:
            text = line.decode(self.encoding, self.errors)
        except ValueError as error:  # "strict": this line fails, not the reader
            return error
        return _parse_line(text)

    def _too_long(self, last: bytes) -> SessionMessage | Exception:
        """What stands for a line past ``max_line`` (``last``: its piece in hand): a
        ``PARSE_ERROR`` answering its request, or an error to log when it names none."""
        head = b"".join((*self.parts, last))[:_HEAD] if self.parts else last[:_HEAD]
        request = response_id(head.decode(self.encoding, "replace"))
        said = f"longer than the limit of {self.max_line} bytes for one answer"
        if request is None:
            return ValueError(f"a line from the server was skipped: {said}")
        error = ErrorData(code=PARSE_ERROR, message=f"the server's answer was not read: {said}")
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request, error=error))


def _resume(process: ServerProcess) -> None:
    """SIGCONT to the server's process group (its leader's pid: ``start_new_session``),
    so that a stopped server acts on its stdin's end, or on SIGTERM."""
    if sys.platform == "win32":  # pragma: no cover
        return
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGCONT)


async def _stop_server_process(process: ServerProcess) -> None:
    """The SDK's ``_stop_server_process``, with SIGCONT before each wait (``_resume``)."""
    assert process.stdin, "server process is spawned with pipes"
    assert process.stdout, "server process is spawned with pipes"
    await _close_pipe(process.stdin)
    _resume(process)
    if not await _wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT):
        _resume(process)
        await _terminate_process_tree(process)
        if not await _wait_for_process_exit(process, _KILL_REAP_TIMEOUT):
            logger.warning(
                "MCP server process %d is still alive after the kill escalation; abandoning it",
                process.pid,
            )
    close_process_job(process)
    await _close_pipe(process.stdout)
    _close_subprocess_transport(process)


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    max_line: int = DEFAULT_MAX_ANSWER,
) -> AsyncIterator[TransportStreams]:
    """``mcp.stdio_client(server, errlog)``, reading lines in linear time, each at most
    ``max_line`` bytes, and closing a stopped server promptly (module docstring)."""
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # The spawn succeeded; no awaits until the task group is entered (the SDK's rule).
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](
        0
    )
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout, "Opened process is missing stdout"
        lines = _Lines(max_line, server.encoding, server.encoding_error_handler)
        try:
            async with read_stream_writer:
                try:
                    async for chunk in process.stdout:
                        for item in lines.feed(chunk):
                            try:
                                await read_stream_writer.send(item)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone; only the drain remains
                finally:
                    await _drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed the stdout stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin, "Opened process is missing stdin"
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    json = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    data = (json + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # the server may still be alive: the session must see the connection end
            await read_stream_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # the reader drains: a server stuck writing can read again
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT) as flush_scope:
            await writer_done.wait()
        if flush_scope.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # every wait in it is bounded
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
