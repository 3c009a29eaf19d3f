"""The MCP face's operations over the engine's run table (``plansmith.engine.RunTable``).

``make_plan`` plans once, with the engine's planner, and makes the run: its plan bound
to the live tools and recorded, held for approval (``Engine.run``'s ``hold``).
``approve_plan`` records who approved that plan in the run's log; ``start_run`` goes on
with it. Nothing is planned twice, and nothing lives only in this process: a restarted
``plansmith mcp`` on the same home (or a one-shot client that opens a process per call)
finds every plan, approval and run in the log.

A plan is named by its hash; the run it names is the newest run of the caller (of
anyone, when runs are shared) made from that plan. Runs belong to the owner that made
them; the face tells the owner of a call (see ``_owner``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import anyio

from plansmith.domains.code.desk import PatchDesk
from plansmith.domains.folders import DomainFolder, objects_of, problem_of
from plansmith.domains.made import MadeDomain
from plansmith.domains.request_files import read_inputs
from plansmith.engine import (
    ASKED_KEY,
    Engine,
    RunInputs,
    RunTable,
    build_report,
    inheritance,
    report_markdown,
)
from plansmith.errors import (
    AnswerError,
    ApprovalRequiredError,
    InputError,
    Location,
    PlansmithError,
    RunNotFoundError,
    ServerStartError,
)
from plansmith.execution import (
    ApprovalPolicy,
    AskReply,
    AskRequest,
    RunInfo,
    RunView,
    learned_cost_table,
    with_action_costs,
)
from plansmith.formats import render_mermaid
from plansmith.mcp._describe import describe, describe_made, made_summary, plan_result, summary
from plansmith.mcp._status import run_status
from plansmith.mcp._types import (
    ApprovalResult,
    BindingCheck,
    DomainInfo,
    DomainList,
    PlanResult,
    RunHandle,
    RunList,
    RunReport,
    RunStatus,
    Translation,
)
from plansmith.model import JSONValue, Plan, Problem
from plansmith.planning import match_goal
from plansmith.servers import load_servers

__all__ = ["FaceService", "DriveElsewhere", "drive_with_cli", "Declined"]

#: how a run is driven outside this process (``--detach-runs``): the command for a run id
DriveElsewhere = Callable[[str], Sequence[str]]

#: how a person would not answer a question: ``declined`` it, or ``cancelled`` the asking
Declined = Literal["declined", "cancelled"]

_LISTED = 50  # runs ``list_runs`` shows, newest first
_CLIENT_CANCEL = "cancelled by the client"
_HELD = ("awaiting approval", "approved")  # made, and not started yet


def drive_with_cli(home: Path, log: str | None = None) -> DriveElsewhere:
    """``plansmith resume RUN_ID`` on ``home`` (and ``log``), in this Python."""

    def command(run_id: str) -> list[str]:
        argv = [sys.executable, "-m", "plansmith", "resume", run_id, "--home", str(home)]
        return [*argv, "--log", log] if log else argv

    return command


class FaceService:
    """See the module docstring. Enter it (``async with``) in the face's event loop: its
    run table is open while the face serves, and leaving it cancels the runs it drives.

    ``share_runs``: every caller sees every run. ``policy``: the tiers that need a
    person's approval (default ``ApprovalPolicy()``). ``drive_elsewhere``: each run
    that starts is driven by its own detached process (that command), so that it
    outlives this one (one-shot clients; see ``plansmith mcp --detach-runs``)."""

    def __init__(
        self,
        table: RunTable,
        folders: Mapping[str, DomainFolder],
        *,
        share_runs: bool = False,
        policy: ApprovalPolicy | None = None,
        drive_elsewhere: DriveElsewhere | None = None,
        made: Mapping[str, MadeDomain] | None = None,
    ) -> None:
        self.table = table
        self.engine: Engine = table.engine
        self.folders = dict(folders)
        #: domains made by code (GTPyhop's Python domains), after the folders by name
        self.made = {k: v for k, v in (made or {}).items() if k not in self.folders}
        self.share_runs = share_runs
        self.policy = policy or ApprovalPolicy()
        self.drive_elsewhere = drive_elsewhere
        self.patches = PatchDesk(self.folders, self._report)
        #: declines a host gave (elicitation), for the runs' next drive to take
        self._declines: dict[tuple[str, str], AskReply] = {}
        self._install_asker()

    def _install_asker(self) -> None:
        """The engine's runs ask through this service: an ask step takes the decline a
        host gave for it (``decline``), else the engine's own asker's reply, else none
        (the run waits, ``awaiting answer``, for ``answer`` or ``decline``)."""
        before = self.engine.asker

        async def ask(request: AskRequest) -> AskReply | None:
            reply = self._declines.pop((request.run_id, request.step), None)
            if reply is not None:
                return reply
            return None if before is None else await before(request)

        self.engine.asker = ask

    @classmethod
    def on(
        cls,
        engine: Engine,
        folders: Mapping[str, DomainFolder],
        *,
        max_runs: int = 8,
        max_parallel: int = 8,
        share_runs: bool = False,
        policy: ApprovalPolicy | None = None,
        drive_elsewhere: DriveElsewhere | None = None,
        made: Mapping[str, MadeDomain] | None = None,
    ) -> FaceService:
        """The service on a new run table of ``engine`` (``max_runs`` driven at once,
        ``max_parallel`` steps in flight each), as ``plansmith mcp`` makes it."""
        table = RunTable(
            engine,
            max_live=max_runs,
            max_parallel=max_parallel,
            stop_reason="the MCP server shut down",
        )
        return cls(
            table,
            folders,
            share_runs=share_runs,
            policy=policy,
            drive_elsewhere=drive_elsewhere,
            made=made,
        )

    async def __aenter__(self) -> FaceService:
        await self.table.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.table.__aexit__(*exc)

    # -- domains ------------------------------------------------------------------------

    def _folder(self, name: str, argument: str = "domain") -> DomainFolder:
        folder = self.folders.get(name)
        if folder is None:
            known = [*self.folders, *self.made]
            made = (
                f" ({name} is made by code: it takes inputs, not goals)"
                if self.is_made(name)
                else ""
            )
            raise InputError(
                f"no domain folder named {name!r}{made}" if made else f"no domain named {name!r}",
                location=Location(argument=argument),
                hint=f"one of: {', '.join(sorted(known)) or '(none)'}",
            )
        return folder

    def is_made(self, name: str) -> bool:
        """Whether ``name`` is a domain made by code (it takes a scenario, not a goal)."""
        return name in self.made

    def list_domains(self) -> DomainList:
        return DomainList(
            (
                *(summary(f) for f in self.folders.values()),
                *(made_summary(m) for m in self.made.values()),
            )
        )

    def describe_domain(self, name: str) -> DomainInfo:
        if name in self.made:
            return describe_made(self.made[name])
        return describe(self._folder(name, "name"))

    def validate_goal(
        self,
        domain: str,
        *,
        goal: Sequence[str] = (),
        tasks: Sequence[str] = (),
        objects: Mapping[str, str] | None = None,
        init: Sequence[str] | None = None,
    ) -> None:
        problem_of(self._folder(domain), goal=goal, tasks=tasks, objects=objects, init=init)

    # -- plans: each makes its run ------------------------------------------------------

    async def make_plan(
        self,
        domain: str,
        *,
        goal: Sequence[str] = (),
        tasks: Sequence[str] = (),
        request: str | None = None,
        objects: Mapping[str, str] | None = None,
        init: Sequence[str] | None = None,
        inputs: Mapping[str, str] | None = None,
        translation: Translation | None = None,
        owner: str = "",
        costs: str = "declared",
        after_run: str | None = None,
    ) -> PlanResult:
        """Plan, then make the run (bound, held for approval); a binding that fails is
        in ``binding`` (the run is recorded failed). ``inputs`` (or files the request
        names) become objects, facts and the runs' servers for a domain that takes them.
        A domain made by code takes its scenario (and options) as ``inputs``, or the
        request names the scenario (``_make_made_plan``). ``after_run``: a finished run
        of this domain to follow up: planned from its final state, its steps' outputs
        read by reference and not made again (checked first: ``InputError``)."""
        if domain in self.made and after_run is not None:
            raise InputError(
                f"{domain} is made by code: its runs cannot follow up another run",
                location=Location(argument="after_run"),
                hint="follow up a run of a domain folder",
            )
        if domain in self.made:
            if goal or tasks or objects or init:
                raise InputError(
                    f"{domain} is made by code: it takes a scenario, not goals, tasks,"
                    " objects or facts",
                    location=Location(argument="goal" if goal else "tasks" if tasks else "objects"),
                    hint=f'pass inputs={{"scenario": NAME}} (see describe_domain("{domain}"))',
                )
            return await self._make_made_plan(self.made[domain], request, inputs or {}, owner)
        folder = self._folder(domain)
        files = read_inputs(folder, inputs, request, self.engine.home)
        if files.prepared is not None:
            objects = {**files.prepared.objects, **(objects or {})}
            init = [*files.prepared.init, *(init or [])]
        request = files.request
        whole_job = files.prepared.tasks if files.prepared is not None else ()
        if not goal and not tasks and whole_job:  # the inputs made the job (PCR): no match
            tasks = whole_job
            translation = translation or Translation("offline", request, (), tuple(tasks))
        elif not goal and not tasks and files.maker is not None and not folder.domain.goals:
            files.check_needed(folder.name, ())  # a job of inputs alone: say what it needs
        if translation is None and request is not None and not goal and not tasks:
            known = objects if files.prepared is not None else files.objects_to_match()
            match = match_goal(folder.domain, request, objects_of(folder, known or objects))
            names = tuple(
                f"{c.name}: {c.description}" + (f" -- {c.reason}" if c.reason else "")
                for c in match.candidates
            )
            translation = Translation(
                "offline",
                request,
                match.goal,
                chosen=match.chosen,
                candidates=names,
                reason=match.reason,
                unknown=match.unknown,
            )
            if not match.sure:
                return PlanResult("needs_choice", domain, translation)
            goal = match.goal
        translation = translation or Translation("structured", None, tuple(goal), tuple(tasks))
        files.check_needed(folder.name, goal)
        text, problem = problem_of(folder, goal=goal, tasks=tasks, objects=objects, init=init)
        if after_run is not None:  # from the parent's final state (refused: nothing made)
            parent = inheritance(self.engine.log, after_run, domain=problem.domain.name)
            problem = replace(problem, init=parent.state)
        table = self._costs(problem, costs)
        if table:
            problem = with_action_costs(problem, table)
        plan = await self.engine.plan(problem, costed=bool(table))
        asked: dict[str, Any] = {
            "domain": domain,
            "request": translation.request,
            "goal": list(goal),
            "tasks": list(tasks),
            "source": translation.source,
            "llm_calls": translation.llm_calls,
            "planned_by": owner,
            "plan_hash": plan.hash,
        }
        if table:
            asked["costs"] = dict(table)
        if after_run is not None:
            asked["after"] = after_run
        if files.prepared is not None:
            asked["inputs"] = dict(files.prepared.files)
        run_id, binding = await self._make_run(
            folder, plan, text, asked, owner, files.servers_file, costs=table, after=after_run
        )
        tiers = self._tiers(plan)
        result = plan_result(
            plan,
            folder.name,
            folder.bindings,
            translation,
            binding=binding,
            tiers=tiers,
            mermaid=render_mermaid(plan),
            needs_approval=bool(tiers),
        )
        return PlanResult(**{**vars(result), "run_id": run_id})

    async def _make_made_plan(
        self, made: MadeDomain, request: str | None, inputs: Mapping[str, str], owner: str
    ) -> PlanResult:
        """Plan a domain made by code: the scenario of ``inputs``, else the one the
        request names (none or several: ``needs_choice`` with a reason per scenario);
        then make its run (held for approval) with the domain's run maker."""
        scenario = inputs.get("scenario")
        chosen = None
        if scenario is None:
            choice = made.choose(request)
            if choice.problem is None:
                translation = Translation(
                    "offline", request, candidates=choice.reasons, reason=choice.reason
                )
                return PlanResult("needs_choice", made.name, translation)
            scenario = chosen = choice.problem
        args = made.args(scenario, inputs)
        plan, bindings = await anyio.to_thread.run_sync(lambda: made.plan_of(args))
        translation = Translation("offline" if request else "structured", request, chosen=chosen)
        asked: dict[str, Any] = {
            "domain": made.name,
            "request": request or f"{scenario} of {made.name}",
            "inputs": {k: str(v) for k, v in args.items()},
            "source": translation.source,
            "llm_calls": 0,
            "planned_by": owner,
            "plan_hash": plan.hash,
        }
        binding = await self._make_made_run(made, args, plan, asked, owner)
        tiers = self._tiers(plan)
        result = plan_result(
            plan,
            made.name,
            bindings,
            translation,
            binding=binding[1],
            tiers=tiers,
            mermaid=render_mermaid(plan),
            needs_approval=bool(tiers),
        )
        return PlanResult(**{**vars(result), "run_id": binding[0]})

    async def _make_made_run(
        self,
        made: MadeDomain,
        args: Mapping[str, JSONValue],
        plan: Plan,
        asked: dict[str, Any],
        owner: str,
    ) -> tuple[str | None, BindingCheck]:
        ready = made.readiness
        if not ready.ready:
            return None, BindingCheck(
                False, (), (f"{made.name} cannot run here: {ready.reason} (fix: {ready.fix})",)
            )
        run_id = self.engine.new_run_id()
        try:
            handle = await self.table.create_made(
                made.maker,
                args,
                owner=owner,
                policy=self.policy,
                hold=True,
                asked=asked,
                run_id=run_id,
            )
        except PlansmithError as error:
            return self._recorded(run_id), BindingCheck(
                False, (), (f"{type(error).__name__}: {error}",)
            )
        made_hash = self.table.view(handle.run_id).plan_hash
        if made_hash != plan.hash:  # the maker made another plan than the one shown
            await self.table.cancel(handle.run_id, "its plan is not the plan shown")
            return run_id, BindingCheck(
                False,
                (),
                (f"the run's plan {made_hash} is not the plan shown {plan.hash}: plan again",),
            )
        return run_id, BindingCheck(True, made.servers)

    def _costs(self, problem: Problem, costs: str) -> dict[str, float]:
        """The learned action costs to plan with (``costs="learned"``: from the run log,
        where an action has calls), or none (``declared``)."""
        if costs not in ("declared", "learned"):
            raise InputError(
                f"costs {costs!r}: not declared or learned",
                location=Location(argument="costs"),
                hint="declared (the domain's) or learned (from the run log)",
            )
        if costs == "declared":
            return {}
        return learned_cost_table(self.engine.learned_costs(problem))

    def _tiers(self, plan: Plan) -> tuple[str, ...]:
        return tuple(
            sorted({s.tier.value for s in plan.steps if s.tier in self.policy.needs_person})
        )

    def _problem_file(self, text: str) -> Path:
        """The problem, by its content, in the home (written once, whole)."""
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        path = self.engine.home / "problems" / f"{digest}.yaml"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(f".{path.name}.{os.getpid()}")
            part.write_text(text, encoding="utf-8")
            part.replace(path)
        return path

    async def _make_run(  # noqa: PLR0917 - the run's parts, each its own
        self,
        folder: DomainFolder,
        plan: Plan,
        text: str,
        asked: dict[str, Any],
        owner: str,
        servers_file: Path | None = None,
        *,
        costs: Mapping[str, float] | None = None,
        after: str | None = None,
    ) -> tuple[str | None, BindingCheck]:
        ready = folder.check_readiness()  # now: a venv may have been built since the start
        why = f"the domain cannot run here: {ready.reason} (fix: {ready.fix})"
        servers_file = servers_file or folder.servers_file
        if folder.bindings is None or not servers_file.is_file():
            return None, BindingCheck(False, (), (why,))
        run_id = self.engine.new_run_id()
        inputs = RunInputs(
            folder.domain_file, self._problem_file(text), servers_file, folder.bindings_file
        )
        try:
            used = Engine.servers_used(folder.bindings, plan, load_servers(servers_file))
            await self.table.create(
                inputs,
                owner=owner,
                policy=self.policy,
                hold=True,
                plan=plan,
                asked=asked,
                run_id=run_id,
                costs=costs,
                after=after,
            )
        except PlansmithError as error:
            recorded = self._recorded(run_id)
            problems = (f"{type(error).__name__}: {error}",) + (() if ready.ready else (why,))
            return recorded, BindingCheck(False, (), problems)
        return run_id, BindingCheck(True, used)

    def _recorded(self, run_id: str) -> str | None:
        try:
            self.table.info(run_id)
        except RunNotFoundError:
            return None
        return run_id

    def _runs_of(self, plan_hash: str, owner: str | None) -> list[RunInfo]:
        """The runs made from ``plan_hash`` that ``owner`` may see (None: anyone's),
        newest first."""
        mine = self.table.list(owner=None if owner is None or self.share_runs else owner)
        return [i for i in mine if _asked(i).get("plan_hash") == plan_hash]

    def _plan_run(self, plan_hash: str, owner: str | None, prefer: tuple[str, ...] = _HELD) -> str:
        """The run ``plan_hash`` names for ``owner``: the newest in the first state of
        ``prefer`` that one is in, else the newest."""
        runs = self._runs_of(plan_hash, owner)
        if not runs:
            raise InputError(
                f"no plan with hash {plan_hash!r}"
                + ("" if owner is None or self.share_runs else " in this session"),
                location=Location(argument="plan_hash"),
                hint="call make_plan first and pass the plan_hash it returns",
            )
        states = {i.run_id: self.table.view(i.run_id).state for i in runs}
        for state in prefer:
            found = next((i.run_id for i in runs if states[i.run_id] == state), None)
            if found is not None:
                return found
        return runs[0].run_id

    def plan_document(self, plan_hash: str) -> dict[str, Any]:
        """The plan, what was asked, who approved it and the tiers that need a person."""
        view = self.table.view(self._plan_run(plan_hash, None))
        return {
            "plan": view.plan,
            "run_id": view.run_id,
            "asked": _asked_of(view),
            "approved_by": _approver(view),
            "tiers": list(view.awaiting_tiers),
        }

    def approve_plan(self, plan_hash: str, *, owner: str = "") -> ApprovalResult:
        """``owner`` approves the plan of its run (recorded in the run's log)."""
        run_id = self._plan_run(plan_hash, owner, ("awaiting approval", "approved"))
        view = self.table.view(run_id)
        _check_runnable(view, plan_hash)
        self.engine.record_approval(run_id, plan_hash, by=_approver_name(owner))
        self.table.feed(run_id).catch_up(self.engine.log.events(run_id))
        approver = _approver(self.table.view(run_id)) or _approver_name(owner)
        return ApprovalResult(plan_hash, approver, view.awaiting_tiers, run_id)

    # -- runs ---------------------------------------------------------------------------

    async def start_run(self, plan_hash: str, *, owner: str = "") -> RunHandle:
        """Go on with the run ``make_plan`` made (approved, when its tiers need it); a
        run started already is answered as it is (a repeated call starts nothing)."""
        run_id = self._plan_run(plan_hash, owner, ("approved", "awaiting approval"))
        view = self.table.view(run_id)
        if view.state not in _HELD:
            _check_runnable(view, plan_hash)
            return RunHandle(run_id, plan_hash, self.get_run_status(run_id, owner=owner).state)
        if view.awaiting_tiers and view.approved != plan_hash:
            raise ApprovalRequiredError(
                f"plan {plan_hash} has {', '.join(view.awaiting_tiers)} steps and is not approved",
                hint=f"show the plan to the user, then call approve_plan({plan_hash!r})",
            )
        if self.drive_elsewhere is not None:
            self.engine.record_approval(run_id, plan_hash, by=_approver_name(owner))
            self._detach(run_id)
            return RunHandle(run_id, plan_hash, "starting")
        await self.table.approve(run_id, plan_hash, by=_approver_name(owner))
        return RunHandle(run_id, plan_hash, self.get_run_status(run_id, owner=owner).state)

    def _detach(self, run_id: str) -> None:
        assert self.drive_elsewhere is not None
        run_dir = self.engine.run_dir(run_id)
        with (run_dir / "driver.log").open("ab") as out:
            process = subprocess.Popen(
                list(self.drive_elsewhere(run_id)),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # outlives this process and its client
            )
        (run_dir / "driver.pid").write_text(str(process.pid), encoding="utf-8")

    def _view(self, run_id: str, owner: str) -> RunView:
        try:
            mine = self.share_runs or self.table.owner(run_id) == owner
        except RunNotFoundError:
            mine = False
        if not mine:
            raise RunNotFoundError(
                f"no run {run_id!r} in this session",
                location=Location(argument="run_id"),
                hint="call list_runs to see this session's runs",
            )
        return self.table.view(run_id)

    def get_run_status(self, run_id: str, *, owner: str = "") -> RunStatus:
        return self._status(self._view(run_id, owner))

    def _status(self, view: RunView) -> RunStatus:
        run_id = view.run_id
        elsewhere = (self.engine.home / "runs" / run_id / "driver.pid").is_file()
        return run_status(
            view,
            self.table.handle(run_id),
            elsewhere=elsewhere,
            ended=self.table.last_error(run_id),
        )

    def _report(self, run_id: str, owner: str) -> dict[str, Any]:
        view = self._view(run_id, owner)
        asked = {**_asked_of(view), "approved_by": _approver(view) or "policy"}
        feed = self.table.feed(run_id)
        report = build_report(run_id, feed.events, self.engine.log, asked)
        if report["state"] == "running":  # no RunFinished (yet): the status says where
            status = self.get_run_status(run_id, owner=owner)
            report["state"], report["reason"] = status.state, status.error
            if status.questions:  # ask steps that wait for a person
                report["questions"] = [vars(q) for q in status.questions]
        return report

    def run_events(self, run_id: str, *, owner: str = "") -> list[dict[str, JSONValue]]:
        """The run's events so far, oldest first, as the CLI's ``--json`` lines."""
        self._view(run_id, owner)
        return [event.to_dict() for event in self.table.feed(run_id).events]

    def get_run_report(self, run_id: str, *, owner: str = "") -> RunReport:
        report = self._report(run_id, owner)
        return RunReport(run_id, report_markdown(report), report)

    async def cancel_run(self, run_id: str, *, owner: str = "") -> RunStatus:
        """Cancel a run (recorded ``cancelled by the client``); a run a detached process
        drives is interrupted there (it records the cancel)."""
        self._view(run_id, owner)
        if not await self.table.cancel(run_id, _CLIENT_CANCEL):
            self._interrupt_driver(run_id)
        return self.get_run_status(run_id, owner=owner)

    def _interrupt_driver(self, run_id: str) -> None:
        pid_file = self.engine.run_dir(run_id) / "driver.pid"
        if self.table.view(run_id).finished is None and pid_file.is_file():
            with contextlib.suppress(OSError, ValueError):  # gone: resumable, or finished
                os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGINT)  # Ctrl-C

    # -- ask steps: a person's answers ----------------------------------------------------

    async def settle(
        self,
        run_id: str,
        *,
        owner: str = "",
        wait: float = 60.0,
        moved: Callable[[RunStatus], Awaitable[None]] | None = None,
    ) -> RunStatus:
        """The run's status once this process drives it no more: it finished, its ask
        steps wait for an answer (``awaiting answer``), it is held for approval, or a
        process of its own drives it; or once ``wait`` seconds passed. ``moved`` is
        awaited with the status at each event meanwhile (progress)."""
        self._view(run_id, owner)
        with anyio.move_on_after(wait):
            while (handle := self.table.handle(run_id)) is not None:
                feed = handle.feed
                changed = feed.signal  # taken before looking: no event is missed
                if feed.finished or feed.closed:
                    break
                await changed.wait()
                if moved is not None:
                    await moved(self.get_run_status(run_id, owner=owner))
        return self.get_run_status(run_id, owner=owner)

    async def answer(
        self,
        run_id: str,
        step: str,
        value: JSONValue,
        *,
        owner: str = "",
        by: str,
        as_text: bool = False,
    ) -> RunStatus:
        """``by`` answers ask step ``step`` of ``run_id`` (``Engine.record_answer``: an
        answer its schema refuses is an ``AnswerError`` with the schema's reason, and
        the run keeps waiting), then the run goes on. The run's steps in flight end
        first, when it is being driven still."""
        self._view(run_id, owner)
        await self._drive_ended(run_id)
        self.engine.record_answer(run_id, step, value, by=by, as_text=as_text)
        self.table.feed(run_id).catch_up(self.engine.log.events(run_id))
        await self._go_on(run_id)
        return self.get_run_status(run_id, owner=owner)

    async def decline(
        self, run_id: str, step: str, declined: Declined, *, owner: str = "", by: str
    ) -> RunStatus:
        """``by`` would not answer ask step ``step`` (``declined``, or ``cancelled`` the
        asking): the run goes on, and its ask step takes the domain's default answer
        (recorded as declined), or fails saying there is none."""
        self._view(run_id, owner)
        await self._drive_ended(run_id)
        waiting = self.table.view(run_id).run.awaiting_answer
        if step not in waiting:
            raise AnswerError(
                f"step {step!r} of run {run_id} does not wait for an answer",
                location=Location(argument="step"),
                hint=f"the steps of run {run_id} that wait for one: "
                + (", ".join(waiting) or "none"),
            )
        if self.drive_elsewhere is not None:  # its own process asks no one here
            raise InputError(
                f"run {run_id} is driven by a process of its own: a declined question"
                " cannot be passed to it",
                hint="answer it with answer_question (the default answer, if the question has one)",
            )
        self._declines[(run_id, step)] = AskReply(None, by=by, declined=declined)
        try:
            await self._go_on(run_id)
        except BaseException:
            self._declines.pop((run_id, step), None)  # not taken: the run keeps waiting
            raise
        return self.get_run_status(run_id, owner=owner)

    async def _drive_ended(self, run_id: str) -> None:
        handle = self.table.handle(run_id)
        if handle is not None:
            await handle.done.wait()

    async def _go_on(self, run_id: str) -> None:
        """The answered run goes on: in this table, or in a process of its own."""
        if self.drive_elsewhere is not None:
            self._detach(run_id)
        else:
            await self.table.resume(run_id)

    def list_runs(self, *, owner: str = "") -> RunList:
        infos = self.table.list(owner=None if self.share_runs else owner, limit=_LISTED)
        return RunList(tuple(self._status(self.table.view(i.run_id)) for i in infos))


def _approver_name(owner: str) -> str:
    """How the log names a person who approves through this face: ``mcp:OWNER``."""
    return f"mcp:{owner or 'unknown'}"


def _check_runnable(view: RunView, plan_hash: str) -> None:
    """A run that failed before it started (a server did not start, the plan did not
    bind) cannot be approved or started: its plan must be made again."""
    if view.finished == "failed" and view.started is None:
        raise ServerStartError(
            f"plan {plan_hash} cannot run: {view.reason}",
            hint="fix the domain folder's servers.json/bindings.yaml or start the "
            "server, then call make_plan again",
        )


def _asked(info: RunInfo) -> Mapping[str, Any]:
    asked = info.inputs.get(ASKED_KEY)
    return asked if isinstance(asked, dict) else {}


def _asked_of(view: RunView) -> dict[str, Any]:
    asked = view.inputs.get(ASKED_KEY)
    return dict(asked) if isinstance(asked, dict) else {}


def _approver(view: RunView) -> str | None:
    """Who approved the run's plan: the person the log names, ``policy``, or None."""
    return view.approver or view.approved_by
