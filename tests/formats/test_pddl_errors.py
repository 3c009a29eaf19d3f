"""Malformed PDDL gives a typed error with file:line:column and a hint."""

from __future__ import annotations

import pytest

from plansmith.errors import DomainError, Location, ParseError, PlansmithError, ProblemError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Domain

BLOCKS = """(define (domain blocks)
  (:requirements :strips :typing)
  (:types block)
  (:constants table - block)
  (:predicates (on ?x - block ?y - block) (clear ?x - block) (holding ?x - block))
  (:action pick
    :parameters (?x - block)
    :precondition (clear ?x)
    :effect (holding ?x)))
"""


def _domain_error(text: str) -> PlansmithError:
    with pytest.raises(PlansmithError) as info:
        parse_pddl_domain(text, "d.pddl")
    return info.value


def _problem_error(text: str, domain: Domain | None = None) -> PlansmithError:
    with pytest.raises(PlansmithError) as info:
        parse_pddl_problem(text, domain or parse_pddl_domain(BLOCKS), "p.pddl")
    return info.value


def _at(text: str, snippet: str, file: str = "d.pddl") -> Location:
    offset = text.index(snippet)
    line = text.count("\n", 0, offset) + 1
    return Location(file, line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def test_unclosed_parenthesis_reports_where_it_was_opened() -> None:
    text = "(define (domain d)\n  (:predicates (p)\n"
    error = _domain_error(text)
    assert type(error) is ParseError
    assert error.location == _at(text, "(:predicates")
    assert "never closed" in error.message
    assert str(error).startswith("d.pddl:2:3: ")
    assert error.exit_code == 2


def test_stray_closing_parenthesis_is_a_parse_error_at_it() -> None:
    text = "(define (domain d) (:predicates (p)))\n)"
    error = _domain_error(text)
    assert type(error) is ParseError
    assert error.location == Location("d.pddl", 2, 1)


def test_empty_file_and_text_after_the_definition_are_parse_errors() -> None:
    assert type(_domain_error("  ; only a comment\n")) is ParseError
    error = _domain_error("(define (domain d)) (extra)")
    assert type(error) is ParseError
    assert error.location == Location("d.pddl", 1, 21)


def test_problem_file_passed_as_domain_says_so() -> None:
    error = _domain_error("(define (problem p) (:domain d))")
    assert type(error) is ParseError
    assert "problem file" in error.message


def test_invalid_name_is_a_parse_error() -> None:
    text = "(define (domain d) (:predicates (p) (9lives ?x)))"
    error = _domain_error(text)
    assert type(error) is ParseError
    assert error.location == _at(text, "9lives")


def test_unknown_predicate_in_a_precondition_suggests_the_closest_name() -> None:
    text = BLOCKS.replace("(clear ?x)\n", "(claer ?x)\n")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.location == _at(text, "claer")
    assert error.hint == "did you mean 'clear'?"
    assert "action 'pick'" in error.message


def test_wrong_arity_names_the_declaration() -> None:
    text = BLOCKS.replace("(holding ?x)))", "(on ?x)))")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.location == _at(text, "(on ?x)))")
    assert "takes 2 argument(s), got 1" in error.message
    assert error.hint is not None
    assert "(on ?x - block ?y - block)" in error.hint


def test_argument_type_clash_is_a_domain_error() -> None:
    text = BLOCKS.replace("(:types block)", "(:types block robot)").replace(
        "(?x - block)", "(?x - robot)"
    )
    error = _domain_error(text)
    assert type(error) is DomainError
    assert "of type 'robot'" in error.message
    assert error.location == _at(text, "?x)\n    :effect")


def test_unknown_type_suggests_the_closest_type() -> None:
    text = BLOCKS.replace("(?x - block)", "(?x - blok)")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.hint == "did you mean 'block'?"
    assert error.location == _at(text, "blok")


def test_duplicate_action_points_at_both_definitions() -> None:
    text = BLOCKS[:-2] + "\n  (:action pick :effect (holding table)))"
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.location == Location("d.pddl", 10, 3)
    assert error.hint is not None
    assert "d.pddl:6:3" in error.hint


def test_undeclared_variable_in_an_action_suggests_a_parameter() -> None:
    text = BLOCKS.replace("(holding ?x)))", "(holding ?xx)))")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert "undeclared variable '?xx'" in error.message
    assert error.hint == "did you mean '?x'?"


def test_unknown_constant_in_an_action_is_a_domain_error() -> None:
    text = BLOCKS.replace("(holding ?x)))", "(on ?x tabel)))")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.hint == "did you mean 'table'?"


def test_duplicate_predicate_and_duplicate_parameter_are_domain_errors() -> None:
    assert type(_domain_error(BLOCKS.replace("(clear ?x - block)", "(on ?x)"))) is DomainError
    assert type(_domain_error(BLOCKS.replace("(?x - block)", "(?x ?x - block)"))) is DomainError


def test_type_cycle_and_two_parents_are_domain_errors() -> None:
    cycle = _domain_error("(define (domain d) (:types a - b b - c c - a))")
    assert type(cycle) is DomainError
    assert "cycle" in cycle.message
    two = _domain_error("(define (domain d) (:types a - b a - c))")
    assert type(two) is DomainError
    assert two.location == Location("d.pddl", 1, 34)


def test_unknown_requirement_and_section_suggest_the_right_word() -> None:
    req = _domain_error(BLOCKS.replace(":typing", ":negative-precondition"))
    assert type(req) is DomainError
    assert req.hint == "did you mean ':negative-preconditions'?"
    sec = _domain_error(BLOCKS.replace("(:predicates", "(:predicate"))
    assert type(sec) is DomainError
    assert sec.hint == "did you mean ':predicates'?"


def test_equality_as_an_effect_and_negative_cost_are_domain_errors() -> None:
    assert type(_domain_error(BLOCKS.replace("(holding ?x)))", "(= ?x ?x)))"))) is DomainError
    text = BLOCKS.replace("(holding ?x)))", "(increase (total-cost) -2)))")
    assert type(_domain_error(text)) is DomainError


def test_problem_for_another_domain_names_both() -> None:
    text = "(define (problem p) (:domain blox) (:objects a - block) (:init) (:goal (clear a)))"
    error = _problem_error(text)
    assert type(error) is ProblemError
    assert "'blox'" in error.message
    assert "'blocks'" in error.message
    assert error.location == _at(text, "blox", "p.pddl")


def test_a_domain_name_that_differs_only_in_hyphens_and_underscores_is_the_same() -> None:
    domain = parse_pddl_domain(BLOCKS.replace("(domain blocks)", "(domain grid-blocks)"))
    text = (
        "(define (problem p) (:domain grid_blocks) (:objects a - block) (:init) (:goal (clear a)))"
    )
    assert parse_pddl_problem(text, domain, "p.pddl").name == "p"
    error = _problem_error(text.replace("grid_blocks", "gridblocks"), domain)
    assert type(error) is ProblemError
    assert "'gridblocks'" in error.message


def test_unknown_object_in_the_init_suggests_a_declared_one() -> None:
    text = (
        "(define (problem p) (:domain blocks)\n (:objects apple - block)\n"
        " (:init (clear appel))\n (:goal (clear apple)))"
    )
    error = _problem_error(text)
    assert type(error) is ProblemError
    assert error.location == Location("p.pddl", 3, 16)
    assert error.hint == "did you mean 'apple'?"


def test_unknown_predicate_in_the_goal_is_a_problem_error() -> None:
    text = "(define (problem p) (:objects a - block) (:init) (:goal (holds a)))"
    error = _problem_error(text)
    assert type(error) is ProblemError
    assert "in the goal" in error.message
    assert error.hint == "did you mean 'holding'?"


def test_object_of_a_supertype_cannot_fill_a_subtype_slot_in_the_init() -> None:
    domain = parse_pddl_domain(BLOCKS.replace("(:types block)", "(:types block - thing thing)"))
    text = "(define (problem p) (:objects x - thing) (:init (clear x)) (:goal (clear x)))"
    error = _problem_error(text, domain)
    assert type(error) is ProblemError
    assert error.location == _at(text, "x))", "p.pddl")


def test_problem_semantic_mistakes_are_problem_errors() -> None:
    cases = [
        "(define (problem p) (:objects a - brick) (:init) (:goal (clear a)))",
        "(define (problem p) (:objects a - block) (:init))",
        "(define (problem p) (:objects a - block) (:init (clear ?x)) (:goal (clear a)))",
        "(define (problem p) (:objects a - block table) (:init) (:goal (clear a)))",
        "(define (problem p) (:objects a) (:init (clear a) (not (clear a))) (:goal (clear a)))",
    ]
    for text in cases:
        error = _problem_error(text)
        assert type(error) is ProblemError, text
        assert error.location is not None
        assert error.location.file == "p.pddl"
        assert error.location.line is not None
        assert error.hint


def test_conflicting_function_values_are_a_problem_error() -> None:
    domain = parse_pddl_domain(
        "(define (domain d) (:predicates (p)) (:functions (len ?a) - number)"
        " (:action go :parameters (?a) :effect (and (p) (increase (total-cost) (len ?a)))))"
    )
    text = "(define (problem q) (:objects a) (:init (= (len a) 1) (= (len a) 2)) (:goal (p)))"
    error = _problem_error(text, domain)
    assert type(error) is ProblemError
    assert error.location == _at(text, "(= (len a) 2)", "p.pddl")


def test_syntax_mistakes_in_a_problem_are_parse_errors() -> None:
    cases = [
        "(define (problem p) (:objects a - block) (:init (clear a)) (:goal (clear a))",
        "(define (problem p) (:objects a - ) (:init) (:goal (clear a)))",
        "(define (problem p) (:objects a - block) (:init clear) (:goal (clear a)))",
        "(define (problem p) (:objects a - block) (:init) (:goal (clear a)) (:goal (clear a)))",
        "(define (domain p))",
    ]
    for text in cases:
        error = _problem_error(text)
        assert type(error) is ParseError, text
        assert error.location is not None
        assert error.location.line is not None


def test_negative_function_value_is_a_problem_error() -> None:
    domain = parse_pddl_domain(
        "(define (domain d) (:predicates (p)) (:functions (len ?a) - number)"
        " (:action go :parameters (?a) :effect (and (p) (increase (total-cost) (len ?a)))))"
    )
    text = "(define (problem q) (:objects a) (:init (= (len a) -4)) (:goal (p)))"
    error = _problem_error(text, domain)
    assert type(error) is ProblemError
    assert error.location == _at(text, "-4", "p.pddl")


def test_undeclared_variable_in_an_action_without_parameters_says_to_declare_it() -> None:
    text = BLOCKS.replace(":parameters (?x - block)", ":parameters ()")
    error = _domain_error(text)
    assert type(error) is DomainError
    assert error.hint == "declare it in the action's :parameters"


def test_variable_in_a_goal_is_a_problem_error() -> None:
    error = _problem_error("(define (problem p) (:objects a - block) (:init) (:goal (clear ?x)))")
    assert type(error) is ProblemError
    assert error.hint is not None
    assert "only allowed inside actions" in error.hint


def test_stray_closing_parenthesis_is_located_where_the_imbalance_starts() -> None:
    text = BLOCKS.replace(":effect (holding ?x)))", ":effect (holding ?x))") + "\n)\n"
    text = text.replace("(:action pick", "(:action pick)")
    error = _domain_error(text)
    assert type(error) is ParseError
    assert error.location == _at(text, ")\n    :parameters")
    assert error.location.line == 6
