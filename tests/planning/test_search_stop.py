"""``should_stop``: a caller that gave up on a search (Ctrl-C, a cancelled request) stops
it at the next check point, so that no search outlives it in a worker thread."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from _search_fixtures import grid_space

from plansmith.errors import LimitReachedError
from plansmith.formats import load_domain, load_problem
from plansmith.model import Number, Problem
from plansmith.planning import SEARCHES, PlanOptions, SearchName, plan
from plansmith.planning.htn._limits import Budget
from plansmith.planning.search import Limits

DOC_PIPELINE = Path(__file__).resolve().parents[2] / "examples" / "doc-pipeline"


def _doc_pipeline(problem: str) -> Problem:
    return load_problem(DOC_PIPELINE / problem, load_domain(DOC_PIPELINE / "domain.yaml"))


class _Endless:
    """States 0, 1, 2, ...: each has one successor and none is a goal."""

    def __init__(self) -> None:
        self.expanded = 0

    def initial_state(self) -> int:
        return 0

    def is_goal(self, state: int) -> bool:
        return False

    def successors(self, state: int) -> list[tuple[int, int, Number]]:
        self.expanded += 1
        return [(0, state + 1, 1)]

    def features(self, state: int) -> int:
        return state


class _StopAfter:
    """``should_stop``: false for the first ``calls`` calls, then true."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked > self.calls


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_search_stops_at_its_next_check_once_should_stop_says_so(
    name: SearchName,
) -> None:
    space, stop = _Endless(), _StopAfter(3)
    limits = Limits(should_stop=stop, every=64)
    with pytest.raises(LimitReachedError) as stopped:
        SEARCHES[name](space, lambda state: (1.0, ()), limits, PlanOptions(search=name))
    assert "the search was stopped before it ended" in str(stopped.value)
    assert stop.asked == 4  # asked every 64 expansions, and no more once it said stop
    assert space.expanded == 4 * 64


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_search_that_is_never_told_to_stop_finds_the_same_path(name: SearchName) -> None:
    space, evaluate = grid_space(40, 40)
    alone = SEARCHES[name](space, evaluate, Limits(), PlanOptions(search=name))
    space, evaluate = grid_space(40, 40)
    asked = _StopAfter(10**9)
    limits = Limits(should_stop=asked)
    assert SEARCHES[name](space, evaluate, limits, PlanOptions(search=name)) == alone
    assert asked.asked > 0


def test_plan_stops_before_the_search_when_should_stop_says_so_at_once() -> None:
    problem = _doc_pipeline("problem.yaml")
    assert plan(problem, should_stop=lambda: False) == plan(problem)
    with pytest.raises(LimitReachedError) as stopped:
        plan(problem, should_stop=lambda: True)
    assert "after grounding" in str(stopped.value)


def test_an_htn_decomposition_stops_within_64_steps_once_should_stop_says_so() -> None:
    stop = _StopAfter(2)
    budget = Budget(None, None, time.perf_counter, should_stop=stop)

    def tick_on() -> None:
        for _ in range(1000):
            budget.tick()

    with pytest.raises(LimitReachedError) as stopped:
        tick_on()
    assert budget.nodes == 3 * 64
    assert "the decomposition was stopped before it ended" in str(stopped.value)


def test_an_htn_plan_that_is_never_told_to_stop_is_the_same_plan() -> None:
    problem = _doc_pipeline("problem-htn.yaml")
    assert plan(problem, should_stop=lambda: False) == plan(problem)
