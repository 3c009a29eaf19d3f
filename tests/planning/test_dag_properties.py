"""Properties of build_plan and validate on random small STRIPS tasks with valid walks."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import combinations

from _plan_fixtures import (
    linearisations,
    random_linearisation,
    random_task,
    runs_to_goal,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.model import GroundAction, Plan, Problem
from plansmith.planning import build_plan, check_plan
from plansmith.planning._plan_steps import ground_steps

Task = tuple[Problem, list[GroundAction]]


def _final_state(problem: Problem, actions: list[GroundAction], order: list[int]) -> frozenset:
    state = problem.init
    for j in order:
        state = actions[j].apply(state)
    return state


@settings(max_examples=300, deadline=None)
@given(random_task())
def test_built_plan_always_validates(task: Task) -> None:
    problem, walk = task
    plan = build_plan(problem, walk, ())
    assert check_plan(plan, problem) == []


@settings(max_examples=200, deadline=None)
@given(random_task(max_steps=10), st.randoms(use_true_random=False))
def test_every_sampled_linearisation_reaches_the_goal_and_the_same_state(
    task: Task, rng: random.Random
) -> None:
    problem, walk = task
    plan = build_plan(problem, walk, ())
    sequential = _final_state(problem, walk, list(range(len(walk))))
    for _ in range(8):
        order = random_linearisation(plan, rng)
        assert runs_to_goal(problem, walk, order), order
        assert _final_state(problem, walk, order) == sequential


@settings(max_examples=200, deadline=None)
@given(random_task())
def test_after_lists_no_implied_edge(task: Task) -> None:
    problem, walk = task
    plan = build_plan(problem, walk, ())
    index = {s.id: i for i, s in enumerate(plan.steps)}
    ancestors: list[set[int]] = []
    for s in plan.steps:
        preds = [index[a] for a in s.after]
        assert preds == sorted(preds)
        assert all(p < index[s.id] for p in preds)
        below = set().union(*(ancestors[p] for p in preds)) if preds else set()
        assert not below & set(preds), s.id  # no edge implied by another path
        ancestors.append(below | set(preds))


@st.composite
def _reordered(draw: st.DrawFn) -> tuple[Problem, Plan]:
    """A built plan with a random DAG for ``after`` (edges point forward in the walk),
    its steps listed in a random order."""
    task = random_task(max_atoms=3, max_actions=5, max_steps=6, min_steps=2)
    problem, walk = draw(task.filter(lambda t: len(t[1]) >= 2))
    plan = build_plan(problem, walk, ())
    ids = [s.id for s in plan.steps]
    pairs = list(combinations(range(len(ids)), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    steps = [
        replace(s, after=tuple(ids[i] for i, k in sorted(chosen) if k == j))
        for j, s in enumerate(plan.steps)
    ]
    return problem, replace(plan, steps=tuple(draw(st.permutations(steps))))


@settings(max_examples=300, deadline=None)
@given(_reordered())
def test_validate_accepts_a_dag_exactly_when_every_linearisation_works(
    case: tuple[Problem, Plan],
) -> None:
    problem, plan = case
    ground, issues = ground_steps(plan, problem)
    assert issues == []
    actions = [a for a in ground if a is not None]
    all_work = all(runs_to_goal(problem, actions, order) for order in linearisations(plan))
    assert (check_plan(plan, problem) == []) == all_work
