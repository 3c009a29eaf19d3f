"""The Dask executor's tool pool: each tool call is a Dask task on a worker that hosts
the call's server.

:class:`DaskPool` is a ``ToolPool`` (see ``_invoker``): the engine's runner stays the
single writer of the run's events and keeps enforcing the global and per-server limits,
so they hold across the cluster; only the calls themselves go to the workers. On
connect the pool registers :class:`~plansmith.servers._dask_worker.McpWorkerPlugin`
(carrying the servers config) on every worker, present and future; a worker hosts
server ``S`` by declaring the resource ``mcp:S``, and each call for ``S`` asks for
one unit of it.

Failures keep their class: a worker's ``ToolCallError`` comes back as itself; a worker
that dies mid-call is ``transport_lost`` (the pool sets the scheduler's
``allowed-failures`` to 0, so Dask reports the death instead of running the call again
behind the engine's back), and the runner's retry rule calls again with the same key. A
call for a server that no worker hosts waits ``worker_wait`` seconds for one to join,
then fails ``transport_lost`` with that reason (so the run waits up to
``(max(retries, 1) + 1) * worker_wait``, a lost transport being re-sent once by default,
then fails, saying which resource is missing).

``distributed`` is imported only when a pool connects (the ``dask`` extra).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import uuid
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import CancelledError
from types import TracebackType
from typing import Any, TextIO

import anyio

from plansmith.binding import ToolCatalog, ToolSpec
from plansmith.errors import ServerStartError, ToolCallError
from plansmith.execution import ErrorClass, ProgressFn, ToolCall, ToolResult
from plansmith.servers._config import InProcessServer, ServersConfig
from plansmith.servers._invoker import CallByInvoke, PoolFactory

__all__ = ["DaskPool", "dask_pool_factory", "classify_dask_error", "plugin_name"]

_RESOURCE_PREFIX = "mcp:"  # the same as _dask_worker.RESOURCE_PREFIX (not imported eagerly)


def plugin_name(config: ServersConfig) -> str:
    """The worker plugin's name for ``config``: the same config shares one plugin."""
    text = repr(config.servers)  # dataclass reprs; the source location is not compared
    return "plansmith-mcp-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def classify_dask_error(error: BaseException, server: str) -> ToolCallError:
    """A Dask failure of a call to ``server`` as a classified ``ToolCallError``.

    A worker that died (``KilledWorker``), a lost connection to the scheduler
    (``CommClosedError``, ``OSError``) and a task the cluster dropped
    (``FutureCancelledError``) are ``transport_lost``; anything else the task raised
    is a ``protocol_error``.
    """
    from distributed.scheduler import KilledWorker  # noqa: PLC0415 (the dask extra)

    if isinstance(error, ToolCallError):
        return error
    if isinstance(error, KilledWorker):
        return ToolCallError(
            ErrorClass.TRANSPORT_LOST,
            f"server {server!r}: the Dask worker running the call died ({error.last_worker})",
        )
    if isinstance(error, OSError):  # CommClosedError is an OSError
        return ToolCallError(
            ErrorClass.TRANSPORT_LOST,
            f"server {server!r}: lost the Dask scheduler: {type(error).__name__}: {error}",
        )
    if isinstance(error, CancelledError):
        return ToolCallError(
            ErrorClass.TRANSPORT_LOST, f"server {server!r}: the Dask cluster dropped the call"
        )
    return ToolCallError(
        ErrorClass.PROTOCOL_ERROR,
        f"server {server!r}: the Dask task failed: {type(error).__name__}: {error}",
    )


def _missing_hint(server: str) -> str:
    return (
        f"start a worker that hosts it: `dask worker SCHEDULER "
        f'--resources "{_RESOURCE_PREFIX}{server}=8" --nthreads 8`'
    )


class DaskPool(CallByInvoke):
    """``async with DaskPool(config, "tcp://HOST:PORT") as pool``: a tool pool whose
    calls run as Dask tasks on the workers that host their servers.

    ``worker_wait``: seconds a call (or ``start``) waits for a worker hosting its server
    before failing; ``allowed_failures``: set on the scheduler on connect (0: a worker
    death fails the task at once, and the runner retries it; None: leave the
    scheduler's setting); ``connect_timeout``: seconds to reach the scheduler.
    """

    def __init__(
        self,
        config: ServersConfig,
        scheduler_address: str,
        *,
        errlog: TextIO | None = None,
        worker_wait: float = 30.0,
        allowed_failures: int | None = 0,
        connect_timeout: float = 10.0,
        poll: float = 0.5,
    ) -> None:
        self.config = config
        self.scheduler_address = scheduler_address
        self.errlog = errlog  # the servers' error output stays on their workers
        self.worker_wait = worker_wait
        self.allowed_failures = allowed_failures
        self.connect_timeout = connect_timeout
        self.poll = poll
        self.plugin = plugin_name(config)
        self._client: Any = None  # a distributed.Client (an untyped API)
        self._topic = "plansmith-progress-" + uuid.uuid4().hex[:12]
        self._subscribed = False
        self._ids = itertools.count()
        self._progress: dict[str, ProgressFn] = {}
        self._hosts: Counter[str] = Counter()
        self._hosts_at = -float("inf")

    # -- connecting -----------------------------------------------------------------------

    async def __aenter__(self) -> DaskPool:
        in_process = [s.name for s in self.config.servers if isinstance(s, InProcessServer)]
        if in_process:
            raise ServerStartError(
                f"in-process server(s) {', '.join(in_process)} cannot run on a Dask cluster",
                hint="give them a command or a url in the servers file",
            )
        try:
            from distributed import Client  # noqa: PLC0415 (the dask extra)
        except ImportError:
            raise ServerStartError(
                "the Dask executor needs the dask extra",
                hint="pip install 'plansmith[dask]'",
            ) from None
        from plansmith.servers._dask_worker import (  # noqa: PLC0415 (imports distributed)
            McpWorkerPlugin,
            set_allowed_failures,
        )

        try:
            client: Any = await Client(  # type: ignore[no-untyped-call]
                self.scheduler_address,
                asynchronous=True,
                timeout=self.connect_timeout,
                set_as_default=False,
            )
        except (OSError, TimeoutError, ValueError) as error:
            raise ServerStartError(
                f"cannot reach the Dask scheduler at {self.scheduler_address}: {error}",
                hint="start one with `dask scheduler`, or check --scheduler tcp://HOST:PORT",
            ) from None
        self._client = client
        try:
            if self.allowed_failures is not None:
                await client.run_on_scheduler(set_allowed_failures, self.allowed_failures)
            await client.register_plugin(McpWorkerPlugin(self.config, self.plugin))
            client.subscribe_topic(self._topic, self._on_event)
            self._subscribed = True
        except BaseException as error:
            await self.aclose()
            if not isinstance(error, Exception):
                raise
            raise ServerStartError(
                f"the Dask cluster at {self.scheduler_address} could not set up plansmith: "
                f"{type(error).__name__}: {error}",
                hint="install plansmith[dask], at the same version, on the scheduler and on"
                " every worker",
            ) from None
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Disconnect; the workers keep their server sessions for the next run."""
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):
                if self._subscribed:
                    client.unsubscribe_topic(self._topic)
                    self._subscribed = False
                await client.close()

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (asynchronous) while the pool is open."""
        assert self._client is not None, "use `async with DaskPool(...)`"
        return self._client

    async def _on_event(self, event: tuple[float, Mapping[str, Any]]) -> None:
        _, data = event
        on_progress = self._progress.get(str(data.get("call")))
        if on_progress is not None:
            await on_progress(float(data["progress"]), data.get("total"), data.get("message"))

    async def hosts(self, server: str) -> int:
        """How many workers declare ``mcp:server`` (asked at most once per ``poll``)."""
        now = anyio.current_time()
        if now - self._hosts_at >= self.poll:
            try:
                info = await self.client.scheduler.identity()
            except Exception as error:
                raise classify_dask_error(error, server) from None
            self._hosts = Counter(
                name
                for worker in info.get("workers", {}).values()
                for name in (worker.get("resources") or {})
            )
            self._hosts_at = now
        return self._hosts[_RESOURCE_PREFIX + server]

    async def _wait_for_host(self, server: str) -> bool:
        with anyio.move_on_after(self.worker_wait):
            while not await self.hosts(server):
                await anyio.sleep(self.poll)
            return True
        return False

    # -- starting -------------------------------------------------------------------------

    async def start(self, names: tuple[str, ...] | None = None) -> ToolCatalog:
        """Start ``names`` (default: all) on a worker that hosts each; list their tools.

        Raises ``ServerStartError`` naming every server that no worker hosts or that
        did not start.
        """
        from plansmith.servers._dask_worker import list_tools_task  # noqa: PLC0415

        wanted = names if names is not None else self.config.names
        unknown = [n for n in wanted if self.config.get(n) is None]
        if unknown:
            raise ServerStartError(
                f"no server {', '.join(map(repr, unknown))} in the servers config",
                hint=f"servers are: {', '.join(self.config.names) or 'none'}",
            )
        hosted: dict[str, bool] = {}
        lost: list[str] = []

        async def wait(name: str) -> None:
            try:
                hosted[name] = await self._wait_for_host(name)
            except ToolCallError as error:  # the scheduler went away
                hosted[name] = False
                lost.append(error.message)

        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(wait, name)
        if lost:
            raise ServerStartError(lost[0], hint="check the Dask scheduler and its address")
        missing = [n for n in wanted if not hosted[n]]
        if missing:
            resources = ", ".join(_RESOURCE_PREFIX + n for n in missing)
            raise ServerStartError(
                f"no Dask worker at {self.scheduler_address} hosts server(s) "
                f"{', '.join(map(repr, missing))} (resource {resources}) "
                f"after {self.worker_wait:g} s",
                hint=_missing_hint(missing[0]),
            )
        replies: dict[str, dict[str, Any]] = {}

        async def list_one(name: str) -> None:
            future = self.client.submit(
                list_tools_task,
                self.plugin,
                name,
                key=f"plansmith-tools-{name}-{uuid.uuid4().hex}",
                resources={_RESOURCE_PREFIX + name: 1},
                pure=False,
            )
            try:
                replies[name] = await self._result(future, name)
            except ToolCallError as error:
                replies[name] = {"error": error.message}

        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(list_one, name)
        failed = [(n, replies[n]) for n in wanted if "error" in replies[n]]
        if failed:
            first = self.config.get(failed[0][0])
            raise ServerStartError(
                "server(s) did not start on their Dask workers: "
                + "; ".join(f"{n}: {r['error']}" for n, r in failed),
                location=first.loc if first is not None else None,
                hint="run the server's command by hand on that worker's machine",
            )
        return ToolCatalog(
            tuple((n, tuple(ToolSpec(**spec) for spec in replies[n]["tools"])) for n in wanted)
        )

    # -- calling --------------------------------------------------------------------------

    async def invoke(self, call: ToolCall) -> ToolResult:
        """``call`` on a worker that hosts its server (``call``: the same by its parts);
        failures raise ``ToolCallError`` with their class (see the module docstring)."""
        from plansmith.servers._dask_worker import call_tool_task  # noqa: PLC0415

        server, on_progress = call.server, call.on_progress
        if self.config.get(server) is None:
            raise ToolCallError(ErrorClass.PROTOCOL_ERROR, f"no server {server!r} in the config")
        call_id = str(next(self._ids))
        request = {
            "server": server,
            "tool": call.tool,
            "arguments": call.arguments,
            "key": call.key or None,
            "meta": dict(call.meta) if call.meta else None,
            "topic": self._topic if on_progress is not None else None,
            "call": call_id,
        }
        if on_progress is not None:
            self._progress[call_id] = on_progress
        try:
            future = self.client.submit(
                call_tool_task,
                self.plugin,
                json.dumps(request),
                key=f"plansmith-call-{server}-{uuid.uuid4().hex}",
                resources={_RESOURCE_PREFIX + server: 1},
                pure=False,
            )
            reply = await self._result(future, server)
        finally:
            self._progress.pop(call_id, None)
        if "error_class" in reply:
            raise ToolCallError(
                reply["error_class"],
                reply["message"],
                retryable=bool(reply.get("retryable")),
                progressed=bool(reply.get("progressed")),
            )
        return ToolResult.from_dict(reply["result"])

    async def _result(self, future: Any, server: str) -> dict[str, Any]:
        """The task's reply; cancels the task if this call is cancelled or gives up.

        Waiting for the task to end moves no data and may be cancelled at any point.
        Fetching the reply may not: the client fetches the replies of concurrent calls
        in one shared asyncio task, and cancelling one caller's wait for it would cancel
        the others' (so the fetch is shielded from this call's cancellation).
        """
        missing_since: float | None = None
        error: BaseException | None = None
        try:
            while True:
                with anyio.move_on_after(self.poll):
                    error = await future.exception()  # the task ended (no data moves)
                    break
                if await self.hosts(server):
                    missing_since = None
                    continue
                now = anyio.current_time()
                missing_since = now if missing_since is None else missing_since
                if now - missing_since >= self.worker_wait:
                    raise ToolCallError(
                        ErrorClass.TRANSPORT_LOST,
                        f"no Dask worker hosts server {server!r} (resource "
                        f"{_RESOURCE_PREFIX}{server}) for {self.worker_wait:g} s",
                        hint=_missing_hint(server),
                    )
        finally:
            if not future.done() and self._client is not None:
                with anyio.CancelScope(shield=True):
                    await self._client.cancel([future], reason="plansmith: call given up")
        if future.status != "finished":  # erred (e.g. KilledWorker), or the cluster dropped it
            raise classify_dask_error(error or CancelledError(), server)
        fetch = asyncio.ensure_future(_fetch(future))
        fetch.add_done_callback(_retrieved)
        try:
            return await asyncio.shield(fetch)
        except Exception as error:
            raise classify_dask_error(error, server) from None


async def _fetch(future: Any) -> dict[str, Any]:
    reply: dict[str, Any] = await future
    return reply


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a fetch's outcome as seen (its caller may have been cancelled meanwhile)."""
    if not task.cancelled():
        task.exception()


def dask_pool_factory(scheduler_address: str, **options: Any) -> PoolFactory:
    """A ``PoolFactory`` for ``Engine(home, pool_factory=...)``: each run's calls go to
    the Dask cluster at ``scheduler_address``; ``options`` are :class:`DaskPool`'s."""

    def factory(config: ServersConfig, errlog: TextIO | None) -> DaskPool:
        return DaskPool(config, scheduler_address, errlog=errlog, **options)

    return factory
