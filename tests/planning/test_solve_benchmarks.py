"""The generated PDDL suite (``tests/_pddl_suite.py``): every task grounds, the default
configuration solves it with a plan the validator accepts, and the admissible searches
find the optimal length, known by construction or agreed on by independent searches."""

from __future__ import annotations

import pytest
from _search_fixtures import naive_optimal_cost, replays

import _pddl_suite as suite
from plansmith.model import GroundAction, Problem
from plansmith.planning import (
    HEURISTICS,
    HeuristicName,
    PlanOptions,
    SearchName,
    build_plan,
    ground,
    solve,
    validate,
)

TASKS = suite.suite()
IDS = [t.id for t in TASKS]


def _validated(problem: Problem, actions: tuple[GroundAction, ...], options: PlanOptions) -> None:
    """The actions replay to the goal, and the project's validator accepts their plan."""
    assert replays(problem, actions)
    validate(build_plan(problem, actions, options.settings()), problem)


def test_the_suite_covers_six_domains_with_unique_names() -> None:
    assert len(TASKS) == 44
    assert len(set(IDS)) == len(IDS)
    by_domain = {d: [t for t in TASKS if t.domain == d] for d in suite.DOMAINS}
    assert sorted(by_domain) == ["blocks", "depot", "gripper", "logistics", "miconic", "satellite"]
    for tasks in by_domain.values():
        assert len(tasks) >= 7
        assert any(t.optimal is not None for t in tasks)  # one built to a known optimum
        assert max(t.objects for t in tasks) >= 2 * min(t.objects for t in tasks)


def test_the_generators_are_deterministic_and_the_seed_matters() -> None:
    assert suite.blocks_random(9, 4) == suite.task("blocks", "blocks-9-s4")
    assert suite.blocks_random(9, 4).text != suite.blocks_random(9, 5).text
    assert suite.logistics_random(3, 3, 5, 1, 2).text != suite.logistics_random(3, 3, 5, 1, 3).text
    assert suite.miconic_random(4, 8, 2).text != suite.miconic_random(4, 8, 3).text
    assert suite.depot_random(1, 2, 2, 3, 2).text != suite.depot_random(1, 2, 2, 3, 3).text
    assert suite.satellite_random(2, 3, 7, 4, 2).text != suite.satellite_random(2, 3, 7, 4, 3).text


@pytest.mark.parametrize("balls", range(1, 9))
def test_the_gripper_optimum_is_three_per_ball_less_one_when_even(balls: int) -> None:
    expected = 3 * balls - 1 if balls % 2 == 0 else 3 * balls
    assert suite.gripper_optimum(balls) == expected
    assert suite.gripper(balls).optimal == expected


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_every_task_grounds_with_a_reachable_goal(task: suite.Task) -> None:
    grounded = ground(suite.load(task))
    assert grounded.unreachable_goal == ()
    assert grounded.operators
    assert not grounded.is_goal(grounded.init)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_the_default_configuration_solves_every_task(task: suite.Task) -> None:
    problem = suite.load(task)
    options = PlanOptions()
    result = solve(problem, options)
    _validated(problem, result.actions, options)
    assert result.cost == len(result.actions)
    # No plan is shorter than the optimum, nor than LM-cut's (admissible) estimate.
    grounded = ground(problem)
    assert len(result.actions) >= HEURISTICS["lmcut"](grounded)(grounded.init)[0]
    if task.optimal is not None:
        assert len(result.actions) >= task.optimal


def _length(problem: Problem, search: SearchName, heuristic: HeuristicName) -> int:
    options = PlanOptions(search=search, heuristic=heuristic)
    result = solve(problem, options)
    _validated(problem, result.actions, options)
    assert result.cost == len(result.actions)
    return len(result.actions)


# Small enough for breadth-first search and A* with hmax in well under a second each.
OPTIMAL = [
    ("blocks", "reverse-4"),
    ("blocks", "blocks-4-s1"),
    ("blocks", "blocks-5-s2"),
    ("blocks", "blocks-7-s3"),
    ("gripper", "gripper-4"),
    ("gripper", "gripper-5"),
    ("logistics", "relay-1"),
    ("logistics", "logistics-2-3-s1"),
    ("miconic", "upward-2"),
    ("miconic", "miconic-2-4-s1"),
    ("miconic", "miconic-4-8-s2"),
    ("satellite", "tour-3"),
    ("satellite", "satellite-1-2-s1"),
    ("depot", "shipment-2"),
    ("depot", "depot-2-2-s1"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "name"), OPTIMAL)
def test_astar_with_hmax_finds_the_optimal_length(domain: str, name: str) -> None:
    """Breadth-first search (no heuristic) gives the fewest actions; A* with hmax, with
    LM-cut and uniform-cost A* must all find that length, and so must the construction
    where it fixes the optimum."""
    task = suite.task(domain, name)
    problem = suite.load(task)
    fewest = _length(problem, "bfs", "blind")
    assert _length(problem, "astar", "max") == fewest
    assert _length(problem, "astar", "lmcut") == fewest
    assert _length(problem, "astar", "blind") == fewest
    if task.optimal is not None:
        assert fewest == task.optimal


# The smallest tasks, one or two per domain, for the naive reference planner.
NAIVE = [
    ("blocks", "reverse-4"),
    ("blocks", "blocks-4-s1"),
    ("gripper", "gripper-4"),
    ("logistics", "relay-1"),
    ("miconic", "miconic-2-4-s1"),
    ("satellite", "tour-3"),
    ("depot", "shipment-2"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "name"), NAIVE)
def test_the_smallest_tasks_agree_with_a_naive_reference_planner(domain: str, name: str) -> None:
    """Uniform-cost search over naively instantiated actions (no plansmith grounding or
    search) gives the same optimum as A* with LM-cut and as the construction."""
    task = suite.task(domain, name)
    problem = suite.load(task)
    optimum = naive_optimal_cost(problem, limit=50_000)
    assert optimum == _length(problem, "astar", "lmcut")
    if task.optimal is not None:
        assert optimum == task.optimal


# Solved by A* with LM-cut in about a second or less each. Built to a known optimum, or
# random with the optimum from A* with hmax (admissible, a different heuristic).
OPTIMAL_LMCUT = [
    ("blocks", "reverse-6"),
    ("gripper", "gripper-6"),
    ("logistics", "relay-2"),
    ("miconic", "upward-5"),
    ("depot", "shipment-3"),
    ("satellite", "tour-6"),
    ("depot", "depot-3-3-s2"),
    ("satellite", "satellite-2-4-s2"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "name"), OPTIMAL_LMCUT)
def test_astar_with_lmcut_finds_the_optimal_length(domain: str, name: str) -> None:
    task = suite.task(domain, name)
    problem = suite.load(task)
    found = _length(problem, "astar", "lmcut")
    if task.optimal is not None:
        assert found == task.optimal
    else:
        assert found == _length(problem, "astar", "max")
