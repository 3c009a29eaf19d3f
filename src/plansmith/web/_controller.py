"""The web app's one stateful object: the engine, the runs this process drives, their feeds.

Runs go on in background tasks of the app's event loop. Creating a run plans and
binds it and stops when it awaits approval (the web asks a person for every tier
by default); approving it with the plan's hash resumes it; cancelling it cancels
its task, and the runner records ``RunCancelled`` and ``RunFinished``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from plansmith.binding import BoundPlan
from plansmith.engine import Engine, RunInputs, load_problem_files, make_plan, open_engine
from plansmith.engine_service import shipped_domain_dirs
from plansmith.errors import (
    ApprovalRequiredError,
    ExecutionError,
    InputError,
    PlansmithError,
    RunNotFoundError,
)
from plansmith.execution import (
    ApprovalPolicy,
    Emitter,
    RunCancelled,
    RunFinished,
    RunInfo,
    RunStarted,
)
from plansmith.model import Plan
from plansmith.web._catalog import (
    DomainEntry,
    domain_entries,
    find_domain,
    find_domains,
    problem_file,
)
from plansmith.web._feed import Feed
from plansmith.web._settings import WebSettings
from plansmith.web._views import RunView, fold_view

__all__ = ["Controller"]


def _gtpyhop_problem_names(folder: Path) -> tuple[str, ...]:
    """The problems of a GTPyhop folder. The GTPyhop layer is imported here, when the
    served domains hold such a folder, not with the web app: a server without one never
    imports it."""
    from plansmith.web._gtpyhop import gtpyhop_problem_names  # noqa: PLC0415

    return gtpyhop_problem_names(folder)


_KEEP_FEEDS = 64
_KEEP_SUMMARIES = 4096  # finished runs' entries of the runs list


@dataclass(slots=True)
class _Live:
    run_id: str
    task: asyncio.Task[None] | None = None
    scope: anyio.CancelScope | None = None
    cancel_reason: str | None = None
    error: BaseException | None = None
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class Controller:
    """See the module docstring; one per app (``create_app``)."""

    def __init__(self, settings: WebSettings, engine: Engine | None = None) -> None:
        self.settings = settings
        self.engine = (
            engine
            if engine is not None
            else open_engine(
                settings.home,
                log=settings.log,
                executor=settings.executor,
                scheduler=settings.scheduler,
                lease_ttl=settings.lease_ttl,
            )
        )
        self.policy = ApprovalPolicy.parse(settings.approve_tiers)
        self._feeds: dict[str, Feed] = {}
        self._live: dict[str, _Live] = {}
        self._summaries: dict[str, dict[str, Any]] = {}

    # -- domains and plans ----------------------------------------------------------------

    def domains(self) -> list[DomainEntry]:
        """The domains of ``--domains`` (GTPyhop folders too); without it, the shipped ones."""
        s = self.settings
        if s.domains is None:
            return domain_entries(shipped_domain_dirs(), s.servers, s.bindings)
        return find_domains(s.domains, s.servers, s.bindings, _gtpyhop_problem_names)

    def entry(self, domain: str) -> DomainEntry:
        entry = find_domain(self.domains(), domain)
        if entry is None:
            raise InputError(f"no domain {domain!r}", hint="list them with GET /api/domains")
        return entry

    def inputs(self, domain: str, problem: str) -> RunInputs:
        entry = self.entry(domain)
        path = problem_file(entry, problem)
        if entry.gtpyhop:
            raise InputError(
                f"domain {domain!r} is a GTPyhop folder: it can be planned, not run",
                hint="look at its plan with POST /api/plan (or the plan page)",
            )
        if entry.servers is None or entry.bindings is None:
            raise InputError(
                f"domain {domain!r} has no servers.json or bindings.yaml",
                hint="put them in its folder, or start `plansmith serve --servers S --bindings B`",
            )
        return RunInputs(entry.domain, path, entry.servers, entry.bindings)

    async def plan(self, domain: str, problem: str) -> Plan:
        """Plan ``problem`` of ``domain`` (in a worker thread: planning is CPU work)."""
        entry = self.entry(domain)
        path = problem_file(entry, problem)
        if entry.gtpyhop:
            from plansmith.web._gtpyhop import plan_gtpyhop  # noqa: PLC0415 - see below

            return await anyio.to_thread.run_sync(lambda: plan_gtpyhop(entry.folder, problem))
        return await anyio.to_thread.run_sync(
            lambda: make_plan(load_problem_files(entry.domain, path))
        )

    async def check(self, domain: str, problem: str) -> tuple[Plan, BoundPlan]:
        plan, bound, _ = await self.engine.check(self.inputs(domain, problem))
        return plan, bound

    # -- runs -----------------------------------------------------------------------------

    def feed(self, run_id: str) -> Feed:
        """The events of ``run_id`` (loaded from the log once; raises if there is no run)."""
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = self._feeds[run_id] = Feed(self.engine.log.events(run_id))
            self._evict()
        return feed

    def _evict(self) -> None:
        idle = [r for r, f in self._feeds.items() if r not in self._live and f.finished]
        for run_id in idle[: max(0, len(self._feeds) - _KEEP_FEEDS)]:
            del self._feeds[run_id]

    def view(self, run_id: str) -> RunView:
        feed = self.feed(run_id)
        view = fold_view(run_id, feed.events, live=run_id in self._live)
        info = self.engine.log.run(run_id)
        view.created, view.inputs = info.created, dict(info.inputs)
        return view

    def runs(self, limit: int | None = None, before: str | None = None) -> list[dict[str, Any]]:
        """The runs of the log, newest first, with their status and step counts: at most
        ``limit`` of them, older than the run ``before`` when given (a page ends where
        the next one begins). A finished run's entry is kept: it no longer changes."""
        infos = list(reversed(self.engine.log.runs()))
        if before is not None:
            at = next((k for k, info in enumerate(infos) if info.run_id == before), None)
            if at is None:
                raise RunNotFoundError(
                    f"no run {before!r} in the run log", hint="page from a run of the list"
                )
            infos = infos[at + 1 :]
        return [self._summary(info) for info in infos[:limit]]

    def _summary(self, info: RunInfo) -> dict[str, Any]:
        kept = self._summaries.get(info.run_id)
        if kept is not None:
            return kept
        feed = self._feeds.get(info.run_id)
        events = feed.events if feed else self.engine.log.events(info.run_id)
        live = info.run_id in self._live
        view = fold_view(info.run_id, events, live=live)
        summary = {
            "run_id": info.run_id,
            "created": info.created,
            "status": view.status,
            "inputs": {k: Path(str(v)).name for k, v in info.inputs.items()},
            "counts": view.counts(),
            "plan_hash": view.plan_hash,
        }
        if view.finished is not None and not live:
            if len(self._summaries) >= _KEEP_SUMMARIES:
                del self._summaries[next(iter(self._summaries))]  # the oldest kept
            self._summaries[info.run_id] = summary
        return summary

    async def create_run(self, domain: str, problem: str) -> str:
        """Plan, bind and record a new run; return once it awaits approval (or runs)."""
        inputs = self.inputs(domain, problem)
        run_id = self.engine.new_run_id()
        feed = self._feeds[run_id] = Feed()

        async def go() -> None:
            await self.engine.run(
                inputs,
                policy=self.policy,
                max_parallel=self.settings.max_parallel,
                subscribe=feed.push,
                run_id=run_id,
            )

        live = self._spawn(run_id, go)
        # A run that awaits approval (or fails to start) ends its task once its servers
        # are stopped; one that the policy lets run goes on in the background.
        while not live.done and not any(isinstance(e, RunStarted) for e in feed.events):
            signal = feed.signal
            await signal.wait()
        if live.done and live.error is not None:
            if not feed.events:
                del self._feeds[run_id]
            if isinstance(live.error, PlansmithError):
                raise live.error
            raise ExecutionError(f"run {run_id} could not start: {live.error}")
        return run_id

    async def approve(self, run_id: str, plan_hash: str) -> None:
        """Approve the plan ``plan_hash`` of ``run_id`` and run it in the background."""
        view = self.view(run_id)
        if view.finished is not None:
            raise ExecutionError(f"run {run_id} has finished ({view.finished})")
        if run_id in self._live:
            raise ExecutionError(f"run {run_id} is running already")
        if view.plan_hash is None:
            raise ExecutionError(f"run {run_id} has no bound plan", hint="create a new run")
        if plan_hash != view.plan_hash:
            raise ExecutionError(
                f"plan {plan_hash} is not the plan of run {run_id}",
                hint=f"reload the plan page: the run's plan is {view.plan_hash}",
            )
        feed = self.feed(run_id)

        async def go() -> None:
            await self.engine.resume(
                run_id,
                approve=True,
                max_parallel=self.settings.max_parallel,
                subscribe=feed.push,
            )

        self._spawn(run_id, go)

    async def cancel(self, run_id: str, reason: str = "cancelled from the web") -> None:
        """Stop ``run_id``: its task is cancelled, or an idle run is marked cancelled."""
        view = self.view(run_id)
        if view.finished is not None:
            raise ExecutionError(f"run {run_id} has finished ({view.finished})")
        live = self._live.get(run_id)
        if live is not None and live.scope is not None:
            live.cancel_reason = reason
            # the runner records the reason; before it runs, the task's scope is cancelled
            if not self.engine.cancel(run_id, reason):
                live.scope.cancel()
            if live.task is not None:
                await asyncio.wait({live.task})
            return
        self._finish_cancelled(run_id, reason)

    def _finish_cancelled(self, run_id: str, reason: str) -> None:
        feed = self.feed(run_id)
        if feed.finished:
            return
        last = feed.events[-1].seq if feed.events else 0
        emitter = Emitter(self.engine.log, run_id, last_seq=last)
        emitter.subscribe(feed.push)
        emitter.emit(RunCancelled(run_id=run_id, reason=reason))
        emitter.emit(RunFinished(run_id=run_id, state="cancelled", reason=reason))

    def _spawn(self, run_id: str, go: Callable[[], Awaitable[None]]) -> _Live:
        live = self._live[run_id] = _Live(run_id)
        feed = self._feeds[run_id]

        async def drive() -> None:
            try:
                with anyio.CancelScope() as scope:
                    live.scope = scope
                    await go()
            except ApprovalRequiredError:
                pass
            except Exception as error:  # recorded for the request that waits on it
                live.error = error
            finally:
                live.done = True
                del self._live[run_id]
                if live.cancel_reason is not None and feed.events:
                    self._finish_cancelled(run_id, live.cancel_reason)
                feed.poke()

        live.task = asyncio.get_running_loop().create_task(drive())
        return live

    async def stop(self) -> None:
        """Cancel the runs in flight (they record it) and close the feeds, which ends
        their event streams; the server calls it as it begins to shut down. Idempotent."""
        for live in list(self._live.values()):
            if live.scope is not None:
                live.cancel_reason = live.cancel_reason or "the web server stopped"
                if not self.engine.cancel(live.run_id, live.cancel_reason):
                    live.scope.cancel()
        tasks = {live.task for live in self._live.values() if live.task is not None}
        if tasks:
            await asyncio.wait(tasks)
        for feed in self._feeds.values():
            feed.close()

    async def aclose(self) -> None:
        """``stop``, then close the log."""
        await self.stop()
        self.engine.close()
