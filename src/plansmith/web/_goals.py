"""A domain's named goals as forms: each parameter with the objects that fit it, and the
problem a chosen goal makes; and a domain's inputs (``plansmith.domains.requests``).

The objects are those of the domain's default problem (the one named ``problem``, else
its first); so is the initial state of the problem a goal makes. A request that gives the
domain's inputs (files, a folder, values) takes its objects and initial state from them
instead, as ``make_plan`` does on the MCP face: a goal's parameter then fits an input by
name ("gene"), and a domain whose inputs make the whole job (the lab's PCR) plans it with
no goal at all. The problem is written as YAML under the run home's ``requests/`` (named
by its digest, so the same choice is the same file) and is then planned, bound and run
like any problem file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from plansmith.domains.request_files import RequestFiles
from plansmith.domains.requests import request_inputs
from plansmith.engine import load_problem_files
from plansmith.errors import InputError, PlansmithError
from plansmith.formats import load_domain
from plansmith.model import Domain, Problem
from plansmith.planning import ground_goal
from plansmith.web._catalog import DomainEntry

__all__ = ["GoalChoice", "goal_forms", "goal_problem_file", "input_forms"]


@dataclass(frozen=True, slots=True)
class GoalChoice:
    """A named goal of a domain, with an object for each of its parameters, and the
    domain's inputs the request gives (``goal`` None: the job the inputs make)."""

    goal: str | None
    args: tuple[tuple[str, str], ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()


def _base(entry: DomainEntry, domain: Domain) -> Problem | None:
    names = dict(entry.problems)
    path = names.get("problem") or next(iter(names.values()), None)
    return None if path is None else load_problem_files(entry.domain, path)


def _fits(domain: Domain, objects: Mapping[str, str], type_name: str) -> list[str]:
    named = {**{c.name: c.type for c in domain.constants}, **objects}
    return [n for n, t in named.items() if domain.types.is_subtype(t, type_name)]


def _objects(problem: Problem | None) -> dict[str, str]:
    return {o.name: o.type for o in problem.objects} if problem else {}


def _input_objects(entry: DomainEntry) -> dict[str, str]:
    """Each input the domain takes, as the object it becomes (named as the input)."""
    maker = None if entry.gtpyhop or entry.made else request_inputs(entry.folder)
    return {s.name: s.type for s in maker.inputs} if maker is not None else {}


def input_forms(entry: DomainEntry) -> list[dict[str, object]]:
    """The inputs ``entry`` takes (none for a folder that takes none): each one's name,
    what is expected, its kind (``file``, ``folder`` or ``value``), the formats it may be
    in and the goals that need it."""
    maker = None if entry.gtpyhop or entry.made else request_inputs(entry.folder)
    if maker is None:
        return []
    return [
        {
            "name": s.name,
            "description": s.description,
            "kind": s.kind,
            "formats": list(s.formats),
            "needed_by": list(s.needed_by),
        }
        for s in maker.inputs
    ]


def goal_forms(entry: DomainEntry) -> list[dict[str, object]]:
    """The named goals of ``entry`` (none for a GTPyhop folder), each parameter with the
    objects of the default problem that fit its type."""
    if entry.gtpyhop or entry.made:
        return []
    try:
        domain = load_domain(entry.domain)
        base = _base(entry, domain) if domain.goals else None
    except PlansmithError:  # the domain page lists it; planning it shows the error
        return []
    objects = {**_input_objects(entry), **_objects(base)}  # an input fits by its name, first
    return [
        {
            "name": g.name,
            "description": g.description,
            "parameters": [
                {"name": p.name, "type": p.type, "choices": _fits(domain, objects, p.type)}
                for p in g.parameters
            ],
        }
        for g in domain.goals
    ]


def _args(domain: Domain, objects: Mapping[str, str], choice: GoalChoice) -> Mapping[str, str]:
    named = next((g for g in domain.goals if g.name == choice.goal), None)
    if named is None:
        known = ", ".join(g.name for g in domain.goals) or "none"
        raise InputError(f"no goal {choice.goal!r}", hint=f"its named goals: {known}")
    args = dict(choice.args)
    wanted = {p.name: p.type for p in named.parameters}
    if set(args) != set(wanted):
        raise InputError(
            f"goal {choice.goal!r} takes {', '.join(wanted) or 'no parameters'}",
            hint="give an object for each of its parameters, and nothing else",
        )
    for name, value in args.items():
        fits = _fits(domain, objects, wanted[name])
        if value not in fits:
            raise InputError(
                f"{value!r} is not a {wanted[name]} of this domain's problem",
                hint=f"choose one of: {', '.join(fits) or 'none'}",
            )
    return args


def goal_problem_file(
    entry: DomainEntry, choice: GoalChoice, into: Path, files: RequestFiles | None = None
) -> Path:
    """The problem ``choice`` makes, written under ``into``: its objects and init are
    those the request's inputs made (``files``), else the default problem's; refused
    when the goal, a parameter, an object or an input is not the domain's, or when an
    input the goal (or the job) needs is missing."""
    if entry.gtpyhop or entry.made:
        raise InputError(
            f"domain {entry.name!r} is made by Python code: plan one of its problems",
            hint="its problems are listed by GET /api/domains",
        )
    domain = load_domain(entry.domain)
    prepared = files.prepared if files is not None else None
    if prepared is not None:
        objects, init = dict(prepared.objects), sorted(prepared.init)
    else:
        base = _base(entry, domain)
        objects, init = _objects(base), sorted(str(a) for a in base.init) if base else []
    data: dict[str, object] = {"domain": domain.name, "objects": objects, "init": init}
    if choice.goal is None:  # the job the inputs make (the lab's PCR)
        tasks = list(prepared.tasks) if prepared is not None else []
        if not tasks:
            if files is not None:
                files.check_needed(entry.name, ())
            known = ", ".join(g.name for g in domain.goals) or "none"
            raise InputError(
                f"domain {entry.name!r} makes no job of its inputs alone: choose a goal",
                hint=f"its named goals: {known}",
            )
        data = {"problem": f"{entry.name}-inputs", **data, "tasks": tasks}
    else:
        fitting = objects if prepared is not None else {**objects, **_input_objects(entry)}
        args = _args(domain, fitting, choice)
        named = next(g for g in domain.goals if g.name == choice.goal)
        goal = list(ground_goal(named, args))
        if files is not None:
            files.check_needed(entry.name, goal)
        name = f"{choice.goal}-" + "-".join(args.values()) if args else choice.goal
        data = {"problem": name, **data, "goal": goal}
    text = yaml.safe_dump(data, sort_keys=False)
    into.mkdir(parents=True, exist_ok=True)
    path = into / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.is_file():
        partial = path.with_suffix(".part")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return path
