"""The server pool: one session per server, started in parallel, restarted when it dies.

Each server's session lives in its own supervisor task (an anyio cancel scope
must be left by the task that entered it). Calls from any task share the
session; a limiter bounds the calls in flight per server. A call that finds
the connection lost restarts the server (with backoff, at most
``restart_limit`` times) and reports ``transport_lost`` so the runner's retry
rule applies. This is the only module, with its siblings, that imports ``mcp``.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, TextIO
from urllib.parse import urlsplit

import anyio
import httpx2
from anyio.abc import TaskGroup
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    TextContent,
)
from pydantic import TypeAdapter

from plansmith.binding import ToolCatalog, ToolSpec
from plansmith.errors import ExecutionError, ServerStartError, ToolCallError
from plansmith.execution import (
    IDEMPOTENCY_META_KEY,
    RETRYABLE_META_KEY,
    ErrorClass,
    ProgressFn,
    ToolCall,
    ToolResult,
    finite_json,
)
from plansmith.servers._config import (
    HttpServer,
    InProcessServer,
    ServerConfig,
    ServersConfig,
    StdioServer,
)
from plansmith.servers._errlines import NamedErrlog
from plansmith.servers._http_status import UNAVAILABLE, HttpErrors
from plansmith.servers._output_check import OutputChecks
from plansmith.servers._sdk_logging import quiet_sdk_tracebacks
from plansmith.servers._unreadable import answer_unreadable

__all__ = ["ServerPool", "to_tool_result"]

_NONE: Mapping[str, str] = MappingProxyType({})


class _Slots:
    """A limit on calls in flight that costs nothing while a slot is free.

    ``anyio.CapacityLimiter`` yields to the event loop on every acquire and
    release (two loop turns per call); this one only waits when the limit is
    reached, and hands a released slot straight to the oldest waiter.
    """

    __slots__ = ("free", "waiters")

    def __init__(self, total: int) -> None:
        self.free = total
        self.waiters: deque[anyio.Event] = deque()

    def try_acquire(self) -> bool:
        """Take a free slot at once (no await: the fast path of ``acquire``)."""
        if self.free > 0 and not self.waiters:
            self.free -= 1
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        turn = anyio.Event()
        self.waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():  # the slot was handed over as we were cancelled
                self.release()
            else:
                self.waiters.remove(turn)
            raise

    def release(self) -> None:
        if self.waiters:
            self.waiters.popleft().set()
        else:
            self.free += 1


@dataclass(slots=True)
class _Conn:
    config: ServerConfig
    limiter: _Slots
    client: Client | None = None
    tools: tuple[ToolSpec, ...] = ()
    checks: OutputChecks = field(default_factory=lambda: OutputChecks(()))
    error: BaseException | None = None
    generation: int = 0
    restarts: int = 0
    http_errors: HttpErrors = field(default_factory=HttpErrors)
    ready: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    errpipe: NamedErrlog | None = None  # a stdio server's stderr, while it runs


class ServerPool:
    """``async with ServerPool(config) as pool``: start servers, call tools, shut down."""

    def __init__(
        self,
        config: ServersConfig,
        *,
        errlog: TextIO | None = None,
        start_timeout: float = 60.0,
        restart_limit: int = 3,
        backoff_base: float = 0.1,
        mode: str = "auto",
    ) -> None:
        self.config = config
        self.errlog = errlog
        self.start_timeout = start_timeout
        self.restart_limit = restart_limit
        self.backoff_base = backoff_base
        self.mode = mode
        self._conns: dict[str, _Conn] = {}
        self._tg: TaskGroup | None = None
        self._start_lock = anyio.Lock()
        self._errpipes: list[NamedErrlog] = []
        quiet_sdk_tracebacks()  # a server's stray stdout line: one line, not a traceback

    async def __aenter__(self) -> ServerPool:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        assert self._tg is not None
        # The supervisors have ended; the body's own exception propagates as it is.
        await self._tg.__aexit__(None, None, None)
        return None

    async def aclose(self) -> None:
        """Close every session; stdio servers get stdin closed, then SIGTERM, then SIGKILL."""
        for conn in self._conns.values():
            conn.stop.set()
        with anyio.CancelScope(shield=True):
            for conn in self._conns.values():
                await conn.closed.wait()
            pipes, self._errpipes = self._errpipes, []
            if pipes:  # the servers' last lines reach the log before its owner closes it
                await anyio.to_thread.run_sync(_join_all, pipes, _ERRLOG_DRAIN)

    # -- starting -------------------------------------------------------------------------

    async def start(self, names: tuple[str, ...] | None = None) -> ToolCatalog:
        """Start ``names`` (default: all) in parallel; list their tools into the catalog.

        Raises ``ServerStartError`` naming every server that failed.
        """
        if self._tg is None:
            raise ExecutionError(
                "the server pool is not open",
                hint="use it as `async with ServerPool(config) as pool:`",
            )
        wanted = names if names is not None else self.config.names
        unknown = [n for n in wanted if self.config.get(n) is None]
        if unknown:
            raise ServerStartError(
                f"no server {', '.join(map(repr, unknown))} in the servers config",
                hint=f"servers are: {', '.join(self.config.names) or 'none'}",
            )
        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(self._ensure_started, name)
        failed = [(n, self._conns[n].error) for n in wanted if self._conns[n].client is None]
        if failed:
            lines = "; ".join(f"{n}: {_describe(e)}" for n, e in failed)
            first = self.config.get(failed[0][0])
            raise ServerStartError(
                f"server(s) did not start: {lines}",
                location=first.loc if first is not None else None,
                hint=_start_hint([(self.config.get(n), e) for n, e in failed], self.errlog),
            )
        return self.catalog()

    def catalog(self) -> ToolCatalog:
        return ToolCatalog(
            tuple((n, c.tools) for n, c in self._conns.items() if c.client is not None)
        )

    async def _ensure_started(self, name: str) -> _Conn:
        conn = self._conns.get(name)
        if conn is not None and conn.ready.is_set():
            return conn  # the common case: no lock on the hot path
        async with self._start_lock:
            conn = self._conns.get(name)
            if conn is None:
                if self._tg is None:  # nothing made yet: aclose has nothing to wait for
                    raise ExecutionError(
                        "the server pool is not open",
                        hint="use it as `async with ServerPool(config) as pool:`",
                    )
                config = self.config.get(name)
                assert config is not None
                conn = _Conn(config, _Slots(max(1, config.max_in_flight)))
                self._conns[name] = conn
                self._spawn(conn)
        await conn.ready.wait()
        return conn

    def _spawn(self, conn: _Conn) -> None:
        assert self._tg is not None, "use `async with ServerPool(...)`"
        conn.ready, conn.stop, conn.closed = anyio.Event(), anyio.Event(), anyio.Event()
        conn.client, conn.error = None, None
        self._tg.start_soon(self._supervise, conn)

    def _transport(self, conn: _Conn) -> tuple[Any, AbstractAsyncContextManager[Any] | None]:
        config = conn.config
        if isinstance(config, InProcessServer):
            return config.server, None
        if isinstance(config, StdioServer):
            env = dict(os.environ) if config.inherit_env else {}
            env.update(config.env)
            command, args = _guarded(_program(config.command, env), list(config.args), env, config)
            params = StdioServerParameters(command=command, args=args, env=env, cwd=config.cwd)
            # Bytes that are not UTF-8 are read as lone surrogates (not refused by the SDK's
            # "strict" decoder, whose error ends its reader and leaves every call waiting):
            # the line then fails to parse, and fails its own call (_unreadable).
            params = params.model_copy(update={"encoding_error_handler": "surrogateescape"})
            # a response line the SDK cannot read fails its call (not a hang): _unreadable
            # its stderr: a pipe whose lines reach errlog as "[name] line" (_errlines)
            errpipe = NamedErrlog(config.name, self.errlog or _stderr())
            conn.errpipe = errpipe
            self._errpipes.append(errpipe)
            return answer_unreadable(stdio_client(params, errlog=errpipe.child_end)), None
        assert isinstance(config, HttpServer)
        if config.sse:
            sse = sse_client(config.url, headers=dict(config.headers), timeout=30)
            return answer_unreadable(sse), None
        http = httpx2.AsyncClient(
            headers=dict(config.headers),
            timeout=httpx2.Timeout(30, read=300),
            event_hooks={"response": [conn.http_errors]},  # the status the SDK drops
        )
        return streamable_http_client(config.url, http_client=http), http

    async def _supervise(self, conn: _Conn) -> None:
        try:
            transport, http = self._transport(conn)
            with anyio.CancelScope(deadline=anyio.current_time() + self.start_timeout) as scope:
                async with AsyncExitStack() as stack:
                    if http is not None:
                        await stack.enter_async_context(http)
                    client = await stack.enter_async_context(Client(transport, mode=self.mode))
                    listed = await client.list_tools()
                    tools = list(listed.tools)
                    while listed.next_cursor:
                        listed = await client.list_tools(cursor=listed.next_cursor)
                        tools.extend(listed.tools)
                    conn.tools = tuple(
                        ToolSpec(t.name, dict(t.input_schema), t.output_schema, t.description or "")
                        for t in tools
                    )
                    conn.checks = OutputChecks(conn.tools)
                    scope.deadline = math.inf  # started: the session lives until stop
                    conn.client = client
                    conn.generation += 1
                    conn.ready.set()
                    await conn.stop.wait()
            if scope.cancelled_caught and conn.client is None:
                conn.error = TimeoutError(f"no answer within {self.start_timeout:g} s")
        except Exception as error:  # a start-up failure, reported by start()/call()
            conn.error = error
        finally:
            if conn.errpipe is not None:  # the process has ended: the copier reads to its end
                conn.errpipe.close_child_end()
                conn.errpipe = None
            conn.client = None
            conn.ready.set()
            conn.closed.set()

    async def _restart(self, conn: _Conn, seen_generation: int) -> bool:
        """Restart a dead server once per death (callers that saw the same one wait).

        False once the server was restarted ``restart_limit`` times in a row without a
        call that succeeded in between (a call that succeeds starts the count again): it
        is given up on, and the calls that find it dead fail for good (``final``)."""
        async with conn.lock:
            if conn.generation != seen_generation:  # someone else restarted it
                await conn.ready.wait()
                return conn.client is not None or conn.restarts < self.restart_limit
            if conn.restarts >= self.restart_limit:
                return False
            conn.restarts += 1
            conn.stop.set()
            with anyio.CancelScope(shield=True):
                await conn.closed.wait()
            await anyio.sleep(self.backoff_base * (2 ** (conn.restarts - 1)))
            self._spawn(conn)
            await conn.ready.wait()
            return True

    # -- calling --------------------------------------------------------------------------

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
        """Call ``tool``; failures raise ``ToolCallError`` with their class.

        ``key`` goes into ``_meta`` as the idempotency key, beside ``meta``'s entries.
        """
        return await self.invoke(
            ToolCall(
                server, tool, arguments, key or "", on_progress=on_progress, meta=meta or _NONE
            )
        )

    async def invoke(self, call: ToolCall) -> ToolResult:
        """``call`` as one ``ToolCall`` (the runner's: ``McpInvoker`` hands it over as it
        is). Its arguments are sent as they are (the SDK copies them into its request);
        its key, when not empty, goes into ``_meta`` beside ``call.meta``'s entries."""
        server = call.server
        conn = self._conns.get(server)
        # a session (client) is only set once ``ready`` is: a live one skips the check
        if conn is None or (conn.client is None and not conn.ready.is_set()):
            if self.config.get(server) is None:
                raise ToolCallError(
                    ErrorClass.PROTOCOL_ERROR, f"no server {server!r} in the config"
                )
            conn = await self._ensure_started(server)
        if not conn.limiter.try_acquire():
            await conn.limiter.acquire()
        tool = call.tool
        try:
            client = conn.client
            if client is None:
                error_text = _describe(conn.error)
                alive = await self._lost(conn, conn.generation)  # start it again (bounded)
                message = f"server {server!r} is not running: {error_text}"
                raise self._dead(conn, message, alive, start_failed=True)
            generation = conn.generation
            meta = call.meta
            key = call.key
            sent: Any
            if meta:
                sent = dict(meta)
                if key:
                    sent[IDEMPOTENCY_META_KEY] = key
            else:
                sent = {IDEMPOTENCY_META_KEY: key} if key else None
            progress: Any = call.on_progress
            try:
                checks = conn.checks
                if checks.listed(tool):  # ``client.call_tool``, its output check compiled
                    result = await _send_call(client, checks, call, sent)
                    if not checks.passes(tool, result):
                        await client.session.validate_tool_result(tool, result)  # its error
                else:  # the SDK's whole path (it lists the tools again first)
                    result = await client.call_tool(
                        tool, call.arguments, progress_callback=progress, meta=sent
                    )
            except MCPError as error:
                if error.code == CONNECTION_CLOSED:
                    alive = await self._lost(conn, generation)
                    raise self._dead(conn, f"server {server!r}: connection lost", alive) from None
                if error.code == REQUEST_TIMEOUT:
                    raise ToolCallError(ErrorClass.TIMEOUT, f"{tool}: {error.message}") from None
                http = conn.http_errors.take() if error.code == INTERNAL_ERROR else None
                if http is not None:  # the SDK's stand-in for an HTTP error status
                    status, text = http
                    if status in UNAVAILABLE:
                        raise ToolCallError(
                            ErrorClass.TRANSPORT_LOST, f"server {server!r}: {text}"
                        ) from None
                    raise ToolCallError(ErrorClass.PROTOCOL_ERROR, f"{tool}: {text}") from None
                said = f"error {error.code}: {error.message}"
                if error.code == PARSE_ERROR:  # an answer unreadable (or a request): whose
                    said = f"server {server!r}: {said}"
                raise ToolCallError(ErrorClass.PROTOCOL_ERROR, f"{tool}: {said}") from None
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as error:
                alive = await self._lost(conn, generation)
                raise self._dead(conn, f"server {server!r}: {_describe(error)}", alive) from None
            except Exception as error:  # e.g. structured output that fails the outputSchema
                raise ToolCallError(
                    ErrorClass.PROTOCOL_ERROR, f"{tool}: {_describe(error)}"
                ) from None
        finally:
            conn.limiter.release()
        if conn.restarts:  # it answers again: its restarts are counted afresh
            conn.restarts = 0
        return to_tool_result(result)

    async def _lost(self, conn: _Conn, generation: int) -> bool:
        # Not shielded: a cancelled run must not wait for a slow restart. A restart cut
        # short leaves the server stopped, and the next call starts it again.
        return await self._restart(conn, generation)

    def _dead(
        self, conn: _Conn, message: str, alive: bool, *, start_failed: bool = False
    ) -> ToolCallError:
        """The ``transport_lost`` of a call that found its server dead. When its start
        failed, or once it is given up on (``alive`` False: a final error), the message
        says where its error output is."""
        if alive and not start_failed:
            return ToolCallError(ErrorClass.TRANSPORT_LOST, message)
        hint = _start_hint([(conn.config, conn.error)], self.errlog)
        if not alive:
            message += (
                f"; given up after {self.restart_limit} restart(s) in a row with no call"
                " that succeeded"
            )
        return ToolCallError(
            ErrorClass.TRANSPORT_LOST, f"{message} ({hint})", hint=hint, final=not alive
        )


def _stderr() -> TextIO:
    """Where a stdio server's error output goes by default: a stderr with a real file."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
    return sys.stderr


_ERRLOG_DRAIN = 2.0  # s: how long closing waits for the servers' last error lines
_GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_orphan_guard.py")


def _join_all(pipes: list[NamedErrlog], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for pipe in pipes:
        pipe.join(max(0.0, deadline - time.monotonic()))


def _guarded(
    program: str, args: list[str], env: Mapping[str, str], config: StdioServer
) -> tuple[str, list[str]]:
    """On Linux, ``program`` started through the orphan guard (``_orphan_guard.py``), so
    that the kernel kills it when the engine dies, SIGKILL included. A program that is
    not an executable file is started as it is, to fail as it would (no such program)."""
    if not sys.platform.startswith("linux") or not sys.executable or not os.path.isfile(_GUARD):
        return program, args
    if os.sep in program:
        found: str | None = os.path.join(config.cwd or "", program)
    else:
        found = shutil.which(program, path=env.get("PATH") or os.environ.get("PATH"))
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return program, args
    guard = [_GUARD, str(os.getpid()), os.path.abspath(found), program]
    return sys.executable, ["-I", "-S", *guard, *args]


def _program(command: str, env: Mapping[str, str]) -> str:
    """``command``, or, for a bare name that is not on the server's PATH, the program of
    that name beside this Python (its venv's ``bin``: ``plansmith-code``, ``plansmith-lab``
    and ``plansmith-bio`` of a plansmith whose venv is not activated)."""
    if os.sep in command or shutil.which(command, path=env.get("PATH") or os.environ.get("PATH")):
        return command
    beside = os.path.join(os.path.dirname(sys.executable), command)
    return beside if os.path.isfile(beside) and os.access(beside, os.X_OK) else command


def _start_hint(
    failed: list[tuple[ServerConfig | None, BaseException | None]], errlog: TextIO | None
) -> str:
    """What to do about servers that did not start, by their kind and error; a stdio
    server's error output is in ``errlog`` when that is a file (the run's servers.log)."""
    hints: list[str] = []
    logged = getattr(errlog, "name", None)
    for config, error in failed:
        if isinstance(config, StdioServer) and isinstance(error, FileNotFoundError):
            where = f" (or its cwd {config.cwd!r})" if config.cwd else ""
            hints.append(
                f"server {config.name!r}: no program {config.command!r}{where}: install it,"
                " or give its full path in the servers file"
            )
        elif isinstance(config, StdioServer) and isinstance(error, PermissionError):
            hints.append(
                f"server {config.name!r}: {config.command!r} may not be run: make it"
                " executable, or name the program that runs it as `command`"
            )
        elif isinstance(config, StdioServer):
            hints.append(
                f"see its error output in {logged}"
                if isinstance(logged, str) and not logged.startswith("<")
                else "see its error output above (on stderr), or run its command by hand"
            )
        elif isinstance(config, HttpServer):
            parts = urlsplit(config.url)  # no user, password or query: they may be secret
            host = parts.netloc.rpartition("@")[2]
            site = f"{parts.scheme}://{host}{parts.path}"
            over = "HTTP+SSE (type sse)" if config.sse else "streamable HTTP"
            hints.append(f"check that {site} is up and serves MCP over {over}")
    return "; ".join(dict.fromkeys(hints)) or "see the error of each server"


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in error.exceptions)
    if isinstance(error, MCPError):
        return f"{error.message} (code {error.code})"
    if isinstance(error, TimeoutError):
        return "timed out"
    return f"{type(error).__name__}: {error}"


#: a ``tools/call`` answer: the result, or a request for input (the SDK's own union)
_CALL_RESULTS: TypeAdapter[CallToolResult | InputRequiredResult] = TypeAdapter(
    CallToolResult | InputRequiredResult
)


async def _send_call(
    client: Client, checks: OutputChecks, call: ToolCall, meta: Any
) -> CallToolResult:
    """``client.call_tool`` without its output check (``checks`` does it): the same
    request through the session, ``meta`` as its ``_meta``. An answer that asks for
    input, and a call the server refuses for stale ``Mcp-Param`` headers
    (``HEADER_MISMATCH``: it ran nothing), go through ``client.call_tool`` again, which
    answers the one and lists the tools again for the other, as it would have done (the
    tool's checks are then the SDK's)."""
    tool, arguments = call.tool, call.arguments
    progress: Any = call.on_progress
    request = CallToolRequest(
        params=CallToolRequestParams(name=tool, arguments=arguments, _meta=meta)
    )
    try:
        result = await client.session.send_request(
            request, _CALL_RESULTS, progress_callback=progress
        )
        if type(result) is CallToolResult:
            return result
    except MCPError as error:
        if error.code != HEADER_MISMATCH:
            raise
        checks.forget(tool)
    return await client.call_tool(tool, arguments, progress_callback=progress, meta=meta)


def to_tool_result(result: CallToolResult) -> ToolResult:
    """The SDK's result as plansmith's: structured content, joined text, error flags."""
    content = result.content
    if len(content) == 1 and isinstance(content[0], TextContent):  # the usual case
        text = content[0].text
    else:
        text = "\n".join([c.text for c in content if isinstance(c, TextContent)])
    meta = result.meta
    structured = result.structured_content
    return ToolResult.of(
        # NaN and the infinities (the SDK's parser reads NaN, Infinity and 1e400 in a
        # server's line) as null: what the next tool would get, and what JSON can hold
        None if structured is None else finite_json(structured),
        text,
        bool(result.is_error),
        bool(meta.get(RETRYABLE_META_KEY)) if meta else False,
    )
