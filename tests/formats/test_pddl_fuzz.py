"""Fuzzing the PDDL reader: whatever the text, only plansmith errors come out."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _pddl_suite as suite
from plansmith.errors import InputError, PlansmithError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem
from plansmith.model import Domain

NAMES = ["blocks", "depot", "gripper", "logistics", "miconic", "satellite"]

COSTS = """(define (domain roads)
  (:requirements :strips :typing :negative-preconditions :equality :action-costs)
  (:types city town - loc truck)
  (:constants depot - city)
  (:predicates (at ?t - truck ?l - loc) (road ?a ?b - loc))
  (:functions (total-cost) - number (len ?a ?b - loc) - number)
  (:action drive :parameters (?t - truck ?f ?g - loc)
    :precondition (and (at ?t ?f) (road ?f ?g) (not (= ?f ?g)) (not (at ?t depot)))
    :effect (and (not (at ?t ?f)) (at ?t ?g) (increase (total-cost) (len ?f ?g)))))
"""
COSTS_PROBLEM = """(define (problem r1) (:domain roads) (:objects a b - town t - truck)
  (:init (at t a) (road a b) (= (len a b) 3) (= (total-cost) 0))
  (:goal (and (at t b) (not (at t a)))) (:metric minimize (total-cost)))
"""

TOKENS = [
    "(", "(", "(", ")", ")", ")", "define", "domain", "problem", "d", ":domain", ":requirements",
    ":strips", ":typing", ":adl", ":types", ":constants", ":predicates", ":functions", ":action",
    ":parameters", ":precondition", ":effect", ":objects", ":init", ":goal", ":metric", "minimize",
    "-", "object", "number", "t", "p", "q", "a", "b", "?x", "?y", "?", "and", "not", "=", "or",
    "when", "forall", "exists", "either", "increase", "total-cost", "5", "-3", "2.5", ";", "\n",
    "?x-y", "BLOCK", ":durative-action", ":derived", "at", "\u00e9", "\x00", "\ufeff",
]  # fmt: skip


@cache
def _sources() -> dict[str, tuple[str, list[str]]]:
    """Domain text and problem texts by name: the roads domain above, and each domain of
    the generated suite with its two smallest tasks (blocks also with the hand-written
    upper-case problem)."""
    out = {"roads": (COSTS, [COSTS_PROBLEM])}
    for name in NAMES:
        tasks = sorted((t for t in suite.suite() if t.domain == name), key=lambda t: t.objects)
        texts = [t.text for t in tasks[:2]]
        if name == "blocks":
            texts.append(suite.BLOCKS_UPPER_CASE)
        out[name] = (suite.DOMAINS[name], texts)
    return out


@cache
def _domain(name: str) -> Domain:
    return parse_pddl_domain(_sources()[name][0])


@st.composite
def _mutated(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "truncate", "swap"]))
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 40)))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            piece = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=5)))
            text = f"{text[:i]} {piece} {text[i:]}"
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "truncate":
            text = text[:i]
        else:
            text = text[:i] + text[j:] + text[i:j]
    return text


def _only_input_errors(parse: Callable[[], object]) -> None:
    """``parse`` succeeds, or raises an input error with a line and a hint (nothing else)."""
    caught: PlansmithError | None = None
    try:
        parse()
    except PlansmithError as error:
        caught = error
    if caught is not None:
        assert isinstance(caught, InputError)
        assert caught.location is not None
        assert caught.location.line is not None
        assert caught.hint


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(["roads", *NAMES]))
def test_mutated_domains_raise_only_located_input_errors(data: st.DataObject, name: str) -> None:
    text = data.draw(_mutated(_sources()[name][0]))
    _only_input_errors(lambda: parse_pddl_domain(text, "d.pddl"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(["roads", *NAMES]))
def test_mutated_problems_raise_only_located_input_errors(data: st.DataObject, name: str) -> None:
    problems = _sources()[name][1]
    text = data.draw(_mutated(data.draw(st.sampled_from(problems))))
    domain = _domain(name)
    _only_input_errors(lambda: parse_pddl_problem(text, domain, "p.pddl"))


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.sampled_from(TOKENS), max_size=60),
    kind=st.sampled_from(["domain", "problem"]),
)
def test_token_soup_raises_only_located_input_errors(tokens: list[str], kind: str) -> None:
    body = " ".join(tokens)
    if kind == "domain":
        _only_input_errors(lambda: parse_pddl_domain(f"(define (domain d) {body})", "d.pddl"))
        _only_input_errors(lambda: parse_pddl_domain(body, "d.pddl"))
    else:
        domain = _domain("roads")
        _only_input_errors(
            lambda: parse_pddl_problem(f"(define (problem p) {body})", domain, "p.pddl")
        )
        _only_input_errors(lambda: parse_pddl_problem(body, domain, "p.pddl"))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_arbitrary_text_raises_only_located_input_errors(text: str) -> None:
    _only_input_errors(lambda: parse_pddl_domain(text, "d.pddl"))
    _only_input_errors(lambda: parse_pddl_problem(text, _domain("roads"), "p.pddl"))


def test_deep_nesting_is_a_parse_error_not_a_recursion_error() -> None:
    text = "(define (domain d) (:action a :precondition " + "(and " * 5000 + ")" * 5000 + "))"
    _only_input_errors(lambda: parse_pddl_domain(text, "d.pddl"))
    with pytest.raises(InputError, match="nested deeper"):
        parse_pddl_domain(text, "d.pddl")
