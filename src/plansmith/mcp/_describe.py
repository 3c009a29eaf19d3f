"""Domains and plans as the MCP face shows them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from plansmith.binding import Bindings
from plansmith.domains.folders import DomainFolder
from plansmith.domains.made import MadeDomain
from plansmith.domains.requests import request_inputs
from plansmith.mcp._types import (
    ActionInfo,
    BindingCheck,
    DomainInfo,
    DomainList,
    DomainSummary,
    GoalInfo,
    InputInfo,
    PlanResult,
    StepInfo,
    Translation,
)
from plansmith.model import Plan

__all__ = [
    "summary",
    "describe",
    "made_summary",
    "describe_made",
    "plan_result",
    "with_research_tools",
]


def _servers(folder: DomainFolder) -> tuple[str, ...]:
    if folder.bindings is None:
        return ()
    return tuple(dict.fromkeys(b.server for b in folder.bindings.bindings))


def summary(folder: DomainFolder) -> DomainSummary:
    d = folder.domain
    goals = tuple(g.name for g in d.goals)
    r = folder.readiness
    return DomainSummary(
        folder.name,
        d.name,
        len(d.actions),
        len(d.tasks),
        goals,
        _servers(folder),
        ready=r.ready,
        reason=r.reason,
        fix=r.fix,
        notes=r.notes,
    )


def describe(folder: DomainFolder) -> DomainInfo:
    d = folder.domain
    actions = []
    for a in d.actions:
        b = folder.bindings.get(a.name) if folder.bindings else None
        params = tuple(f"{p.name}: {p.type}" for p in a.parameters)
        actions.append(
            ActionInfo(a.name, params, a.tier.value, b.server if b else None, b.tool if b else None)
        )
    goals = tuple(
        GoalInfo(
            g.name,
            g.description,
            tuple(f"{p.name}: {p.type}" for p in g.parameters),
            tuple(str(c) for c in g.goal),
        )
        for g in d.goals
    )
    tasks = tuple(f"{t.name}({', '.join(p.name for p in t.parameters)})" for t in d.tasks)
    predicates = tuple(f"{p.name}({', '.join(t.type for t in p.parameters)})" for p in d.predicates)
    problem = folder.problem
    objects = tuple(
        f"{o.name}: {o.type}" for o in (*d.constants, *(problem.objects if problem else ()))
    )
    init = tuple(sorted(str(a) for a in problem.init)) if problem else ()
    return DomainInfo(
        folder.name,
        d.name,
        tuple(actions),
        tasks,
        goals,
        predicates,
        objects,
        init,
        _servers(folder),
        folder.bindings is not None,
        _inputs(folder),
    )


def made_summary(made: MadeDomain) -> DomainSummary:
    """A domain made by code as ``list_domains`` shows it: its scenarios are its
    problems (``make_plan``'s ``inputs={"scenario": NAME}``, or named in the request)."""
    r = made.readiness
    scenarios = ", ".join(p.name for p in made.problems)
    return DomainSummary(
        made.name,
        made.maker,
        0,
        0,
        (),
        made.servers,
        ready=r.ready,
        reason=r.reason,
        fix=r.fix,
        notes=(f"{made.description}; scenarios: {scenarios}", *r.notes),
        kind="made",
        problems=tuple(p.name for p in made.problems),
    )


def describe_made(made: MadeDomain) -> DomainInfo:
    """A domain made by code as ``describe_domain`` shows it: what it is, and its inputs
    (the scenario, and what a run may set besides)."""
    scenario = InputInfo(
        "scenario",
        "the problem to run: " + "; ".join(f"{p.name} ({p.description})" for p in made.problems),
        (),
        (),
        "value",
        choices=tuple(p.name for p in made.problems),
    )
    others = tuple(
        InputInfo(
            i.name,
            i.description + (f" (default {i.default})" if i.default is not None else ""),
            (),
            (),
            "value",
            choices=i.choices,
        )
        for i in made.inputs
    )
    return DomainInfo(
        made.name,
        made.maker,
        (),
        (),
        (),
        (),
        (),
        (),
        made.servers,
        True,
        (scenario, *others),
        description=made.description,
        kind="made",
    )


def _inputs(folder: DomainFolder) -> tuple[InputInfo, ...]:
    maker = request_inputs(folder.path)
    if maker is None:
        return ()
    return tuple(
        InputInfo(i.name, i.description, i.formats, i.needed_by, i.kind) for i in maker.inputs
    )


def plan_result(
    plan: Plan,
    name: str,
    bindings: Bindings | None,
    translation: Translation,
    *,
    binding: BindingCheck,
    tiers: tuple[str, ...],
    mermaid: str,
    needs_approval: bool,
) -> PlanResult:
    steps = []
    for s in plan.steps:
        b = bindings.get(s.action) if bindings else None
        args = tuple(a if isinstance(a, str) else str(a) for a in s.args)
        steps.append(
            StepInfo(
                s.id,
                s.action,
                args,
                s.after,
                s.tier.value,
                b.server if b else None,
                b.tool if b else None,
            )
        )
    return PlanResult(
        "planned",
        name,
        translation,
        plan.hash,
        tuple(steps),
        mermaid,
        tiers,
        needs_approval,
        binding,
    )


def with_research_tools(listed: DomainList, sources: Mapping[str, Path]) -> DomainList:
    """The list with the research domain ready when the face serves the research tools:
    they make its servers from ``sources`` (the research domain has no servers.json)."""
    names = ", ".join(sorted(sources))
    note = f"ask with start_research(question): it searches {names} (--research-source)"
    return DomainList(
        tuple(
            dataclasses.replace(d, ready=True, reason="", fix="", notes=(note, *d.notes))
            if d.domain == "research" and not d.ready
            else d
            for d in listed.domains
        )
    )
