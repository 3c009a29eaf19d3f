"""A domain's named goals as forms: each parameter with the objects that fit it, and the
problem a chosen goal makes.

The objects are those of the domain's default problem (the one named ``problem``, else
its first); so is the initial state of the problem a goal makes. That problem is written
as YAML under the run home's ``requests/`` (named by its digest, so the same choice is the
same file) and is then planned, bound and run like any problem file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from plansmith.engine import load_problem_files
from plansmith.errors import InputError, PlansmithError
from plansmith.formats import load_domain
from plansmith.model import Domain, Problem
from plansmith.planning import ground_goal
from plansmith.web._catalog import DomainEntry

__all__ = ["GoalChoice", "goal_forms", "goal_problem_file"]


@dataclass(frozen=True, slots=True)
class GoalChoice:
    """A named goal of a domain, with an object for each of its parameters."""

    goal: str
    args: tuple[tuple[str, str], ...] = ()


def _base(entry: DomainEntry, domain: Domain) -> Problem | None:
    names = dict(entry.problems)
    path = names.get("problem") or next(iter(names.values()), None)
    return None if path is None else load_problem_files(entry.domain, path)


def _fits(domain: Domain, problem: Problem | None, type_name: str) -> list[str]:
    objects = [*domain.constants, *(problem.objects if problem else ())]
    return [o.name for o in objects if domain.types.is_subtype(o.type, type_name)]


def goal_forms(entry: DomainEntry) -> list[dict[str, object]]:
    """The named goals of ``entry`` (none for a GTPyhop folder), each parameter with the
    objects of the default problem that fit its type."""
    if entry.gtpyhop:
        return []
    try:
        domain = load_domain(entry.domain)
        base = _base(entry, domain) if domain.goals else None
    except PlansmithError:  # the domain page lists it; planning it shows the error
        return []
    return [
        {
            "name": g.name,
            "description": g.description,
            "parameters": [
                {"name": p.name, "type": p.type, "choices": _fits(domain, base, p.type)}
                for p in g.parameters
            ],
        }
        for g in domain.goals
    ]


def _args(domain: Domain, base: Problem | None, choice: GoalChoice) -> Mapping[str, str]:
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
        if value not in _fits(domain, base, wanted[name]):
            raise InputError(
                f"{value!r} is not a {wanted[name]} of this domain's problem",
                hint=f"choose one of: {', '.join(_fits(domain, base, wanted[name])) or 'none'}",
            )
    return args


def goal_problem_file(entry: DomainEntry, choice: GoalChoice, into: Path) -> Path:
    """The problem ``choice`` makes (objects and init of the default problem), written
    under ``into``; refused when the goal, a parameter or an object is not the domain's."""
    if entry.gtpyhop:
        raise InputError(
            f"domain {entry.name!r} is a GTPyhop folder: plan one of its problems",
            hint="its problems are listed by GET /api/domains",
        )
    domain = load_domain(entry.domain)
    base = _base(entry, domain)
    args = _args(domain, base, choice)
    named = next(g for g in domain.goals if g.name == choice.goal)
    data = {
        "problem": f"{choice.goal}-" + "-".join(args.values()) if args else choice.goal,
        "domain": domain.name,
        "objects": {o.name: o.type for o in base.objects} if base else {},
        "init": sorted(str(a) for a in base.init) if base else [],
        "goal": list(ground_goal(named, args)),
    }
    text = yaml.safe_dump(data, sort_keys=False)
    into.mkdir(parents=True, exist_ok=True)
    path = into / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.is_file():
        partial = path.with_suffix(".part")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return path
