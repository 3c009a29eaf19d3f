"""What the PDDL reader supports: typing, constants, negation, equality, action costs."""

from __future__ import annotations

from plansmith.errors import Location
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Atom, Equality, Literal, TypedName

ROADS = """
(define (domain Roads)
  (:requirements :strips :typing :negative-preconditions :equality :action-costs)
  (:types city town - loc  truck)
  (:constants depot - city)
  (:predicates (at ?t - truck ?l - loc) (road ?a ?b - loc) (closed ?a - loc))
  (:functions (total-cost) - number (road-length ?a ?b - loc) - number)
  (:action drive
    :parameters (?t - truck ?from ?to - loc)
    :precondition (and (at ?t ?from) (road ?from ?to) (not (closed ?to))
                       (not (= ?from ?to)))
    :effect (and (not (at ?t ?from)) (at ?t ?to)
                 (increase (total-cost) (road-length ?from ?to))))
  (:action refuel
    :parameters (?t - truck)
    :precondition (and (at ?t depot) (= ?t ?t))
    :effect (increase (total-cost) 5))
  (:action wait :parameters () :precondition () :effect ()))
"""

ROADS_PROBLEM = """
(define (problem two-towns) (:domain roads)
  (:objects a b - town t1 - truck)
  (:init (at t1 a) (road a b) (road b a) (road a depot)
         (= (road-length a b) 7) (= (road-length b a) 2.5) (= (total-cost) 0))
  (:goal (and (at t1 b) (not (closed b))))
  (:metric minimize (total-cost)))
"""


def test_typed_domain_reads_types_constants_predicates_and_functions() -> None:
    domain = parse_pddl_domain(ROADS, "roads.pddl")
    assert domain.name == "roads"
    assert dict(domain.types.parents) == {
        "city": "loc",
        "town": "loc",
        "loc": "object",
        "truck": "object",
    }
    assert domain.constants == (TypedName("depot", "city"),)
    assert [p.name for p in domain.predicates] == ["at", "road", "closed"]
    road = domain.predicate("road")
    assert road is not None
    assert [(p.name, p.type) for p in road.parameters] == [("?a", "loc"), ("?b", "loc")]
    assert [f.name for f in domain.functions] == ["total-cost", "road-length"]
    assert domain.requirements[-1] == ":action-costs"


def test_negative_preconditions_and_inequality_become_literals_and_equalities() -> None:
    drive = parse_pddl_domain(ROADS).action("drive")
    assert drive is not None
    assert drive.precondition == (
        Literal(Atom("at", ("?t", "?from"))),
        Literal(Atom("road", ("?from", "?to"))),
        Literal(Atom("closed", ("?to",)), positive=False),
        Equality("?from", "?to", positive=False),
    )


def test_equality_in_a_precondition_may_use_constants() -> None:
    refuel = parse_pddl_domain(ROADS).action("refuel")
    assert refuel is not None
    assert refuel.precondition == (Literal(Atom("at", ("?t", "depot"))), Equality("?t", "?t"))


def test_action_costs_are_numbers_or_function_atoms() -> None:
    domain = parse_pddl_domain(ROADS)
    costs = {a.name: a.cost for a in domain.actions}
    assert costs["drive"] == Atom("road-length", ("?from", "?to"))
    assert costs["refuel"] == 5
    assert costs["wait"] == 0  # the domain has costs: an action without an increase costs 0


def test_actions_cost_one_when_the_domain_has_no_cost_increases() -> None:
    text = ROADS.replace("(increase (total-cost) (road-length ?from ?to))", "").replace(
        ":effect (increase (total-cost) 5)", ":effect ()"
    )
    assert {a.cost for a in parse_pddl_domain(text).actions} == {1}


def test_several_numeric_increases_add_up() -> None:
    text = ROADS.replace(
        "(increase (total-cost) 5)", "(and (increase (total-cost) 5) (increase (total-cost) 2.5))"
    )
    refuel = parse_pddl_domain(text).action("refuel")
    assert refuel is not None
    assert refuel.cost == 7.5


def test_problem_reads_function_values_as_sorted_pairs() -> None:
    problem = parse_pddl_problem(ROADS_PROBLEM, parse_pddl_domain(ROADS))
    assert problem.function_values == (
        (Atom("road-length", ("a", "b")), 7),
        (Atom("road-length", ("b", "a")), 2.5),
        (Atom("total-cost"), 0),
    )
    assert Atom("road", ("a", "depot")) in problem.init
    assert len(problem.init) == 4
    assert problem.goal == (
        Literal(Atom("at", ("t1", "b"))),
        Literal(Atom("closed", ("b",)), False),
    )
    assert [o.name for o in problem.all_objects] == ["depot", "a", "b", "t1"]


def test_parameters_keep_their_question_mark_and_never_clash_with_constants() -> None:
    text = ROADS.replace("(?t - truck)\n", "(?depot - truck)\n").replace(
        "(at ?t depot) (= ?t ?t)", "(at ?depot depot)"
    )
    refuel = parse_pddl_domain(text).action("refuel")
    assert refuel is not None
    assert refuel.parameters == (TypedName("?depot", "truck"),)
    assert refuel.precondition == (Literal(Atom("at", ("?depot", "depot"))),)


def _where(text: str, snippet: str, file: str) -> Location:
    """Where ``snippet`` first starts in ``text`` (line and column from 1)."""
    offset = text.index(snippet)
    line = text.count("\n", 0, offset) + 1
    return Location(file, line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def test_elements_keep_their_file_line_and_column() -> None:
    domain = parse_pddl_domain(ROADS, "roads.pddl")
    drive = domain.action("drive")
    assert drive is not None
    assert drive.loc == _where(ROADS, "(:action drive", "roads.pddl")
    assert drive.parameters[1].loc == _where(ROADS, "?from ?to - loc)", "roads.pddl")
    assert drive.precondition[2].loc == _where(ROADS, "(not (closed ?to))", "roads.pddl")
    assert domain.constants[0].loc == _where(ROADS, "depot - city", "roads.pddl")
    road = domain.predicate("road")
    assert road is not None
    assert road.loc == _where(ROADS, "(road ?a ?b - loc)", "roads.pddl")
    problem = parse_pddl_problem(ROADS_PROBLEM, domain, "p.pddl")
    assert problem.objects[2].loc == _where(ROADS_PROBLEM, "t1 - truck", "p.pddl")


def test_a_variable_of_a_supertype_may_fill_a_subtype_slot() -> None:
    text = ROADS.replace("(?t - truck ?from ?to - loc)", "(?t ?from ?to)")
    drive = parse_pddl_domain(text).action("drive")
    assert drive is not None
    assert {p.type for p in drive.parameters} == {"object"}


def test_sections_may_come_in_any_order_and_repeat() -> None:
    text = """(define (domain d)
      (:action a :effect (p))
      (:predicates (p))
      (:predicates (q ?x))
      (:requirements :strips) (:requirements :strips :adl))"""
    domain = parse_pddl_domain(text)
    assert [p.name for p in domain.predicates] == ["p", "q"]
    assert domain.requirements == (":strips", ":adl")


def test_declared_adl_flag_alone_is_accepted() -> None:
    text = (
        "(define (domain d) (:requirements :adl :conditional-effects)"
        " (:predicates (p)) (:action a :effect (p)))"
    )
    assert parse_pddl_domain(text).requirements == (":adl", ":conditional-effects")


def test_parent_type_without_its_own_declaration_is_a_child_of_object() -> None:
    text = "(define (domain d) (:types car - vehicle) (:predicates (p ?x - vehicle)))"
    assert parse_pddl_domain(text).types.parent("vehicle") == "object"


def test_comments_blank_lines_bom_and_crlf_are_tolerated() -> None:
    text = "\ufeff; a comment\r\n(define (domain d) ; here too\r\n\r\n (:predicates (p)))\r\n"
    assert parse_pddl_domain(text).predicates[0].name == "p"


def test_goal_may_hold_equalities_between_objects() -> None:
    domain = parse_pddl_domain("(define (domain d) (:predicates (p ?x)))")
    problem = parse_pddl_problem(
        "(define (problem q) (:domain d) (:objects a b) (:init (p a))"
        " (:goal (and (p a) (not (= a b)))))",
        domain,
    )
    assert problem.goal == (Literal(Atom("p", ("a",))), Equality("a", "b", positive=False))


def test_negative_init_literals_are_skipped_under_the_closed_world() -> None:
    domain = parse_pddl_domain("(define (domain d) (:predicates (p ?x)))")
    problem = parse_pddl_problem(
        "(define (problem q) (:objects a b) (:init (p a) (not (p b))) (:goal (p b)))", domain
    )
    assert problem.init == frozenset({Atom("p", ("a",))})


def test_object_redeclaring_a_constant_with_the_same_type_is_kept_once() -> None:
    domain = parse_pddl_domain("(define (domain d) (:constants k) (:predicates (p ?x)))")
    problem = parse_pddl_problem(
        "(define (problem q) (:objects k a) (:init) (:goal (p k)))", domain
    )
    assert [o.name for o in problem.all_objects] == ["k", "a"]
