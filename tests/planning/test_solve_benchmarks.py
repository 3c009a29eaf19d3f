"""Every shared benchmark task grounds, and the default configuration solves it."""

from __future__ import annotations

import pytest
from _search_fixtures import BENCHMARKS, benchmark_tasks, expected_lengths, load_benchmark, replays

from plansmith.planning import PlanOptions, ground, solve

pytestmark = pytest.mark.skipif(
    not BENCHMARKS.is_dir(), reason="../shared/benchmarks/pddl not found"
)

TASKS = benchmark_tasks()
EXPECTED = expected_lengths()


def test_all_43_shared_tasks_are_found() -> None:
    assert len(TASKS) == 43


@pytest.mark.parametrize(("domain", "task"), TASKS)
def test_every_shared_task_grounds_with_a_reachable_goal(domain: str, task: str) -> None:
    grounded = ground(load_benchmark(domain, task))
    assert grounded.unreachable_goal == ()
    assert grounded.operators
    assert not grounded.is_goal(grounded.init)


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "task"), TASKS)
def test_the_default_configuration_solves_every_shared_task(domain: str, task: str) -> None:
    problem = load_benchmark(domain, task)
    result = solve(problem, PlanOptions())
    assert replays(problem, result.actions)
    optimal = EXPECTED[(domain, task)]["optimal_length"]
    if optimal:  # no plan is shorter than the optimum (best-known lengths are no bound)
        assert len(result.actions) >= int(optimal)


# Small enough for A* with hmax within a few seconds each (see the report of the
# benchmark run for the others).
OPTIMAL = [
    ("blocks", "task01.pddl"),
    ("blocks", "task02.pddl"),
    ("gripper", "task01.pddl"),
    ("logistics", "task01.pddl"),
    ("miconic", "task01.pddl"),
    ("miconic", "task02.pddl"),
    ("satellite", "task01.pddl"),
    ("depot", "task01.pddl"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "task"), OPTIMAL)
def test_astar_with_hmax_finds_the_optimal_length(domain: str, task: str) -> None:
    problem = load_benchmark(domain, task)
    result = solve(problem, PlanOptions(search="astar", heuristic="max"))
    assert replays(problem, result.actions)
    assert len(result.actions) == int(EXPECTED[(domain, task)]["optimal_length"])


# Solved by A* with LM-cut in about a second or less each (the benchmark run measured
# all 31 tasks with an optimal length; most of the others take far longer).
OPTIMAL_LMCUT = [
    ("blocks", "task10.pddl"),
    ("gripper", "task02.pddl"),
    ("logistics", "task07.pddl"),
    ("miconic", "task12.pddl"),
    ("depot", "task02.pddl"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "task"), OPTIMAL_LMCUT)
def test_astar_with_lmcut_finds_the_optimal_length(domain: str, task: str) -> None:
    problem = load_benchmark(domain, task)
    result = solve(problem, PlanOptions(search="astar", heuristic="lmcut"))
    assert replays(problem, result.actions)
    assert len(result.actions) == int(EXPECTED[(domain, task)]["optimal_length"])
