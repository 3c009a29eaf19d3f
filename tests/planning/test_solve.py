"""``solve``: ground and search a problem; results, errors, limits and properties."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from _search_fixtures import (
    action,
    atom,
    lit,
    naive_optimal_cost,
    neg,
    problem,
    replays,
    strips_problems,
)
from hypothesis import HealthCheck, given, settings

from plansmith.errors import LimitReachedError, ProblemError, UnsolvableError
from plansmith.model import GroundAction, Problem
from plansmith.planning import (
    HEURISTIC_NAMES,
    SEARCH_NAMES,
    HeuristicName,
    PlanOptions,
    SearchName,
    SolveResult,
    solve,
)

COMBINATIONS = list(itertools.product(SEARCH_NAMES, HEURISTIC_NAMES))


def _corridor(length: int = 4) -> Problem:
    """A robot walks ``c0 .. c{length}`` and lights the last cell."""
    cells = [f"c{i}" for i in range(length + 1)]
    return problem(
        [
            action(
                "step",
                ["?a", "?b"],
                pre=[lit("at", "?a"), lit("next", "?a", "?b")],
                eff=[lit("at", "?b"), neg("at", "?a")],
            ),
            action(
                "light", ["?a"], pre=[lit("at", "?a"), neg("lit", "?a")], eff=[lit("lit", "?a")]
            ),
        ],
        init=[atom("at", "c0"), *(atom("next", a, b) for a, b in itertools.pairwise(cells))],
        goal=[lit("lit", cells[-1])],
        objects=cells,
    )


def _token() -> Problem:
    # reachable when deletes are ignored, impossible in fact: "use" spends the token "win" needs
    return problem(
        [
            action("use", pre=[lit("token")], eff=[neg("token"), lit("spent")]),
            action("win", pre=[lit("token"), lit("spent")], eff=[lit("g")]),
        ],
        init=[atom("token")],
        goal=[lit("g")],
    )


def _names(actions: tuple[GroundAction, ...]) -> list[str]:
    return [str(a) for a in actions]


def test_solve_returns_ground_actions_and_counts() -> None:
    result = solve(_corridor())
    assert isinstance(result, SolveResult)
    assert _names(result.actions) == [
        "step(c0, c1)",
        "step(c1, c2)",
        "step(c2, c3)",
        "step(c3, c4)",
        "light(c4)",
    ]
    assert result.cost == 5
    assert result.expanded >= 5
    assert result.generated >= result.expanded
    assert result.evaluated >= 1
    assert (result.grounding_facts, result.grounding_operators) == (6, 5)


@pytest.mark.parametrize(("search", "heuristic"), COMBINATIONS)
def test_every_search_and_heuristic_finds_a_plan_that_replays(
    search: SearchName, heuristic: HeuristicName
) -> None:
    prob = _corridor()
    result = solve(prob, PlanOptions(search=search, heuristic=heuristic))
    assert replays(prob, result.actions)
    if search in ("astar", "bfs"):
        assert result.cost == 5


def test_a_goal_unreachable_even_without_deletes_is_unsolvable() -> None:
    prob = replace(_corridor(), goal=(lit("lit", "nowhere"),), source="tasks/corridor.yaml")
    with pytest.raises(UnsolvableError, match=r"lit\(nowhere\)") as err:
        solve(prob)
    assert str(err.value.location) == "tasks/corridor.yaml"
    assert err.value.hint


@pytest.mark.parametrize(("search", "heuristic"), COMBINATIONS)
def test_exhausting_the_reachable_states_proves_unsolvable(
    search: SearchName, heuristic: HeuristicName
) -> None:
    with pytest.raises(UnsolvableError, match="no plan exists"):
        solve(_token(), PlanOptions(search=search, heuristic=heuristic))


def test_a_goal_with_negative_literals_is_met() -> None:
    prob = problem(
        [
            action("on", pre=[neg("lit")], eff=[lit("lit"), lit("seen")]),
            action("off", pre=[lit("lit")], eff=[neg("lit")]),
        ],
        init=[],
        goal=[lit("seen"), neg("lit")],
    )
    for search, heuristic in COMBINATIONS:
        result = solve(prob, PlanOptions(search=search, heuristic=heuristic))
        assert _names(result.actions) == ["on()", "off()"], (search, heuristic)


def test_the_node_limit_is_reported_with_the_counts() -> None:
    prob = replace(_corridor(12), source="tasks/corridor.yaml")
    with pytest.raises(LimitReachedError, match="node limit of 3 expansions") as err:
        solve(prob, PlanOptions(search="bfs", node_limit=3))
    assert "expanded 3" in err.value.message
    assert str(err.value.location) == "tasks/corridor.yaml"
    assert err.value.hint


def test_the_time_limit_uses_the_injected_clock_and_counts_grounding() -> None:
    ticks = itertools.count()
    # each call moves the clock by a second: the limit is hit at the first check
    with pytest.raises(LimitReachedError, match=r"time limit of 0\.5 s"):
        solve(_corridor(12), PlanOptions(search="bfs", time_limit=0.5), clock=lambda: next(ticks))


def test_no_time_limit_never_reads_the_clock() -> None:
    def clock() -> float:
        raise AssertionError("the clock was read")

    assert solve(_corridor(), clock=clock).cost == 5


def test_an_unknown_search_is_a_problem_error() -> None:
    with pytest.raises(ProblemError, match="unknown search"):
        solve(_corridor(), PlanOptions(search="dfs"))  # type: ignore[arg-type]
    with pytest.raises(ProblemError, match="unknown heuristic"):
        solve(_corridor(), PlanOptions(heuristic="pdb"))  # type: ignore[arg-type]


def test_a_negative_action_cost_is_refused() -> None:
    prob = problem([action("go", eff=[lit("g")], cost=-1)], init=[], goal=[lit("g")])
    with pytest.raises(ProblemError, match="negative cost"):
        solve(prob)


def test_solving_twice_gives_the_same_plan() -> None:
    prob = _corridor(6)
    assert solve(prob).actions == solve(prob).actions


_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(strips_problems())
def test_optimal_searches_agree_with_a_naive_planner_on_unit_costs(prob: Problem) -> None:
    optimal = naive_optimal_cost(prob)
    for search, heuristic in [("astar", "max"), ("astar", "blind"), ("bfs", "blind")]:
        options = PlanOptions(search=search, heuristic=heuristic)  # type: ignore[arg-type]
        if optimal is None:
            with pytest.raises(UnsolvableError):
                solve(prob, options)
            continue
        result = solve(prob, options)
        assert len(result.actions) == result.cost == optimal, (search, heuristic)
        assert replays(prob, result.actions)


@_SETTINGS
@given(strips_problems(costs=True))
def test_astar_with_an_admissible_heuristic_returns_the_cheapest_plan(prob: Problem) -> None:
    optimal = naive_optimal_cost(prob)
    heuristics: tuple[HeuristicName, ...] = ("max", "blind")
    for heuristic in heuristics:
        options = PlanOptions(search="astar", heuristic=heuristic)
        if optimal is None:
            with pytest.raises(UnsolvableError):
                solve(prob, options)
            continue
        result = solve(prob, options)
        assert result.cost == optimal
        assert sum(a.cost for a in result.actions) == result.cost
        assert replays(prob, result.actions)


@_SETTINGS
@given(strips_problems(costs=True))
def test_every_configuration_returns_a_plan_that_replays_or_proves_there_is_none(
    prob: Problem,
) -> None:
    solvable = naive_optimal_cost(prob) is not None
    for search, heuristic in COMBINATIONS:
        options = PlanOptions(search=search, heuristic=heuristic)
        if not solvable:
            with pytest.raises(UnsolvableError):
                solve(prob, options)
            continue
        result = solve(prob, options)
        assert replays(prob, result.actions), (search, heuristic)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strips_problems())
def test_a_node_limit_of_zero_stops_any_search_that_must_expand(prob: Problem) -> None:
    optimal = naive_optimal_cost(prob)
    options = PlanOptions(search="lazy-gbfs", node_limit=0)
    if optimal is None:  # proved before any expansion, or stopped by the limit
        with pytest.raises((LimitReachedError, UnsolvableError)):
            solve(prob, options)
    elif optimal > 0:
        with pytest.raises(LimitReachedError):
            solve(prob, options)
    else:
        assert solve(prob, options).actions == ()
