"""The engine's run table: every run a long-lived face (the web, the MCP server) starts,
approves, retries, watches or cancels goes through one ``RunTable`` over one engine.

A handle per run this process drives (its background task, the owner that started it,
its feed); a feed per run watched (its events in order and its ``RunView``, moved on
event by event, for the status pages and the event streams); the runs of the log listed
and filtered by owner. The table keeps no state of its own that the log does not hold:
a restarted face finds every run, its owner, its plan and its approval in the log.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from plansmith.engine._engine import Engine
from plansmith.engine._inputs import OWNER_KEY, RunInputs
from plansmith.errors import (
    ApprovalRequiredError,
    BusyError,
    ExecutionError,
    PlansmithError,
    RunNotFoundError,
)
from plansmith.execution import (
    ApprovalPolicy,
    Event,
    RunFinished,
    RunInfo,
    RunOutcome,
    RunStarted,
    RunView,
)
from plansmith.model import JSONValue, Plan

__all__ = ["RunFeed", "RunHandle", "RunTable", "run_owner"]

_KEEP_FEEDS = 64  # feeds of finished runs kept in memory (a run's page, its stream)


def run_owner(info: RunInfo) -> str:
    """Who started the run (``Engine.run``'s ``owner``; empty: not recorded)."""
    owner = info.inputs.get(OWNER_KEY)
    return owner if isinstance(owner, str) else ""


class RunFeed:
    """Every event of one run, in seq order, and its ``view`` after them; those who
    wait for more (``wait``, ``follow``) wake at each event."""

    def __init__(self, events: Iterable[Event] = (), run_id: str = "") -> None:
        self.run_id = run_id
        self.events: list[Event] = []
        self.view = RunView(run_id)
        self._changed = anyio.Event()
        self.finished = False
        self.closed = False
        for event in events:
            self._add(event)

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0

    def _add(self, event: Event) -> None:
        if self.events and event.seq <= self.events[-1].seq:
            return  # already here (a subscriber and a log read can overlap)
        self.events.append(event)
        self.view.apply(event)
        if isinstance(event, RunFinished):
            self.finished = True

    def push(self, event: Event) -> None:
        """Add ``event`` (the engine's subscriber) and wake the waiters."""
        self._add(event)
        self.poke()

    def catch_up(self, events: Iterable[Event]) -> None:
        """Add what the log holds beyond this feed (events recorded without it)."""
        for event in events:
            self._add(event)
        self.poke()

    @property
    def signal(self) -> anyio.Event:
        """Set at the next event (or when the feed closes); take it before looking at
        ``events``, then wait on it."""
        return self._changed

    def poke(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def wait(self) -> None:
        """Until the next event, or the feed is closed."""
        if not self.closed:
            await self._changed.wait()

    async def follow(self, after_seq: int = 0) -> AsyncIterator[Event]:
        """The events after ``after_seq``, then each as it comes, until the run finishes
        or the feed is closed."""
        at = after_seq
        while True:
            fresh = [e for e in self.events if e.seq > at]
            for event in fresh:
                at = event.seq
                yield event
            if self.finished or self.closed:
                return
            await self.wait()

    def close(self) -> None:
        """No more events will come from this process (the face is shutting down)."""
        self.closed = True
        self.poke()


@dataclass(slots=True)
class RunHandle:
    """A run this process drives in the background: its task's cancel scope, who
    started it, its feed, and how its call ended (``outcome`` or ``error``)."""

    run_id: str
    owner: str
    feed: RunFeed
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: RunOutcome | None = None
    error: BaseException | None = None
    cancel_reason: str | None = None
    counted: bool = True  # against the table's ``max_live`` (not a run made to be held)
    scoped: bool = False  # a cancel the engine does not take cancels its task (``start``)


class RunTable:
    """See the module docstring. Enter it (``async with``) in the face's event loop:
    its runs go on in its task group; leaving it cancels those still going
    (``stop_reason``) and waits for each to be recorded."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_live: int | None = None,
        max_parallel: int = 8,
        stop_reason: str = "the server stopped",
    ) -> None:
        self.engine = engine
        self.max_live = max_live
        self.max_parallel = max_parallel
        self.stop_reason = stop_reason
        self._live: dict[str, RunHandle] = {}
        self._feeds: dict[str, RunFeed] = {}
        self._ended: dict[str, BaseException] = {}  # why a drive ended, the run unfinished
        self._stopping = False
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> RunTable:
        self._tg = anyio.create_task_group()
        self._stopping = False
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.stop()
        assert self._tg is not None
        return await self._tg.__aexit__(et, e, tb)

    # -- reading ------------------------------------------------------------------------

    def is_live(self, run_id: str) -> bool:
        return run_id in self._live

    def last_error(self, run_id: str) -> BaseException | None:
        """Why the last drive of ``run_id`` in this process ended before the run finished
        (it could not start, its engine failed), or None."""
        return self._ended.get(run_id)

    def handle(self, run_id: str) -> RunHandle | None:
        """The handle of a run this process drives now (None: it drives none)."""
        return self._live.get(run_id)

    def feed(self, run_id: str) -> RunFeed:
        """The events of ``run_id`` (read from the log once, then kept up to date);
        ``RunNotFoundError`` when the log has no such run."""
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = self._feeds[run_id] = RunFeed(self.engine.log.events(run_id), run_id)
            self._evict()
        elif run_id not in self._live and not feed.finished:
            feed.catch_up(self.engine.log.events(run_id))  # another engine may drive it
        return feed

    def view(self, run_id: str) -> RunView:
        return self.feed(run_id).view

    def info(self, run_id: str) -> RunInfo:
        return self.engine.log.run(run_id)

    def owner(self, run_id: str) -> str:
        return run_owner(self.engine.log.run(run_id))

    def list(
        self, *, limit: int | None = None, before: str | None = None, owner: str | None = None
    ) -> builtins.list[RunInfo]:
        """The runs of the log, newest first: those ``owner`` started when given, at
        most ``limit``, older than the run ``before`` when given (a page ends where the
        next one begins)."""
        infos = self.engine.list(owner=owner)
        if before is not None:
            at = next((k for k, info in enumerate(infos) if info.run_id == before), None)
            if at is None:
                raise RunNotFoundError(
                    f"no run {before!r} in the run log", hint="page from a run of the list"
                )
            infos = infos[at + 1 :]
        return infos[:limit]

    async def subscribe(self, run_id: str, after_seq: int = 0) -> AsyncIterator[Event]:
        """The run's events after ``after_seq``, then each as it comes, until it
        finishes (or the table stops)."""
        async for event in self.feed(run_id).follow(after_seq):
            yield event

    def _evict(self) -> None:
        idle = [r for r, f in self._feeds.items() if r not in self._live and f.finished]
        for run_id in idle[: max(0, len(self._feeds) - _KEEP_FEEDS)]:
            del self._feeds[run_id]

    # -- acting -------------------------------------------------------------------------

    async def create(
        self,
        inputs: RunInputs,
        *,
        owner: str = "",
        policy: ApprovalPolicy | None = None,
        approve: bool = False,
        hold: bool = False,
        plan: Plan | None = None,
        asked: Mapping[str, JSONValue] | None = None,
        run_id: str | None = None,
        costs: Mapping[str, float] | None = None,
        after: str | None = None,
    ) -> RunHandle:
        """Plan, bind and record a new run, which goes on in the background; return once
        it awaits approval, runs, or ended (a run that could not start: its error is
        raised). ``hold``, ``plan``, ``asked``, ``costs`` and ``after`` (a follow-up of
        that run) are ``Engine.run``'s; a run made to be held does not count against
        ``max_live`` (it is bound, then waits)."""
        run_id = run_id or self.engine.new_run_id()
        handle = self._spawn(
            run_id,
            owner,
            lambda feed: self.engine.run(
                inputs,
                approve=approve,
                policy=policy,
                owner=owner,
                max_parallel=self.max_parallel,
                subscribe=feed.push,
                run_id=run_id,
                hold=hold,
                plan=plan,
                asked=asked,
                costs=costs,
                after=after,
            ),
            new=True,
            counted=not hold,
        )
        return await self._started(handle)

    async def create_made(
        self,
        maker: str,
        args: Mapping[str, JSONValue],
        *,
        owner: str = "",
        policy: ApprovalPolicy | None = None,
        approve: bool = False,
        hold: bool = False,
        asked: Mapping[str, JSONValue] | None = None,
        run_id: str | None = None,
    ) -> RunHandle:
        """``create`` for the run a run maker makes from ``args`` (``Engine.run_made``):
        made, bound and recorded in the background; returns once it awaits approval,
        runs, or ended (a maker that refuses its arguments: its error is raised, and no
        run is recorded)."""
        run_id = run_id or self.engine.new_run_id()
        handle = self._spawn(
            run_id,
            owner,
            lambda feed: self.engine.run_made(
                maker,
                args,
                approve=approve,
                policy=policy,
                owner=owner,
                max_parallel=self.max_parallel,
                subscribe=feed.push,
                run_id=run_id,
                hold=hold,
                asked=asked,
            ),
            new=True,
            counted=not hold,
        )
        return await self._started(handle)

    def start(
        self, run_id: str, go: Callable[[RunFeed], Awaitable[RunOutcome]], *, owner: str = ""
    ) -> RunHandle:
        """Drive a run another part makes (a domain's desk: ``go(feed)`` records and runs
        it through the engine, ``feed.push`` its subscriber) in the background, in this
        table: listed, watched and cancelled as every other. Returns at once. A cancel
        that comes before ``go`` has the engine drive the run cancels ``go`` itself."""
        return self._spawn(run_id, owner, go, new=True, scoped=True)

    async def approve(self, run_id: str, plan_hash: str, *, by: str) -> RunHandle:
        """``by`` approves the plan ``plan_hash`` of ``run_id`` (any other hash is
        refused by the engine, nothing recorded), which goes on in the background."""
        self._check_idle(run_id)
        handle = self._spawn(
            run_id,
            self.owner(run_id),
            lambda feed: self.engine.approve(
                run_id, plan_hash, by=by, max_parallel=self.max_parallel, subscribe=feed.push
            ),
        )
        return await self._started(handle)

    async def retry(self, run_id: str, *, by: str) -> RunHandle:
        """A failed or cancelled run goes on in the background (``Engine.retry``)."""
        self._check_idle(run_id)
        handle = self._spawn(
            run_id,
            self.owner(run_id),
            lambda feed: self.engine.retry(
                run_id, by=by, max_parallel=self.max_parallel, subscribe=feed.push
            ),
        )
        return await self._started(handle)

    async def resume(self, run_id: str) -> RunHandle:
        """An unfinished run no engine drives goes on in the background."""
        self._check_idle(run_id)
        handle = self._spawn(
            run_id,
            self.owner(run_id),
            lambda feed: self.engine.resume(
                run_id, max_parallel=self.max_parallel, subscribe=feed.push
            ),
        )
        return await self._started(handle)

    async def cancel(self, run_id: str, reason: str) -> bool:
        """Cancel ``run_id`` (``Engine.cancel``: the one writer of the cancel pair
        outside the runner) and, when this process drives it, wait until its task ended.
        False when it had finished or another engine drives it."""
        handle = self._live.get(run_id)
        if handle is not None and handle.cancel_reason is None:
            handle.cancel_reason = reason
        cancelled = self.engine.cancel(run_id, reason)
        if handle is not None:
            self._cancel_scope(handle, taken=cancelled)
            await handle.done.wait()
        self.feed(run_id).catch_up(self.engine.log.events(run_id))
        return cancelled

    async def stop(self) -> None:
        """Cancel the runs this process drives (each records it) and close the feeds,
        which ends their streams. Idempotent; a run asked for once it began is refused."""
        self._stopping = True
        while self._live:
            for handle in list(self._live.values()):
                if handle.cancel_reason is None:
                    handle.cancel_reason = self.stop_reason
                    self._cancel_scope(
                        handle, taken=self.engine.cancel(handle.run_id, handle.cancel_reason)
                    )
            for handle in list(self._live.values()):
                await handle.done.wait()
        for feed in self._feeds.values():
            feed.close()

    @staticmethod
    def _cancel_scope(handle: RunHandle, *, taken: bool) -> None:
        """A run of ``start`` the engine does not drive yet: its task is cancelled."""
        if handle.scoped and not taken:
            handle.scope.cancel()

    def _check_idle(self, run_id: str) -> None:
        self.feed(run_id)  # RunNotFoundError for no such run
        if run_id in self._live:
            raise ExecutionError(f"run {run_id} is running already")

    def _spawn(
        self,
        run_id: str,
        owner: str,
        go: Callable[[RunFeed], Awaitable[RunOutcome]],
        *,
        new: bool = False,
        counted: bool = True,
        scoped: bool = False,
    ) -> RunHandle:
        if self._tg is None:
            raise ExecutionError(
                "the run table is not open", hint="enter it: `async with RunTable(engine)`"
            )
        if self._stopping:
            raise BusyError(
                "the server is shutting down: it starts no run",
                hint="retry once it is back (the run log keeps every run)",
            )
        if counted and self.max_live is not None and self._counted() >= self.max_live:
            raise BusyError(
                f"{self.max_live} runs are in flight, the most this server allows",
                hint="busy, retry later (poll the status of your runs until one finishes)",
            )
        feed = RunFeed(run_id=run_id) if new else self.feed(run_id)
        self._feeds[run_id] = feed
        self._ended.pop(run_id, None)
        handle = self._live[run_id] = RunHandle(run_id, owner, feed, counted=counted, scoped=scoped)

        async def drive() -> None:
            try:
                with handle.scope:
                    handle.outcome = await go(feed)
            except ApprovalRequiredError:
                pass  # recorded: the run awaits a person
            except Exception as error:
                handle.error = error
            finally:
                del self._live[run_id]
                if handle.cancel_reason is not None:  # cancelled before the engine had it
                    self.engine.cancel(run_id, handle.cancel_reason)
                if feed.events or not new:
                    feed.catch_up(self._events_after(run_id, feed.last_seq))
                if handle.error is not None and not feed.finished:  # a status says why
                    self._ended[run_id] = handle.error
                handle.done.set()
                feed.poke()

        self._tg.start_soon(drive)
        return handle

    def _counted(self) -> int:
        return sum(1 for h in self._live.values() if h.counted)

    def _events_after(self, run_id: str, seq: int) -> builtins.list[Event]:
        try:
            return [e for e in self.engine.log.events(run_id) if e.seq > seq]
        except RunNotFoundError:
            return []

    async def _started(self, handle: RunHandle) -> RunHandle:
        """Once the run awaits approval, runs, or ended; its error raised if it could not
        start (a run that was never recorded is forgotten)."""
        feed = handle.feed
        while not handle.done.is_set() and not any(isinstance(e, RunStarted) for e in feed.events):
            if feed.closed:  # the table stops: the run is being cancelled
                await handle.done.wait()
                break
            await feed.wait()
        if handle.done.is_set() and handle.error is not None:
            if not feed.events:
                self._feeds.pop(handle.run_id, None)
            if isinstance(handle.error, PlansmithError):
                raise handle.error
            raise ExecutionError(f"run {handle.run_id} could not start: {handle.error}")
        return handle
