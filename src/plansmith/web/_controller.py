"""The web app's one stateful object: the engine and its run table, mapped onto HTTP.

Runs are the engine's (``RunTable``): creating a run plans and binds it and stops when
it awaits approval (the web asks a person for every tier by default); approving it with
the plan's hash runs it (the engine checks the hash and records who approved: the
client's address); cancelling it goes through the engine. The controller keeps no run
state of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio

from plansmith.binding import BoundPlan
from plansmith.domains.folders import shipped_domain_dirs
from plansmith.domains.made import shipped_made_domains
from plansmith.domains.request_files import RequestFiles, read_request_inputs
from plansmith.domains.research.desk import (
    ResearchService,
    default_source_specs,
    excludes_for,
    sources_from_specs,
)
from plansmith.engine import (
    ASKED_KEY,
    MADE_KEY,
    OWNER_KEY,
    Engine,
    RunFeed,
    RunInputs,
    RunTable,
    inheritance,
    load_problem_files,
    make_plan,
    open_engine,
)
from plansmith.errors import (
    AnswerError,
    ExecutionError,
    InputError,
    Location,
)
from plansmith.execution import (
    ApprovalPolicy,
    LearnedCost,
    RunInfo,
    RunOutcome,
    RunStarted,
    learned_cost_table,
    with_action_costs,
)
from plansmith.model import JSONValue, Plan, Problem
from plansmith.web._catalog import (
    DomainEntry,
    domain_entries,
    find_domain,
    find_domains,
    made_entry,
    problem_file,
)
from plansmith.web._goals import GoalChoice, goal_problem_file
from plansmith.web._settings import WebSettings
from plansmith.web._uploads import UPLOADS, mark_used, prune_uploads
from plansmith.web._views import RunDetail, web_status

__all__ = ["Controller", "Costs"]

#: the action costs a plan is made with: the domain's (``declared``), or the ones learned
#: from the run log (``learned``: expected duration / success rate, the declared cost as
#: the prior), as ``plansmith plan --costs learned`` and the MCP face's ``make_plan``
Costs = Literal["declared", "learned"]


def _gtpyhop_problem_names(folder: Path) -> tuple[str, ...]:
    """The problems of a GTPyhop folder. The GTPyhop layer is imported here, when the
    served domains hold such a folder, not with the web app: a server without one never
    imports it."""
    from plansmith.web._gtpyhop import gtpyhop_problem_names  # noqa: PLC0415

    return gtpyhop_problem_names(folder)


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
        self.table = RunTable(
            self.engine, max_parallel=settings.max_parallel, stop_reason="the web server stopped"
        )
        self._holder: asyncio.Task[None] | None = None  # the task the table's runs go on in
        self._closing = anyio.Event()
        self.research = _research_service(settings, self.engine, self.table)

    # -- domains and plans ----------------------------------------------------------------

    def domains(self) -> list[DomainEntry]:
        """The domains of ``--domains`` (GTPyhop folders too); without it, the shipped ones."""
        s = self.settings
        if s.domains is None:
            made = [made_entry(m) for m in shipped_made_domains().values()]
            return [*domain_entries(shipped_domain_dirs(), s.servers, s.bindings), *made]
        return find_domains(s.domains, s.servers, s.bindings, _gtpyhop_problem_names)

    def entry(self, domain: str) -> DomainEntry:
        entry = find_domain(self.domains(), domain)
        if entry is None:
            raise InputError(f"no domain {domain!r}", hint="list them with GET /api/domains")
        return entry

    def _problem_path(self, entry: DomainEntry, problem: str | GoalChoice) -> Path:
        """A problem file of the domain, or the one a named goal makes (in the home)."""
        return self._request(entry, problem)[0]

    def _request(self, entry: DomainEntry, problem: str | GoalChoice) -> tuple[Path, Path | None]:
        """The problem file (a named goal's, and its inputs', is made in the home) and
        the servers file the inputs made for its runs (None: the domain's)."""
        if not isinstance(problem, GoalChoice):
            return problem_file(entry, problem), None
        files = self._files(entry, problem)
        path = goal_problem_file(entry, problem, self.engine.home / "requests", files)
        return path, files.servers_file if files is not None else None

    def _files(self, entry: DomainEntry, choice: GoalChoice) -> RequestFiles | None:
        """What the request's inputs make, as ``make_plan`` reads them (paths relative to
        the server's working folder); None for a GTPyhop folder."""
        if entry.gtpyhop:
            return None
        mark_used(self.engine.home / UPLOADS, (v for _, v in choice.inputs))  # kept longer
        return read_request_inputs(
            entry.folder,
            entry.name,
            dict(choice.inputs),
            None,
            self.engine.home,
            no_inputs_hint="choose one of its problems or named goals (GET /api/domains)",
        )

    def research_service(self) -> ResearchService:
        """The research desk, or a typed error saying how to serve one."""
        if self.research is None:
            raise InputError(
                "no research source is served here",
                hint="start `plansmith serve --research-source DIR` (or install Debian's"
                " python3-doc, which is served by default)",
            )
        return self.research

    def prune_uploads(self) -> int:
        """Delete the uploads no request named for ``upload_keep_days`` (``_uploads``)."""
        keep_s = self.settings.upload_keep_days * 86_400.0
        return prune_uploads(self.engine.home / UPLOADS, keep_s, time.time())

    def inputs(self, domain: str, problem: str | GoalChoice) -> RunInputs:
        entry = self.entry(domain)
        if entry.made is not None:
            raise InputError(
                f"domain {domain!r} is made by Python code: its runs are made, not read from files",
                hint="create its run (POST /api/runs): it is bound, then waits for approval",
            )
        path, servers = self._request(entry, problem)
        servers = servers or entry.servers
        if entry.gtpyhop:
            raise InputError(
                f"domain {domain!r} is a GTPyhop folder: it can be planned, not run",
                hint="look at its plan with POST /api/plan (or the plan page)",
            )
        if servers is None or entry.bindings is None:
            raise InputError(
                f"domain {domain!r} has no servers.json or bindings.yaml",
                hint="put them in its folder, or start `plansmith serve --servers S --bindings B`",
            )
        return RunInputs(entry.domain, path, servers, entry.bindings)

    async def plan(
        self, domain: str, problem: str | GoalChoice, *, costs: Costs = "declared"
    ) -> Plan:
        """Plan ``problem`` of ``domain`` (in a worker thread: planning is CPU work)."""
        return (await self.costed_plan(domain, problem, costs=costs))[0]

    async def costed_plan(
        self, domain: str, problem: str | GoalChoice, *, costs: Costs = "declared"
    ) -> tuple[Plan, list[LearnedCost]]:
        """``plan``, and the costs learned from the run log it was planned with (none
        for ``declared``, or when the log has no call of the domain's actions): with
        learned costs, the cheapest plan under them (``make_costed_plan``, as a run with
        those costs is planned), so the plan's hash covers the costs used."""
        entry = self.entry(domain)
        if costs == "learned":
            self._check_costed(entry)
            path = self._problem_path(entry, problem)
            loaded = load_problem_files(entry.domain, path)
            learned, table = self._learned(loaded)
            if table:
                costed = with_action_costs(loaded, table)
                return await self.engine.plan(costed, costed=True), learned
            return await anyio.to_thread.run_sync(lambda: make_plan(loaded)), learned
        return await self._plan(entry, problem), []

    async def _plan(self, entry: DomainEntry, problem: str | GoalChoice) -> Plan:
        if entry.made is not None:
            made, args = entry.made, self._made_args(entry, problem)
            return await anyio.to_thread.run_sync(lambda: made.plan_of(args)[0])
        path = self._problem_path(entry, problem)
        if entry.gtpyhop and isinstance(problem, str):
            from plansmith.web._gtpyhop import plan_gtpyhop  # noqa: PLC0415 - see below

            return await anyio.to_thread.run_sync(lambda: plan_gtpyhop(entry.folder, problem))
        return await anyio.to_thread.run_sync(
            lambda: make_plan(load_problem_files(entry.domain, path))
        )

    @staticmethod
    def _check_costed(entry: DomainEntry) -> None:
        """Learned costs are a domain made from files' (a ``costs`` error otherwise)."""
        kind = (
            "made by Python code"
            if entry.made is not None
            else "a GTPyhop folder"
            if entry.gtpyhop
            else None
        )
        if kind is not None:
            raise InputError(
                f"domain {entry.name!r} is {kind}: its actions have no costs to learn",
                location=Location(argument="costs"),
                hint="plan it with costs declared (learned costs are for a domain made from files)",
            )

    def _learned(self, problem: Problem) -> tuple[list[LearnedCost], dict[str, float]]:
        """The costs of ``problem``'s actions the run log taught (those with calls), and
        the table a run is planned and recorded with (``learned_cost_table``)."""
        found = self.engine.learned_costs(problem)
        return [c for c in found.values() if c.calls], learned_cost_table(found)

    def _cost_table(self, domain: str, inputs: RunInputs, costs: Costs) -> dict[str, float]:
        """The learned costs a run of ``inputs`` is planned with ({} for ``declared``)."""
        if costs == "declared":
            return {}
        self._check_costed(self.entry(domain))
        return self._learned(load_problem_files(inputs.domain, inputs.problem))[1]

    @staticmethod
    def _made_args(entry: DomainEntry, problem: str | GoalChoice) -> dict[str, JSONValue]:
        """A made domain's run maker's arguments: its scenario (a problem, not a goal)."""
        assert entry.made is not None
        if not isinstance(problem, str):
            raise InputError(
                f"domain {entry.name!r} is made by Python code: it has no named goals",
                hint="choose one of its problems (its scenarios: GET /api/domains)",
            )
        return entry.made.args(problem, {})

    async def check(
        self, domain: str, problem: str | GoalChoice, *, costs: Costs = "declared"
    ) -> tuple[Plan, BoundPlan]:
        """Plan, start the servers and bind; with learned costs, the plan a run with
        them makes (``Engine.check`` with the costs)."""
        if costs == "learned":
            self._check_costed(self.entry(domain))
        inputs = self.inputs(domain, problem)
        table = self._cost_table(domain, inputs, costs)
        plan, bound, _ = await self.engine.check(inputs, costs=table or None)
        return plan, bound

    # -- runs: the engine's run table ----------------------------------------------------

    async def start(self) -> None:
        """Open the run table's task group, where its runs go on: in a task of the app's
        event loop of its own, which lives until ``aclose`` (requests come and go in
        other tasks). Called as the app starts, and again by any request that starts a
        run (an app driven without its lifespan, as in tests). Idempotent."""
        loop = asyncio.get_running_loop()
        if self._holder is not None and self._holder.get_loop() is loop:
            return  # (a holder of a loop that is gone, as with a test client's: a new one)
        opened = anyio.Event()
        self._closing = anyio.Event()

        async def hold() -> None:
            async with self.table:
                if self.research is None:
                    opened.set()
                    await self._closing.wait()
                    return
                async with self.research:  # its runs in the table; its source servers
                    opened.set()
                    await self._closing.wait()

        self._holder = loop.create_task(hold())
        await opened.wait()

    def _table(self) -> RunTable:
        return self.table

    def feed(self, run_id: str) -> RunFeed:
        """The events of ``run_id`` (read from the log once; raises if there is no run)."""
        return self._table().feed(run_id)

    def view(self, run_id: str) -> RunDetail:
        """The run's view (its feed's, kept up to date event by event) and what this
        server adds to it."""
        table = self._table()
        feed = table.feed(run_id)
        info = table.info(run_id)
        return RunDetail(feed.view, table.is_live(run_id), info.created, dict(info.inputs))

    def runs(self, limit: int | None = None, before: str | None = None) -> list[dict[str, Any]]:
        """The runs of the log, newest first, with their status and step counts: at most
        ``limit`` of them, older than the run ``before`` when given (a page ends where
        the next one begins)."""
        table = self._table()
        return [self._summary(info) for info in table.list(limit=limit, before=before)]

    def _summary(self, info: RunInfo) -> dict[str, Any]:
        table = self._table()
        view = table.view(info.run_id)
        return {
            "run_id": info.run_id,
            "created": info.created,
            "status": web_status(view, table.is_live(info.run_id)),
            "inputs": {
                k: _shown_input(k, v)
                for k, v in info.inputs.items()
                if k not in (OWNER_KEY, ASKED_KEY)  # what was asked is no file
            },
            "counts": view.counts(),
            "plan_hash": view.plan_hash,
        }

    async def create_run(
        self,
        domain: str,
        problem: str | GoalChoice,
        *,
        after: str | None = None,
        costs: Costs = "declared",
    ) -> str:
        """Plan, bind and record a new run; return once it awaits approval (or runs).
        The run records what was asked (``asked``, as the MCP face's runs do): the
        domain, the problem or the named goal with its arguments, and the inputs.
        ``after``: a finished run of the same domain this one follows up (the page's
        "continue from here"): planned from its final state, its outputs inherited.
        ``costs``: ``learned``, planned with the costs the run log taught (recorded in
        ``asked`` and with the run, so that its replans and a resume use them too)."""
        entry = self.entry(domain)
        if costs == "learned":
            self._check_costed(entry)
        if after is not None:
            return await self._create_follow_up(entry, problem, after, costs)
        if entry.made is not None:
            args = self._made_args(entry, problem)
            await self.start()
            made = await self._table().create_made(
                entry.made.maker,
                args,
                owner="web",
                policy=self.policy,
                asked=_asked(domain, problem),
            )
            return made.run_id
        inputs = self.inputs(domain, problem)
        table = self._cost_table(domain, inputs, costs)
        await self.start()
        handle = await self._table().create(
            inputs,
            owner="web",
            policy=self.policy,
            asked=_asked(domain, problem, table),
            costs=table or None,
        )
        return handle.run_id

    async def _create_follow_up(
        self, entry: DomainEntry, problem: str | GoalChoice, after: str, costs: Costs
    ) -> str:
        """``create_run`` of a follow-up of run ``after``: checked before anything is
        recorded (no such run, not finished, of another domain: ``InputError``), then
        driven in the run table as every run is."""
        if entry.made is not None:
            raise InputError(
                f"domain {entry.name!r} is made by Python code: its runs cannot follow up"
                " another run",
                location=Location(argument="after"),
                hint="continue from a run of a domain made from files",
            )
        inputs = self.inputs(entry.name, problem)
        domain = load_problem_files(inputs.domain, inputs.problem).domain.name
        inheritance(self.engine.log, after, domain=domain)  # refused here, nothing recorded
        learned = self._cost_table(entry.name, inputs, costs)
        await self.start()
        table, run_id = self._table(), self.engine.new_run_id()
        asked = _asked(entry.name, problem, learned) | {"after": after}

        def go(feed: RunFeed) -> Awaitable[RunOutcome]:
            return self.engine.run(
                inputs,
                owner="web",
                policy=self.policy,
                max_parallel=table.max_parallel,
                subscribe=feed.push,
                run_id=run_id,
                asked=asked,
                after=after,
                costs=learned or None,
            )

        handle = table.start(run_id, go, owner="web")
        feed = handle.feed  # as ``RunTable.create``: once it awaits approval, runs, or ended
        while not handle.done.is_set() and not any(isinstance(e, RunStarted) for e in feed.events):
            if feed.closed:
                await handle.done.wait()
                break
            await feed.wait()
        if handle.done.is_set() and handle.error is not None:
            raise handle.error
        return run_id

    async def approve(self, run_id: str, plan_hash: str, by: str = "web") -> None:
        """``by`` approves the plan ``plan_hash`` of ``run_id``, which runs in the
        background (the engine refuses any other hash)."""
        view = self.view(run_id).view
        if view.finished is not None:
            raise ExecutionError(f"run {run_id} has finished ({view.finished})")
        if self._table().is_live(run_id):
            raise ExecutionError(f"run {run_id} is running already")
        if view.plan_hash is None:
            raise ExecutionError(f"run {run_id} has no bound plan", hint="create a new run")
        if plan_hash != view.plan_hash:  # a conflict with the page (409); the engine checks too
            raise ExecutionError(
                f"plan {plan_hash} is not the plan of run {run_id}",
                hint=f"reload the plan page: the run's plan is {view.plan_hash}",
            )
        await self.start()
        await self._table().approve(run_id, plan_hash, by=by)

    async def answer(self, run_id: str, step: str, value: JSONValue, *, by: str) -> None:
        """``by`` answers ask step ``step`` of ``run_id``, which waits for it (``awaiting
        answer``): the engine checks ``value`` against the step's answer schema (an
        ``AnswerError``, a 422 with the schema's reason: nothing is recorded and the run
        keeps waiting) and records it, then the run goes on in the background from its
        answer (as ``Engine.answer``: record, then resume)."""
        table = self._table()
        feed = table.feed(run_id)  # RunNotFoundError (404) for no such run
        await self.start()  # first: from the checks to the answer's record, no await
        handle = table.handle(run_id)
        if handle is not None and step in feed.view.run.awaiting_answer:
            await handle.done.wait()  # its engine stopped at the question: it is returning
        view = self.view(run_id).view
        if view.finished is not None:
            raise ExecutionError(
                f"run {run_id} has finished ({view.finished}): it waits for no answer",
                hint=f"see what it did in its report: GET /api/runs/{run_id}/report",
            )
        if step not in view.run.awaiting_answer:
            waiting = ", ".join(view.run.awaiting_answer) or "none"
            raise ExecutionError(
                f"step {step!r} of run {run_id} does not wait for an answer",
                location=Location(argument="step"),
                hint=f"the steps of run {run_id} that wait for one: {waiting}",
            )
        if table.is_live(run_id):
            raise ExecutionError(f"run {run_id} is running already")
        try:
            self.engine.record_answer(run_id, step, value, by=by)
        except AnswerError as error:  # the schema's reason; nothing recorded, the run waits
            error.location = error.location or Location(argument="answer")
            raise
        await table.resume(run_id)

    async def cancel(self, run_id: str, reason: str = "cancelled from the web") -> None:
        """Stop ``run_id`` through the engine (wherever it is: running, starting, or
        awaiting approval)."""
        self._check_not_finished(run_id)
        if not await self._table().cancel(run_id, reason):
            self._check_not_finished(run_id)  # it ended while the cancel was asked for
            raise ExecutionError(
                f"run {run_id} could not be cancelled here: another engine drives it",
                hint="cancel it where it runs",
            )

    def _check_not_finished(self, run_id: str) -> None:
        """A 409 (``ExecutionError``) for a run that has ended: nothing is left to cancel."""
        view = self.view(run_id).view
        if view.finished is not None:
            raise ExecutionError(
                f"run {run_id} has finished ({view.finished}): it cannot be cancelled",
                hint=f"see what it did in its report: GET /api/runs/{run_id}/report",
            )

    async def stop(self) -> None:
        """Cancel the runs in flight (they record it) and close the feeds, which ends
        their event streams; the server calls it as it begins to shut down. Idempotent."""
        await self.table.stop()

    async def aclose(self) -> None:
        """``stop``, then close the run table and the log."""
        await self.stop()
        self._closing.set()
        if self._holder is not None and self._holder.get_loop() is asyncio.get_running_loop():
            await self._holder
        self.engine.close()


def _shown_input(key: str, value: JSONValue) -> str:
    """A recorded input as the runs list shows it: a file by its name; the run maker of
    a run made by code, by its name."""
    if key == MADE_KEY and isinstance(value, dict):
        return str(value.get("maker"))
    return Path(str(value)).name


def _asked(
    domain: str, problem: str | GoalChoice, costs: Mapping[str, float] | None = None
) -> dict[str, JSONValue]:
    """What the page asked for: the run's ``asked`` (its report shows it); ``costs``:
    the learned action costs it was planned with, as the MCP face records them."""
    asked: dict[str, JSONValue] = {"domain": domain, "planned_by": "web"}
    if costs:
        asked["costs"] = {k: float(v) for k, v in sorted(costs.items())}
    if isinstance(problem, str):
        asked |= {"problem": problem, "request": f"problem {problem} of {domain}"}
        return asked
    what = "the job its inputs make"
    if problem.goal is not None:
        args = ", ".join(f"{k}={v}" for k, v in problem.args)
        what = f"goal {problem.goal}({args})"
        asked |= {"goal_name": problem.goal, "args": dict(problem.args)}
    if problem.inputs:
        asked["inputs"] = dict(problem.inputs)
        what += " with " + ", ".join(f"{k}={v}" for k, v in problem.inputs)
    asked["request"] = f"{what} of {domain}"
    return asked


def _research_service(
    settings: WebSettings, engine: Engine, table: RunTable
) -> ResearchService | None:
    """The research desk over ``settings.research_sources`` (None: the installed Python
    docs, if any), its runs in the web's run table; None when there is no source."""
    specs = settings.research_sources
    if specs is None:
        specs = tuple(default_source_specs())
    if not specs:
        return None
    sources = sources_from_specs(specs)
    return ResearchService(
        engine, sources, excludes=excludes_for(sources), share_runs=True, table=table
    )
