"""Servers kept warm where a face lives long (``plansmith serve``, ``plansmith mcp``).

:class:`WarmPools` keeps one :class:`ServerPool` per server, and its :meth:`factory` is
the engine's ``PoolFactory``: the pool a run (or a binding check) gets is a view of the
warm servers its servers file names. A server is started when a run first needs it and
kept when the run ends, for the next run and the next binding check; it is stopped when
no run has used it for ``idle_timeout`` seconds (0: when its last run ends), and all of
them when the face ends (:meth:`WarmPools.aclose`).

- **The same server.** Two servers files name the same server when they give it the same
  name and the same launch: command, arguments, environment (``env`` and
  ``inheritEnv``), ``cwd``, or URL and headers, and the same ``maxInFlight``. Anything
  else (another ``env`` value, another name) is another server, another process.
- **Calls in flight.** The runs that share a server share its pool, so its
  ``maxInFlight`` bounds the calls of all of them together.
- **Failures.** A server that dies is restarted by its pool on the next call (the
  ``transport_lost`` rule, execution.md); one whose start failed, or that its pool gave
  up on, is started afresh by the next run that needs it once no run uses it.
- **Tools.** Each server's tools are listed when it starts and kept; a
  ``notifications/tools/list_changed`` (or, on a 2026-07-28 connection, the event of a
  ``subscriptions/listen`` stream the pool holds open) makes them stale, and the next run
  or check lists them again. A restart lists them again too.
- **Error output.** A warm server outlives its runs: its stderr goes to ``log`` (the
  face's ``HOME/servers.log``), each line after its name as in a run's ``servers.log``,
  with a line when it starts and stops. A run's ``servers.log`` gets a line saying that
  the server is warm and where its whole output is, and the lines the server writes while
  the run uses it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast

import anyio

from plansmith.binding import ToolCatalog
from plansmith.errors import ExecutionError, PlansmithError, ServerStartError, ToolCallError
from plansmith.execution import ErrorClass, ToolCall, ToolResult
from plansmith.servers._config import InProcessServer, ServerConfig, ServersConfig
from plansmith.servers._errlines import write_line
from plansmith.servers._invoker import CallByInvoke
from plansmith.servers._pool import ServerPool, did_not_start, not_configured

__all__ = ["WarmPools", "DEFAULT_IDLE_TIMEOUT"]

DEFAULT_IDLE_TIMEOUT = 300.0  # s a warm server is kept with no run using it
_NOTE = "[plansmith]"  # the prefix of plansmith's own lines in a servers.log


class _Output:
    """Where one warm server's error output goes: the face's log, and the log of each
    run that uses the server now. A log that was closed is let be."""

    def __init__(self, main: TextIO) -> None:
        self.main = main
        self.runs: tuple[TextIO, ...] = ()

    @property
    def name(self) -> str:  # what a start error's hint names (``_start_hint``)
        return str(getattr(self.main, "name", "<stderr>"))

    def attach(self, log: TextIO) -> None:
        self.runs = (*self.runs, log)

    def detach(self, log: TextIO) -> None:
        runs = list(self.runs)
        if log in runs:
            runs.remove(log)
        self.runs = tuple(runs)

    def write(self, text: str) -> int:
        for out in (self.main, *self.runs):
            try:
                out.write(text)
                out.flush()
            except (OSError, ValueError):
                continue
        return len(text)

    def flush(self) -> None:
        return None


@dataclass(eq=False)
class _Warm:
    """One warm server: its pool (open while ``keeper`` runs) and the runs using it."""

    key: Hashable
    config: ServerConfig
    out: _Output
    users: int = 0
    closing: bool = False
    pool: ServerPool | None = None
    opened: anyio.Event = field(default_factory=anyio.Event)
    wake: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    keeper: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def down(self) -> bool:
        """Not running, nor starting (its start failed, or its pool gave up on it)."""
        return self.pool is not None and self.pool.is_down(self.name)


def _key(config: ServerConfig) -> Hashable:
    """What makes two configs the same server: every field but its place in a file (an
    in-process server: that object too, which its config does not compare)."""
    if isinstance(config, InProcessServer):
        return (config, id(config.server))
    return config


class WarmPools:
    """See the module docstring. ``log``: the file the servers' error output goes to
    (stderr when None); ``idle_timeout``: seconds a server is kept with no run using
    it (0 or less: stopped when its last run ends). The other options are each pool's
    (``ServerPool``). Use it in one event loop (asyncio); :meth:`aclose` at the end."""

    def __init__(
        self,
        log: Path | None = None,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        start_timeout: float = 60.0,
        restart_limit: int = 3,
        backoff_base: float = 0.1,
    ) -> None:
        self.log_path = log
        self.idle_timeout = idle_timeout
        self._options: dict[str, Any] = {
            "start_timeout": start_timeout,
            "restart_limit": restart_limit,
            "backoff_base": backoff_base,
        }
        self._warm: dict[Hashable, _Warm] = {}  # the servers a run may use now, by launch
        self._kept: set[_Warm] = set()  # every server whose pool is open (stopping too)
        self._log: TextIO | None = None
        self._closed = False

    def factory(self, config: ServersConfig, errlog: TextIO | None) -> WarmRun:
        """The ``PoolFactory`` of an engine whose servers are kept warm here."""
        return WarmRun(self, config, errlog)

    @property
    def running(self) -> tuple[str, ...]:
        """The names of the servers kept now (started, starting, or not yet stopped)."""
        return tuple(sorted(w.name for w in self._warm.values()))

    async def aclose(self) -> None:
        """Stop every server (as a pool does: stdin closed, then SIGTERM, then SIGKILL),
        and close the log. Call it once the runs that use them have ended."""
        self._closed = True
        for warm in list(self._warm.values()):
            self._retire(warm, "plansmith is stopping")
        with anyio.CancelScope(shield=True):
            for warm in list(self._kept):
                await warm.done.wait()
        if self._log is not None and self._log is not sys.stderr:
            self._log.close()
        self._log = None

    # -- the servers ----------------------------------------------------------------------

    def _main_log(self) -> TextIO:
        if self._log is None:
            if self.log_path is None:
                self._log = sys.stderr
            else:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = self.log_path.open("a", encoding="utf-8")
        return self._log

    def _acquire(self, config: ServerConfig, errlog: TextIO | None) -> _Warm:
        """The warm server ``config`` names, for one more run (started when it first
        needs it: ``_Warm.opened`` then ``ServerPool.start``)."""
        if self._closed:
            raise ExecutionError(
                "the warm tool servers are closed", hint="start the face again for more runs"
            )
        key = _key(config)
        warm = self._warm.get(key)
        if warm is not None and warm.users == 0 and warm.down():
            self._retire(warm, "it was not running (its start failed, or it was given up on)")
            warm = None
        if warm is None:
            warm = _Warm(key, config, _Output(self._main_log()))
            write_line(warm.out.main, f"{_NOTE} server {warm.name!r} starts, to be kept warm")
            self._warm[key] = warm
            self._kept.add(warm)
            warm.keeper = asyncio.get_running_loop().create_task(self._keep(warm))
        warm.users += 1
        warm.wake.set()
        if errlog is not None:
            write_line(
                errlog,
                f"{_NOTE} server {warm.name!r} is kept warm (shared by runs, kept between"
                f" them): its lines while this run uses it follow; all of them are in"
                f" {warm.out.name}",
            )
            warm.out.attach(errlog)
        return warm

    def _release(self, warm: _Warm, errlog: TextIO | None) -> None:
        if errlog is not None:
            warm.out.detach(errlog)
        warm.users -= 1
        warm.wake.set()

    def _retire(self, warm: _Warm, why: str) -> None:
        """Stop ``warm`` (its keeper closes its pool); a run that needs it from now on
        starts another."""
        if warm.closing:
            return
        warm.closing = True
        warm.wake.set()
        if self._warm.get(warm.key) is warm:
            del self._warm[warm.key]
        write_line(warm.out.main, f"{_NOTE} server {warm.name!r} stops: {why}")

    async def _keep(self, warm: _Warm) -> None:
        """The task that owns ``warm``'s pool (an anyio cancel scope is left by the task
        that entered it): open until ``warm`` is retired."""
        try:
            pool = ServerPool(
                ServersConfig((warm.config,)),
                errlog=cast(TextIO, warm.out),
                watch_tools=True,
                **self._options,
            )
            async with pool:
                warm.pool = pool
                warm.opened.set()
                await self._hold(warm)
        finally:
            self._retire(warm, "its pool ended")  # no-op once retired
            warm.pool = None
            warm.opened.set()
            self._kept.discard(warm)
            warm.done.set()

    async def _hold(self, warm: _Warm) -> None:
        """Until ``warm`` is retired: while no run uses it, for ``idle_timeout`` s."""
        while not warm.closing:
            warm.wake = anyio.Event()
            if warm.users > 0:
                await warm.wake.wait()
                continue
            if self.idle_timeout <= 0:
                self._retire(warm, "its last run ended")
                return
            with anyio.move_on_after(self.idle_timeout):
                await warm.wake.wait()
                continue
            if warm.users == 0:
                self._retire(warm, f"no run used it for {self.idle_timeout:g} s")


class WarmRun(CallByInvoke):
    """The pool of one run (or binding check): the warm servers its ``config`` names,
    held from their start to the end of the ``async with`` (not stopped then). A
    ``ToolPool``, with ``invoke`` (``McpInvoker`` hands it each call as it is)."""

    def __init__(self, pools: WarmPools, config: ServersConfig, errlog: TextIO | None) -> None:
        self.pools = pools
        self.config = config
        self.errlog = errlog
        self._held: dict[str, _Warm] = {}
        self._route: dict[str, ServerPool] = {}

    async def __aenter__(self) -> WarmRun:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        held, self._held, self._route = self._held, {}, {}
        for warm in held.values():
            self.pools._release(warm, self.errlog)

    async def start(self, names: tuple[str, ...] | None = None) -> ToolCatalog:
        """Start ``names`` (default: all) unless they run already; their tools.

        Raises ``ServerStartError`` naming every server that failed."""
        wanted = names if names is not None else self.config.names
        unknown = not_configured(self.config, wanted)
        if unknown is not None:
            raise unknown
        failed: dict[str, BaseException | None] = {}
        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(self._start_one, name, failed)
        if failed:
            # the hint names the face's log: it gets every line (a run's may miss the last
            # ones, which a thread copies after the start failed and the run let go)
            configs = [c for c in self.config.servers if c.name in failed]
            out = self._held[configs[0].name].out
            raise did_not_start([(c, failed[c.name]) for c in configs], cast(TextIO, out))
        return self.catalog()

    def catalog(self) -> ToolCatalog:
        """The tools of the servers of this run that run now."""
        found: list[tuple[str, Any]] = []
        for name in self.config.names:
            pool = self._route.get(name)
            if pool is not None:
                found.extend(pool.catalog().servers)
        return ToolCatalog(tuple(found))

    async def _pool(self, name: str) -> ServerPool:
        warm = self._held.get(name)
        if warm is None:
            config = self.config.get(name)
            assert config is not None
            warm = self._held[name] = self.pools._acquire(config, self.errlog)
        await warm.opened.wait()
        if warm.pool is None:
            raise ExecutionError(f"the warm pool of server {name!r} has ended")
        return warm.pool

    async def _start_one(self, name: str, failed: dict[str, BaseException | None]) -> None:
        try:
            pool = await self._pool(name)
        except PlansmithError as error:  # its pool ended (the face is stopping)
            failed[name] = error
            return
        try:
            await pool.start((name,))
        except ServerStartError:
            failed[name] = pool.start_error(name)
            return
        self._route[name] = pool

    def ready(self, call: ToolCall) -> Awaitable[object] | None:
        """``ServerPool.ready`` of ``call``'s server: None when it is up, else what to
        await until its start or restart has ended (``TimeoutInvoker`` awaits it before a
        call's clock starts)."""
        pool = self._route.get(call.server)
        if pool is not None:
            return pool.ready(call)
        if self.config.get(call.server) is None:
            return None  # ``invoke`` says it is not in the config
        return self._started(call)

    async def _started(self, call: ToolCall) -> None:
        pool = await self._routed(call.server)
        waiting = pool.ready(call)
        if waiting is not None:
            await waiting

    async def _routed(self, name: str) -> ServerPool:
        """The pool of server ``name``, which this run uses from now on."""
        pool = self._route[name] = await self._pool(name)
        return pool

    def invoke(self, call: ToolCall) -> Awaitable[ToolResult]:
        """``call`` on its server's pool (its ``invoke``, not one coroutine more)."""
        pool = self._route.get(call.server)
        if pool is None:
            return self._invoke_unstarted(call)
        return pool.invoke(call)

    async def _invoke_unstarted(self, call: ToolCall) -> ToolResult:
        """A call on a server this run did not start: started now, as ``ServerPool``
        does (a failed start is the call's ``transport_lost``)."""
        if self.config.get(call.server) is None:
            raise ToolCallError(
                ErrorClass.PROTOCOL_ERROR, f"no server {call.server!r} in the config"
            )
        return await (await self._routed(call.server)).invoke(call)
