"""Heuristic values on tiny hand-made tasks, and their relations on random ones."""

from __future__ import annotations

import math

import pytest
from _search_fixtures import action, atom, lit, naive_optimal_cost, neg, problem, strips_problems
from hypothesis import HealthCheck, given, settings

from plansmith.model import Number, Problem
from plansmith.planning import HEURISTICS, HeuristicName
from plansmith.planning._grounding import ground
from plansmith.planning._task import GroundTask


def _values(task: GroundTask, state: int | None = None) -> dict[str, float]:
    s = task.init if state is None else state
    return {name: make(task)(s)[0] for name, make in HEURISTICS.items()}


def _chain() -> Problem:
    # a -> b -> c -> g, one action each
    return problem(
        [
            action("ab", pre=[lit("a")], eff=[lit("b")]),
            action("bc", pre=[lit("b")], eff=[lit("c")]),
            action("cg", pre=[lit("c")], eff=[lit("g")]),
        ],
        init=[atom("a")],
        goal=[lit("g")],
    )


def _fork() -> Problem:
    # g needs p and q, each one step from s
    return problem(
        [
            action("x", pre=[lit("s")], eff=[lit("p")]),
            action("y", pre=[lit("s")], eff=[lit("q")]),
            action("z", pre=[lit("p"), lit("q")], eff=[lit("g")]),
        ],
        init=[atom("s")],
        goal=[lit("g")],
    )


def _shared(cost: Number = 1) -> Problem:
    # two goals share the step m: hadd counts it twice, hFF once
    return problem(
        [
            action("m", pre=[lit("s")], eff=[lit("p")], cost=cost),
            action("n1", pre=[lit("p")], eff=[lit("g1")]),
            action("n2", pre=[lit("p")], eff=[lit("g2")]),
        ],
        init=[atom("s")],
        goal=[lit("g1"), lit("g2")],
    )


def test_a_chain_costs_its_length_for_every_relaxation() -> None:
    values = _values(ground(_chain()))
    assert (values["max"], values["add"], values["ff"]) == (3, 3, 3)
    assert values["goalcount"] == 1
    assert values["blind"] == 1


def test_hmax_takes_the_costliest_precondition_and_hadd_the_sum() -> None:
    values = _values(ground(_fork()))
    assert (values["max"], values["add"], values["ff"]) == (2, 3, 3)


def test_hff_counts_a_shared_step_once_where_hadd_counts_it_twice() -> None:
    values = _values(ground(_shared()))
    assert (values["max"], values["add"], values["ff"]) == (2, 4, 3)
    assert values["goalcount"] == 2


def test_action_costs_weigh_in() -> None:
    values = _values(ground(_shared(cost=5)))
    assert (values["max"], values["add"], values["ff"]) == (6, 12, 7)
    assert values["blind"] == 1


def test_fractional_costs_use_the_heap_and_give_the_same_relations() -> None:
    values = _values(ground(_shared(cost=2.5)))
    assert (values["max"], values["add"], values["ff"]) == (3.5, 7, 4.5)


def test_zero_cost_actions_are_free() -> None:
    values = _values(ground(_shared(cost=0)))
    assert (values["max"], values["add"], values["ff"]) == (1, 2, 2)


def test_preferred_operators_are_the_relaxed_plan_steps_applicable_now() -> None:
    task = ground(_shared())
    h, preferred = HEURISTICS["ff"](task)(task.init)
    assert h == 3
    assert [task.operators[o].name for o in preferred] == ["m()"]


def test_preferred_operators_respect_negative_preconditions() -> None:
    prob = problem(
        [
            action("go", pre=[lit("s"), neg("blocked")], eff=[lit("g")]),
            action("unblock", pre=[lit("blocked")], eff=[neg("blocked")]),
        ],
        init=[atom("s"), atom("blocked")],
        goal=[lit("g")],
    )
    task = ground(prob)
    h, preferred = HEURISTICS["ff"](task)(task.init)
    assert h == 1  # the relaxation ignores "not blocked"
    assert list(preferred) == []  # but "go" is not applicable


def test_goal_states_are_worth_zero() -> None:
    task = ground(_chain())
    goal_state = task.init | task.goal
    assert set(_values(task, goal_state).values()) == {0}


@pytest.mark.parametrize("name", ["max", "add", "ff"])
def test_a_goal_no_action_can_reach_from_the_state_is_a_dead_end(name: HeuristicName) -> None:
    # "use" consumes the only token; nothing makes a new one
    prob = problem(
        [
            action("use", pre=[lit("token")], eff=[neg("token"), lit("spent")]),
            action("win", pre=[lit("token"), lit("spent")], eff=[lit("g")]),
        ],
        init=[atom("token")],
        goal=[lit("g")],
    )
    task = ground(prob)
    evaluate = HEURISTICS[name](task)
    use = next(op for op in task.operators if op.name == "use()")
    assert evaluate(task.init)[0] == 2
    assert evaluate(use.apply(task.init))[0] == math.inf


def test_goal_count_counts_negative_goals_too() -> None:
    prob = problem(
        [action("flip", pre=[lit("up")], eff=[neg("up"), lit("down")])],
        init=[atom("up")],
        goal=[lit("down"), neg("up")],
    )
    task = ground(prob)
    count = HEURISTICS["goalcount"](task)
    assert count(task.init)[0] == 2
    assert count(task.operators[0].apply(task.init))[0] == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strips_problems(costs=True))
def test_hmax_is_below_hff_which_is_below_hadd(prob: Problem) -> None:
    task = ground(prob)
    if task.unreachable_goal:
        return
    values = _values(task)
    if values["add"] == math.inf:
        assert values["max"] == values["ff"] == math.inf
        return
    assert values["max"] <= values["ff"] <= values["add"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strips_problems(costs=True))
def test_hmax_never_overestimates_the_optimal_cost(prob: Problem) -> None:
    task = ground(prob)
    optimal = naive_optimal_cost(prob)
    if task.unreachable_goal:
        assert optimal is None
        return
    h = HEURISTICS["max"](task)(task.init)[0]
    if h == math.inf:
        assert optimal is None
    elif optimal is not None:
        assert h <= optimal
