"""The server pool: one session per server, started in parallel, restarted when it dies.

Each server's session lives in its own supervisor task (an anyio cancel scope
must be left by the task that entered it). Calls from any task share the
session; a limiter bounds the calls in flight per server. A call that finds
the connection lost reports ``transport_lost`` at once, so the runner's retry
rule applies, and has the server restarted in the background (with backoff, at
most ``restart_limit`` times in a row); ``ready`` waits for a start or restart,
which ``TimeoutInvoker`` does before a call's clock starts. A server's tools are
listed when it starts (and restarts); a ``notifications/tools/list_changed`` marks
them stale, and the next ``start`` lists them again (``watch_tools`` also listens for
the change on a 2026-07-28 connection, where it comes only to a
``subscriptions/listen`` stream). This is the only module, with its siblings, that
imports ``mcp``.

(Over 500 lines: a server's start, supervision, background restart with backoff,
``ready``, calls and close all read and change one per-server state (its connection,
generation and start in progress), and its tests drive them together; the transports
(``_stdio``), the error lines (``_errlines``) and the warm pools (``_warm``) are apart
already.)
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import urlsplit

import anyio
import httpx2
from anyio.abc import TaskGroup
from mcp import Client, MCPError, StdioServerParameters
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
    ToolListChangedNotification,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from plansmith.binding import ToolCatalog, ToolSpec
from plansmith.errors import ExecutionError, ServerStartError, ToolCallError
from plansmith.execution import (
    IDEMPOTENCY_META_KEY,
    RETRYABLE_META_KEY,
    ErrorClass,
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
from plansmith.servers._invoker import CallByInvoke
from plansmith.servers._output_check import OutputChecks
from plansmith.servers._sdk_logging import quiet_sdk_tracebacks
from plansmith.servers._stdio import DEFAULT_MAX_ANSWER, stdio_transport
from plansmith.servers._unreadable import answer_unreadable

__all__ = ["ServerPool", "to_tool_result", "did_not_start", "not_configured"]


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
    errpipe: NamedErrlog | None = None  # a stdio server's stderr, while it runs
    stale: bool = False  # its tools changed (tools/list_changed) since they were listed
    starting: anyio.CancelScope | None = None  # its session's, until it has started
    #: how far its last start got: "start" (the process or connection), "initialize"
    #: (connected: the handshake), "tools" (initialised: tools/list) or "ready"
    phase: str = "start"


class ServerPool(CallByInvoke):
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
        watch_tools: bool = False,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER,
    ) -> None:
        self.config = config
        self.errlog = errlog
        self.start_timeout = start_timeout
        self.restart_limit = restart_limit
        self.backoff_base = backoff_base
        self.mode = mode
        self.watch_tools = watch_tools  # listen for tools/list_changed (a long-lived pool)
        self.max_answer_bytes = max_answer_bytes  # one line of a stdio server, at most
        self._closing = False
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
        # The supervisors have ended (they raise nothing). The body's own exception
        # propagates as it is (given to the group, it would come out in a group of its
        # own), but for a cancellation: one of the group's own scope ends here (raised
        # on, it would cancel whoever holds the pool), any other goes on.
        if isinstance(e, anyio.get_cancelled_exc_class()):
            return await self._tg.__aexit__(et, e, tb)
        await self._tg.__aexit__(None, None, None)
        return None

    async def aclose(self) -> None:
        """Close every session; stdio servers get stdin closed (and SIGCONT), then SIGTERM,
        then SIGKILL. A start or restart in progress is cancelled, not waited for."""
        self._closing = True
        for conn in self._conns.values():
            conn.stop.set()
            if conn.starting is not None:
                conn.starting.cancel()
        with anyio.CancelScope(shield=True):
            for conn in self._conns.values():
                await conn.closed.wait()
            pipes, self._errpipes = self._errpipes, []
            if pipes:  # the servers' last lines reach the log before its owner closes it
                await anyio.to_thread.run_sync(_join_all, pipes, _ERRLOG_DRAIN)

    # -- starting -------------------------------------------------------------------------

    async def start(self, names: tuple[str, ...] | None = None) -> ToolCatalog:
        """Start ``names`` (default: all) in parallel; list their tools into the catalog
        (again for a server that said its tools changed since they were listed).

        Raises ``ServerStartError`` naming every server that failed.
        """
        if self._tg is None:
            raise ExecutionError(
                "the server pool is not open",
                hint="use it as `async with ServerPool(config) as pool:`",
            )
        wanted = names if names is not None else self.config.names
        unknown = not_configured(self.config, wanted)
        if unknown is not None:
            raise unknown
        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(self._ensure_started, name)
        failed = [(c.config, c.error) for n in wanted if (c := self._conns[n]).client is None]
        if failed:
            raise did_not_start(failed, self.errlog)
        stale = [c for n in wanted if (c := self._conns[n]).stale]
        if stale:
            async with anyio.create_task_group() as tg:
                for conn in stale:
                    tg.start_soon(self._relist, conn)
        return self.catalog()

    def is_down(self, name: str) -> bool:
        """Whether server ``name`` was asked to start and is not running, nor starting
        (its start failed, or its pool gave up on it)."""
        conn = self._conns.get(name)
        return conn is not None and conn.ready.is_set() and conn.client is None

    def start_error(self, name: str) -> BaseException | None:
        """Why server ``name`` is not running (its start's or restart's error), if known."""
        conn = self._conns.get(name)
        return conn.error if conn is not None else None

    def phase(self, name: str) -> str:
        """How far server ``name``'s last start got: ``start`` (its process or connection
        was not made, or the handshake did not begin), ``tools`` (it answered
        ``initialize``; listing its tools did not end), or ``ready``."""
        conn = self._conns.get(name)
        return conn.phase if conn is not None else "start"

    def server_info(self, name: str) -> dict[str, str]:
        """What server ``name``'s session says of it: ``name``, ``version`` (when it gave
        them) and ``protocol`` (the version negotiated); empty when it is not running."""
        conn = self._conns.get(name)
        client = conn.client if conn is not None else None
        if client is None:
            return {}
        info = client.server_info
        said = {"name": info.name, "version": info.version} if info is not None else {}
        return {**{k: v for k, v in said.items() if v}, "protocol": client.protocol_version}

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
        while not conn.ready.is_set():  # a restart begun as it woke: wait for that one
            await conn.ready.wait()
        return conn

    def ready(self, call: ToolCall) -> Awaitable[object] | None:
        """None when ``call``'s server is up (nothing to await: the hot path); else what to
        await until its start or restart has ended, well or not (``invoke`` then says
        what is wrong). ``TimeoutInvoker`` awaits it before a call's clock starts, so a
        server's start-up never counts against a call's timeout."""
        conn = self._conns.get(call.server)
        if conn is not None and conn.ready.is_set():
            return None
        if self.config.get(call.server) is None:
            return None  # ``invoke`` says it is not in the config
        return self._ensure_started(call.server)

    def _spawn(self, conn: _Conn, after: anyio.Event | None = None, delay: float = 0.0) -> None:
        """Start ``conn``'s next session in the pool's task group, once ``after`` is set
        (the session before it has closed) and ``delay`` s later. The session before it
        is told to stop; calls wait for the new one (``ready``)."""
        assert self._tg is not None, "use `async with ServerPool(...)`"
        conn.stop.set()
        conn.generation += 1
        conn.client = None
        conn.ready, conn.stop, conn.closed = anyio.Event(), anyio.Event(), anyio.Event()
        if self._closing:  # no new session once closing: aclose would wait for it
            conn.error = conn.error or ExecutionError("the server pool is closing")
            conn.starting = None
            conn.ready.set()
            conn.closed.set()
            return
        conn.starting = anyio.CancelScope()
        events = (conn.ready, conn.stop, conn.closed, conn.starting)
        self._tg.start_soon(self._supervise, conn, events, after, delay)

    def _transport(self, conn: _Conn) -> tuple[Any, AbstractAsyncContextManager[Any] | None]:
        config = conn.config
        if isinstance(config, InProcessServer):
            return config.server, None
        if isinstance(config, StdioServer):
            env = dict(os.environ) if config.inherit_env else {}
            env.update(config.env)
            command, args = _guarded(_program(config.command, env), list(config.args), env, config)
            params = StdioServerParameters(command=command, args=args, env=env, cwd=config.cwd)
            # Bytes that are not UTF-8 are read as lone surrogates (not refused by a
            # "strict" decoder, whose error would fail the line): the line then fails to
            # parse, and fails its own call (_unreadable).
            params = params.model_copy(update={"encoding_error_handler": "surrogateescape"})
            # a response line the SDK cannot read fails its call (not a hang): _unreadable
            # its stderr: a pipe whose lines reach errlog as "[name] line" (_errlines)
            errpipe = NamedErrlog(config.name, self.errlog or _stderr())
            conn.errpipe = errpipe
            self._errpipes.append(errpipe)
            # not the SDK's stdio_client: its reader is quadratic in a line's length (_stdio)
            stdio = stdio_transport(params, errpipe.child_end, max_line=self.max_answer_bytes)
            return answer_unreadable(stdio), None
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

    async def _supervise(
        self,
        conn: _Conn,
        events: tuple[anyio.Event, anyio.Event, anyio.Event, anyio.CancelScope],
        after: anyio.Event | None,
        delay: float,
    ) -> None:
        """One session of ``conn``: started once ``after`` is set and ``delay`` s later,
        ready until ``stop`` is set. ``starting`` (cancelled by ``aclose``) bounds its
        start by ``start_timeout``; ``ready`` is set once it has started, or failed to."""
        ready, stop, closed, starting = events
        client: Client | None = None
        errpipe: NamedErrlog | None = None
        try:
            with starting:
                if after is not None:
                    await after.wait()  # the session before it, and its process, have ended
                if delay > 0:
                    await anyio.sleep(delay)
                if stop.is_set():
                    return
                conn.error = None
                conn.phase = "start"
                starting.deadline = anyio.current_time() + self.start_timeout
                transport, http = self._transport(conn)
                errpipe = conn.errpipe
                async with AsyncExitStack() as stack:
                    if http is not None:
                        await stack.enter_async_context(http)
                    client = await stack.enter_async_context(
                        Client(transport, mode=self.mode, message_handler=_on_message(conn))
                    )
                    conn.phase = "tools"
                    conn.stale = False
                    conn.tools = await _list_tools(client, "use")
                    conn.checks = OutputChecks(conn.tools)
                    conn.phase = "ready"
                    starting.deadline = math.inf  # started: the session lives until stop
                    conn.starting = None
                    conn.client = client
                    ready.set()
                    if self.watch_tools and _announces_tool_changes(client):
                        async with anyio.create_task_group() as watching:
                            watching.start_soon(_listen_for_tool_changes, client, conn)
                            await stop.wait()
                            watching.cancel_scope.cancel()
                    else:
                        await stop.wait()
            if starting.cancelled_caught and not ready.is_set():
                conn.error = (
                    ExecutionError("the server pool closed while the server started")
                    if stop.is_set()
                    else TimeoutError(f"no answer within {self.start_timeout:g} s")
                )
        except Exception as error:  # a start-up failure, reported by start()/call()
            conn.error = error
        except BaseException as error:
            pool_cancelled = self._tg is not None and self._tg.cancel_scope.cancel_called
            if self._closing or pool_cancelled or not _start_ended(error):
                raise
            # A server that dies while the SDK's client starts can end that start with a
            # cancellation of the SDK's own, alone or in a group with the error (and leave
            # its scope entered, so the task's effective deadline says nothing): the pool
            # did not cancel it, the start failed. Raised, it would cancel the pool's task
            # group, and every server with it.
            conn.error = _start_error(error)
        finally:
            if errpipe is not None:  # the process has ended: the copier reads to its end
                errpipe.close_child_end()
                if conn.errpipe is errpipe:
                    conn.errpipe = None
            if conn.starting is starting:
                conn.starting = None
            if client is not None and conn.client is client:
                conn.client = None
            if after is not None and not after.is_set():  # cancelled before it ended
                with anyio.CancelScope(shield=True):
                    await after.wait()
            ready.set()
            closed.set()

    async def _relist(self, conn: _Conn) -> None:
        """List a stale server's tools again (its calls' output checks with them). A
        server that does not answer keeps the tools it had: its calls say what is wrong."""
        client = conn.client
        if client is None:
            return
        conn.stale = False  # a change announced while listing marks it stale again
        try:
            tools = await _list_tools(client, "refresh")
        except Exception:  # a dead server: the call path restarts it
            conn.stale = True
            return
        if conn.client is client:
            conn.tools = tools
            conn.checks = OutputChecks(tools)

    # -- calling --------------------------------------------------------------------------

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
            if client is None and not conn.ready.is_set():  # lost as this call waited for a slot
                if call.timeout is not None:  # its clock runs: its re-send waits (``ready``)
                    raise ToolCallError(
                        ErrorClass.TRANSPORT_LOST, f"server {server!r}: connection lost"
                    )
                await self._ensure_started(server)
                client = conn.client
            if client is None:
                error_text = _describe(conn.error)
                alive = self._lost(conn, conn.generation)  # started again in the background
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
                    alive = self._lost(conn, generation)
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
                alive = self._lost(conn, generation)
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

    def _lost(self, conn: _Conn, generation: int) -> bool:
        """Session ``generation`` of ``conn`` is lost (its server died, or did not start):
        the first call to see it has the server restarted in the background, with
        backoff, and no call waits for that here (its re-send does: ``ready``). Later
        calls that saw the same session leave the new one alone.

        False once the server was restarted ``restart_limit`` times in a row without a
        call that succeeded in between (a call that succeeds starts the count again): it
        is given up on, and the calls that find it dead fail for good (``final``)."""
        if conn.generation != generation:  # seen already: restarted, or restarting
            return (
                conn.client is not None
                or not conn.ready.is_set()
                or conn.restarts < self.restart_limit
            )
        if conn.restarts >= self.restart_limit:
            return False
        conn.restarts += 1
        self._spawn(conn, conn.closed, self.backoff_base * (2 ** (conn.restarts - 1)))
        return True

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


def _tools_changed(conn: _Conn) -> None:
    """The server said its tools changed: stale until listed again, and no compiled
    output check meanwhile (each call goes through the SDK's ``call_tool``)."""
    conn.stale = True
    conn.checks = OutputChecks(())


def _on_message(conn: _Conn) -> Any:
    """The session's ``message_handler``: a ``tools/list_changed`` (sent unasked on a
    connection before 2026-07-28) makes ``conn``'s tools stale."""

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            _tools_changed(conn)

    return on_message


def _announces_tool_changes(client: Client) -> bool:
    """A 2026-07-28 connection whose server announces tool changes: they come only to a
    ``subscriptions/listen`` stream (earlier ones send them unasked: ``_on_message``)."""
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    tools = client.server_capabilities.tools if client.server_capabilities else None
    return bool(tools is not None and tools.list_changed)


async def _listen_for_tool_changes(client: Client, conn: _Conn) -> None:
    """Hold a ``subscriptions/listen`` stream for tool changes until cancelled (each
    makes ``conn``'s tools stale). A server that refuses it, or a stream that drops
    (the server died: the call path restarts it), ends it quietly."""
    try:
        async with client.listen(tools_list_changed=True) as changes:
            async for _ in changes:
                _tools_changed(conn)
    except Exception:  # refused (MCPError, ListenNotSupportedError), lost, or broken:
        return  # a watcher's end is never the session's


async def _list_tools(client: Client, cache_mode: Any) -> tuple[ToolSpec, ...]:
    """Every tool the server lists (every page)."""
    listed = await client.list_tools(cache_mode=cache_mode)
    tools = list(listed.tools)
    while listed.next_cursor:
        listed = await client.list_tools(cursor=listed.next_cursor, cache_mode=cache_mode)
        tools.extend(listed.tools)
    return tuple(
        ToolSpec(
            t.name,
            dict(t.input_schema),
            t.output_schema,
            t.description or "",
            t.title,
            None
            if t.annotations is None
            else t.annotations.model_dump(by_alias=True, exclude_none=True, mode="json"),
        )
        for t in tools
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


def not_configured(config: ServersConfig, names: Sequence[str]) -> ServerStartError | None:
    """The error of starting ``names`` of which ``config`` lacks some (None: it has all)."""
    unknown = [n for n in names if config.get(n) is None]
    if not unknown:
        return None
    return ServerStartError(
        f"no server {', '.join(map(repr, unknown))} in the servers config",
        hint=f"servers are: {', '.join(config.names) or 'none'}",
    )


def did_not_start(
    failed: Sequence[tuple[ServerConfig, BaseException | None]], errlog: TextIO | None
) -> ServerStartError:
    """The ``ServerStartError`` of the servers ``failed`` (each with its error), at the
    first's place, with a hint by their kind (``errlog``: where their error output went)."""
    lines = "; ".join(f"{config.name}: {_describe(error)}" for config, error in failed)
    return ServerStartError(
        f"server(s) did not start: {lines}",
        location=failed[0][0].loc,
        hint=_start_hint(list(failed), errlog),
    )


def _start_hint(
    failed: Sequence[tuple[ServerConfig | None, BaseException | None]], errlog: TextIO | None
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


def _start_ended(error: BaseException) -> bool:
    """Whether ``error`` holds only errors and cancellations (no KeyboardInterrupt or
    SystemExit): how the SDK may end a start that failed."""
    if isinstance(error, BaseExceptionGroup):
        return all(_start_ended(e) for e in error.exceptions)
    return isinstance(error, Exception | anyio.get_cancelled_exc_class())


def _start_error(error: BaseException) -> Exception:
    """The error a start that ``error`` ended reports: its first error, else that the
    server ended (a cancellation of the SDK's own and nothing else)."""
    first = _first_error(error)
    if first is not None:
        return first
    return ExecutionError("the server ended while it started", hint="see its stderr above")


def _first_error(error: BaseException) -> Exception | None:
    if isinstance(error, Exception):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _first_error(inner)
            if found is not None:
                return found
    return None
