"""PDDL beyond STRIPS, typing, negation, equality and action costs is refused by name."""

from __future__ import annotations

import pytest

from plansmith.errors import Location, UnsupportedFeatureError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem

DOMAIN = """(define (domain d)
  (:requirements :adl :numeric-fluents)
  (:types item)
  (:predicates (p ?x - item) (q ?x - item))
  (:functions (fuel ?x - item) - number)
  (:action a
    :parameters (?x - item)
    :precondition PRE
    :effect EFF))
"""

# (feature named in the message, precondition, effect, the construct the error points at)
DOMAIN_CASES = [
    (
        "cost increases inside 'when' or 'forall'",
        "(p ?x)",
        "(when (p ?x) (increase (total-cost) 1))",
        "(increase",
    ),
    ("numeric comparisons ('>')", "(> (fuel ?x) 1)", "(q ?x)", "(> "),
    ("numeric conditions", "(= (fuel ?x) 1)", "(q ?x)", "(= "),
    ("numeric effects on 'fuel'", "(p ?x)", "(increase (fuel ?x) 1)", "(fuel ?x) 1"),
    ("numeric effects ('decrease')", "(p ?x)", "(decrease (fuel ?x) 1)", "(decrease"),
    ("numeric effects ('assign')", "(p ?x)", "(assign (fuel ?x) 1)", "(assign"),
    ("arithmetic in action costs", "(p ?x)", "(increase (total-cost) (+ (fuel ?x) 1))", "(+"),
    ("preferences", "(preference p1 (p ?x))", "(q ?x)", "(preference"),
]


@pytest.mark.parametrize(
    ("feature", "pre", "eff", "points_at"), DOMAIN_CASES, ids=[c[0] for c in DOMAIN_CASES]
)
def test_unsupported_feature_in_an_action_is_refused_by_name(
    feature: str, pre: str, eff: str, points_at: str
) -> None:
    text = DOMAIN.replace("PRE", pre).replace("EFF", eff)
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_pddl_domain(text, "d.pddl")
    error = info.value
    assert feature in error.message
    assert error.message.startswith("unsupported PDDL feature: ")
    offset = text.index(points_at)
    line = text.count("\n", 0, offset) + 1
    assert error.location == Location("d.pddl", line, offset - text.rfind("\n", 0, offset))
    assert error.hint is not None
    assert ":action-costs" in error.hint
    assert error.exit_code == 2


SECTION_CASES = [
    (
        "durative actions",
        "(:durative-action m :parameters () :duration (= ?duration 1) :condition () :effect ())",
    ),
    ("constraints", "(:constraints (always (p a)))"),
    ("constant 'c' of an 'either' type", "(:types thing) (:constants c - (either item thing))"),
    ("functions of type 'item'", "(:functions (owner) - item)"),
    ("durative actions (':duration')", "(:action m :parameters () :duration 5 :effect ())"),
]


@pytest.mark.parametrize(("feature", "section"), SECTION_CASES, ids=[c[0] for c in SECTION_CASES])
def test_unsupported_domain_construct_is_refused_with_its_line(feature: str, section: str) -> None:
    text = f"(define (domain d)\n  (:types item)\n  {section})"
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_pddl_domain(text, "d.pddl")
    assert feature in info.value.message
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == ("d.pddl", 3)


def test_derived_predicates_are_no_longer_refused() -> None:
    text = (
        "(define (domain d)\n  (:types item)\n  (:predicates (p ?x - item) (q ?x - item))\n"
        "  (:derived (p ?x) (q ?x)))"
    )
    (axiom,) = parse_pddl_domain(text, "d.pddl").axioms
    assert (axiom.name, [p.type for p in axiom.parameters]) == ("p", ["item"])
    assert axiom.loc is not None
    assert axiom.loc.line == 4


PROBLEM_CASES = [
    ("timed initial literals", "(:init (at 10 (p i)))", "(:goal (p i))"),
    ("metrics other than", "(:init (p i))", "(:goal (p i)) (:metric maximize (total-cost))"),
    ("preferences", "(:init (p i))", "(:goal (preference g (p i)))"),
    ("constraints", "(:init (p i))", "(:goal (p i)) (:constraints (always (p i)))"),
]


@pytest.mark.parametrize(
    ("feature", "init", "goal"), PROBLEM_CASES, ids=[c[0] for c in PROBLEM_CASES]
)
def test_unsupported_problem_construct_is_refused_with_its_line(
    feature: str, init: str, goal: str
) -> None:
    domain = parse_pddl_domain(DOMAIN.replace("PRE", "(p ?x)").replace("EFF", "(q ?x)"))
    text = f"(define (problem x) (:domain d) (:objects i - item)\n{init}\n{goal})"
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_pddl_problem(text, domain, "p.pddl")
    assert feature in info.value.message
    assert info.value.location is not None
    assert info.value.location.line in (2, 3)


def test_declaring_unsupported_requirements_alone_is_accepted() -> None:
    domain = parse_pddl_domain(DOMAIN.replace("PRE", "(p ?x)").replace("EFF", "(q ?x)"))
    assert domain.requirements == (":adl", ":numeric-fluents")
