"""``PlansmithService`` on the ``Engine``: the MCP face's operations.

Plans are kept by hash (their problem file under ``home/plans/HASH``); approvals are
by hash; runs are asynchronous tasks of the engine, owned by the client session that
started them, and limited in number: one more is refused with ``BusyError``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.binding import bind
from plansmith.engine import Engine, RunInputs, make_plan
from plansmith.engine_service._describe import describe, plan_result, summary
from plansmith.engine_service._folders import DomainFolder, objects_of, problem_of
from plansmith.engine_service._patch_desk import PatchDrafts
from plansmith.engine_service._runbook import RunBook
from plansmith.errors import (
    ApprovalRequiredError,
    InputError,
    Location,
    PlansmithError,
    ServerStartError,
)
from plansmith.execution import ApprovalPolicy
from plansmith.formats import render_mermaid
from plansmith.model import Plan
from plansmith.planning import match_goal
from plansmith.servers import (
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
    load_servers,
)

__all__ = ["EngineService"]


@dataclass(slots=True)
class _StoredPlan:
    folder: DomainFolder
    plan: Plan
    problem_file: Path
    translation: Translation
    binding: BindingCheck
    tiers: tuple[str, ...]
    approved_by: str | None = None
    asked: dict[str, Any] = field(default_factory=dict)


class EngineService(PatchDrafts):
    """See the module docstring. ``share_runs`` lets every session see every run.
    ``PatchDrafts`` adds what ``draft_patch`` needs (LLM-drafted patches, code domain)."""

    def __init__(
        self,
        engine: Engine,
        folders: Mapping[str, DomainFolder],
        *,
        max_runs: int = 8,
        max_parallel: int = 8,
        share_runs: bool = False,
        policy: ApprovalPolicy | None = None,
    ) -> None:
        self.engine = engine
        self.folders = dict(folders)
        self.policy = policy or ApprovalPolicy()
        self.runs = RunBook(
            engine,
            max_runs=max_runs,
            max_parallel=max_parallel,
            share_runs=share_runs,
            policy=self.policy,
        )
        self._plans: dict[str, _StoredPlan] = {}

    @property
    def share_runs(self) -> bool:
        """Whether every session sees every run (the face then lets anonymous HTTP
        calls own runs too)."""
        return self.runs.share_runs

    # -- domains ------------------------------------------------------------------------

    def _folder(self, name: str, argument: str = "domain") -> DomainFolder:
        folder = self.folders.get(name)
        if folder is None:
            raise InputError(
                f"no domain named {name!r}",
                location=Location(argument=argument),
                hint=f"one of: {', '.join(sorted(self.folders)) or '(none)'}",
            )
        return folder

    def list_domains(self) -> DomainList:
        return DomainList(tuple(summary(f) for f in self.folders.values()))

    def describe_domain(self, name: str) -> DomainInfo:
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

    # -- plans --------------------------------------------------------------------------

    async def make_plan(
        self,
        domain: str,
        *,
        goal: Sequence[str] = (),
        tasks: Sequence[str] = (),
        request: str | None = None,
        objects: Mapping[str, str] | None = None,
        init: Sequence[str] | None = None,
        translation: Translation | None = None,
        owner: str = "",
    ) -> PlanResult:
        folder = self._folder(domain)
        if translation is None and request is not None and not goal and not tasks:
            match = match_goal(folder.domain, request, objects_of(folder, objects))
            names = tuple(f"{c.name}: {c.description}" for c in match.candidates)
            translation = Translation(
                "offline", request, match.goal, chosen=match.chosen, candidates=names
            )
            if not match.sure:
                return PlanResult("needs_choice", domain, translation)
            goal = match.goal
        translation = translation or Translation("structured", None, tuple(goal), tuple(tasks))
        text, problem = problem_of(folder, goal=goal, tasks=tasks, objects=objects, init=init)
        plan = await asyncio.to_thread(make_plan, problem)
        problem_file = self.engine.home / "plans" / plan.hash / "problem.yaml"
        problem_file.parent.mkdir(parents=True, exist_ok=True)
        problem_file.write_text(text, encoding="utf-8")
        binding = await self._check_binding(folder, plan)
        tiers = tuple(
            sorted({s.tier.value for s in plan.steps if s.tier in self.policy.needs_person})
        )
        stored = self._plans.get(plan.hash)
        approved = stored.approved_by if stored else None
        asked = {
            "domain": domain,
            "request": translation.request,
            "goal": list(goal),
            "tasks": list(tasks),
            "source": translation.source,
            "llm_calls": translation.llm_calls,
            "planned_by": owner,
        }
        self._plans[plan.hash] = _StoredPlan(
            folder, plan, problem_file, translation, binding, tiers, approved, asked
        )
        return plan_result(
            plan,
            folder,
            translation,
            binding=binding,
            tiers=tiers,
            mermaid=render_mermaid(plan),
            needs_approval=bool(tiers) and approved is None,
        )

    async def _check_binding(self, folder: DomainFolder, plan: Plan) -> BindingCheck:
        if folder.bindings is None or not folder.servers_file.is_file():
            missing = "bindings.yaml" if folder.bindings is None else "servers.json"
            return BindingCheck(False, (), (f"the domain folder has no {missing}",))
        try:
            config = load_servers(folder.servers_file)
            used = Engine.servers_used(folder.bindings, plan, config)
            # the engine's pool: a face's warm servers, kept for the run that follows
            async with self.engine.open_pool(config) as pool:
                catalog = await pool.start(used)
            bind(plan, folder.domain, folder.bindings, catalog, env=os.environ)
        except PlansmithError as error:
            return BindingCheck(False, (), (f"{type(error).__name__}: {error}",))
        return BindingCheck(True, used)

    def _stored(self, plan_hash: str) -> _StoredPlan:
        stored = self._plans.get(plan_hash)
        if stored is None:
            raise InputError(
                f"no plan with hash {plan_hash!r}",
                location=Location(argument="plan_hash"),
                hint="call make_plan first and pass the plan_hash it returns",
            )
        return stored

    def plan_document(self, plan_hash: str) -> dict[str, Any]:
        stored = self._stored(plan_hash)
        return {
            "plan": stored.plan.to_dict(),
            "asked": stored.asked,
            "approved_by": stored.approved_by,
            "tiers": list(stored.tiers),
        }

    def approve_plan(self, plan_hash: str, *, owner: str = "") -> ApprovalResult:
        stored = self._stored(plan_hash)
        stored.approved_by = owner or "unknown"
        return ApprovalResult(plan_hash, stored.approved_by, stored.tiers)

    # -- runs ---------------------------------------------------------------------------

    def start_run(self, plan_hash: str, *, owner: str = "") -> RunHandle:
        stored = self._stored(plan_hash)
        if not stored.binding.ok:
            raise ServerStartError(
                f"plan {plan_hash} cannot run: {'; '.join(stored.binding.problems)}",
                hint="fix the domain folder's servers.json/bindings.yaml or start the "
                "server, then call make_plan again",
            )
        if stored.tiers and stored.approved_by is None:
            raise ApprovalRequiredError(
                f"plan {plan_hash} has {', '.join(stored.tiers)} steps and is not approved",
                hint=f"show the plan to the user, then call approve_plan({plan_hash!r})",
            )
        folder = stored.folder
        inputs = RunInputs(
            folder.domain_file, stored.problem_file, folder.servers_file, folder.bindings_file
        )
        asked = {**stored.asked, "approved_by": stored.approved_by or "policy"}
        return self.runs.start(plan_hash, inputs, asked, owner)

    def get_run_status(self, run_id: str, *, owner: str = "") -> RunStatus:
        return self.runs.status(run_id, owner)

    def get_run_report(self, run_id: str, *, owner: str = "") -> RunReport:
        return self.runs.report(run_id, owner)

    async def cancel_run(self, run_id: str, *, owner: str = "") -> RunStatus:
        return await self.runs.cancel(run_id, owner)

    def list_runs(self, *, owner: str = "") -> RunList:
        return self.runs.list(owner)

    async def aclose(self, reason: str = "the MCP server shut down") -> None:
        """Cancel the runs in flight and wait for them (their logs record the cancel,
        their tool servers are stopped)."""
        await self.runs.aclose(reason)
