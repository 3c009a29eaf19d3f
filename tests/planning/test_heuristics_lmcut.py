"""LM-cut: hand-computed values on tiny tasks, hmax <= LM-cut <= h* on random ones,
every cut a landmark with a sound cost partitioning, and the mask and per-fact hmax
passes giving the same values."""

from __future__ import annotations

import math
import random

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
from hypothesis import strategies as st

import _pddl_suite as suite
from plansmith.errors import UnsolvableError
from plansmith.model import Number, Problem
from plansmith.planning import HEURISTICS, PlanOptions, ground, solve
from plansmith.planning._task import GroundTask, TaskSpace, bits
from plansmith.planning.heuristics import lmcut
from plansmith.planning.heuristics.lmcut import _Relaxed


def _lmcut(prob: Problem) -> float:
    task = ground(prob)
    return lmcut(task)(task.init)[0]


def _shared(cost: Number) -> Problem:
    # two goals share the step m, then one step each
    return problem(
        [
            action("m", pre=[lit("s")], eff=[lit("p")], cost=cost),
            action("n1", pre=[lit("p")], eff=[lit("g1")]),
            action("n2", pre=[lit("p")], eff=[lit("g2")]),
        ],
        init=[atom("s")],
        goal=[lit("g1"), lit("g2")],
    )


def test_lmcut_is_registered_by_name() -> None:
    assert HEURISTICS["lmcut"] is lmcut


def test_every_step_of_a_chain_is_a_landmark() -> None:
    prob = problem(
        [
            action("ab", pre=[lit("a")], eff=[lit("b")], cost=2),
            action("bc", pre=[lit("b")], eff=[lit("c")], cost=3),
            action("cg", pre=[lit("c")], eff=[lit("g")], cost=4),
        ],
        init=[atom("a")],
        goal=[lit("g")],
    )
    assert _lmcut(prob) == 9


def test_both_branches_of_a_fork_count_where_hmax_takes_one() -> None:
    prob = problem(
        [
            action("x", pre=[lit("s")], eff=[lit("p")]),
            action("y", pre=[lit("s")], eff=[lit("q")]),
            action("z", pre=[lit("p"), lit("q")], eff=[lit("g")]),
        ],
        init=[atom("s")],
        goal=[lit("g")],
    )
    task = ground(prob)
    assert HEURISTICS["max"](task)(task.init)[0] == 2
    assert lmcut(task)(task.init)[0] == 3


@pytest.mark.parametrize(("cost", "expected"), [(1, 3), (5, 7), (2.5, 4.5), (0, 2)])
def test_a_shared_step_is_counted_once_with_its_cost(cost: Number, expected: float) -> None:
    assert _lmcut(_shared(cost)) == expected


@pytest.mark.parametrize("costs", [(2, 3), (3, 2)])
def test_a_choice_of_achievers_costs_the_cheapest_one(costs: tuple[int, int]) -> None:
    # the cut holds both achievers, whichever is found first ("spoil" keeps s and
    # t fluent, so that the achievers differ after grounding)
    prob = problem(
        [
            action("first", pre=[lit("s")], eff=[lit("g")], cost=costs[0]),
            action("second", pre=[lit("t")], eff=[lit("g")], cost=costs[1]),
            action("spoil", eff=[neg("s"), neg("t")]),
        ],
        init=[atom("s"), atom("t")],
        goal=[lit("g")],
    )
    assert _lmcut(prob) == 2


def test_overlapping_landmarks_share_the_cost_of_a_common_operator() -> None:
    # "both" (3) or "one" + "two" (2 + 2): hmax is 2, the optimum 3. The first cut
    # {both, one-or-two} costs 2, the second one, with "both" left at 1, costs 1.
    prob = problem(
        [
            action("both", pre=[lit("s")], eff=[lit("g1"), lit("g2")], cost=3),
            action("one", pre=[lit("s")], eff=[lit("g1")], cost=2),
            action("two", pre=[lit("s")], eff=[lit("g2")], cost=2),
        ],
        init=[atom("s")],
        goal=[lit("g1"), lit("g2")],
    )
    task = ground(prob)
    assert HEURISTICS["max"](task)(task.init)[0] == 2
    assert lmcut(task)(task.init)[0] == 3


def test_a_zero_cost_step_into_the_goal_joins_the_goal_zone() -> None:
    # x (1) then the free y, or z (2): the goal zone holds g and p, so the only
    # cut is {x, z}, worth 1; a cut {y} would be worth nothing and never end.
    prob = problem(
        [
            action("x", pre=[lit("s")], eff=[lit("p")], cost=1),
            action("y", pre=[lit("p")], eff=[lit("g")], cost=0),
            action("z", pre=[lit("s")], eff=[lit("g")], cost=2),
        ],
        init=[atom("s")],
        goal=[lit("g")],
    )
    assert _lmcut(prob) == 1


def test_one_group_can_put_two_operators_into_a_cut() -> None:
    # a and b share their precondition (one hmax group, one fact each); the free
    # y1 and y2 bring both h1 and h2 into the goal zone, so the cut is {a, b}
    prob = problem(
        [
            action("a", pre=[lit("s")], eff=[lit("h1")]),
            action("b", pre=[lit("s")], eff=[lit("h2")]),
            action("y1", pre=[lit("h1")], eff=[lit("g")], cost=0),
            action("y2", pre=[lit("h2")], eff=[lit("g")], cost=0),
        ],
        init=[atom("s")],
        goal=[lit("g")],
    )
    task = ground(prob)
    for masks in (False, True):
        relaxed = _Relaxed(task, masks=masks)
        [(cut, cost)] = relaxed.cuts(task.init)
        assert (len(cut), cost) == (2, 1)
        assert relaxed.group_of[cut[0]] == relaxed.group_of[cut[1]]
    _check_cuts(task, task.init)


def test_free_operators_alone_are_worth_nothing() -> None:
    prob = problem(
        [
            action("a", pre=[lit("s")], eff=[lit("p")], cost=0),
            action("b", pre=[lit("p")], eff=[lit("g")], cost=0),
        ],
        init=[atom("s")],
        goal=[lit("g")],
    )
    assert _lmcut(prob) == 0


def test_operators_without_preconditions_are_cut_too() -> None:
    prob = problem(
        [
            action("make", eff=[lit("p")], cost=2),
            action("use", pre=[lit("p")], eff=[lit("g")], cost=1),
        ],
        init=[],
        goal=[lit("g")],
    )
    assert _lmcut(prob) == 3


def test_deletes_are_ignored_so_a_return_trip_is_not_counted() -> None:
    # h* is 2 (there and back) but the relaxation keeps at(a) after leaving
    prob = problem(
        [
            action("go", pre=[lit("at-a")], eff=[neg("at-a"), lit("at-b"), lit("seen")]),
            action("back", pre=[lit("at-b")], eff=[neg("at-b"), lit("at-a")]),
        ],
        init=[atom("at-a")],
        goal=[lit("at-a"), lit("seen")],
    )
    assert _lmcut(prob) == 1
    assert solve(prob, PlanOptions(search="astar", heuristic="lmcut")).cost == 2


def test_goal_states_are_worth_zero() -> None:
    task = ground(_shared(1))
    assert lmcut(task)(task.init | task.goal)[0] == 0


def test_a_goal_no_operator_can_reach_from_the_state_is_a_dead_end() -> None:
    prob = problem(
        [
            action("use", pre=[lit("token")], eff=[neg("token"), lit("spent")]),
            action("win", pre=[lit("token"), lit("spent")], eff=[lit("g")]),
        ],
        init=[atom("token")],
        goal=[lit("g")],
    )
    task = ground(prob)
    evaluate = lmcut(task)
    use = next(op for op in task.operators if op.name == "use()")
    assert evaluate(task.init)[0] == 2
    assert evaluate(use.apply(task.init))[0] == math.inf


def test_the_evaluator_gives_the_same_value_twice() -> None:
    # the costs an evaluation lowers are its own copy
    task = ground(_shared(5))
    evaluate = lmcut(task)
    assert evaluate(task.init)[0] == evaluate(task.init)[0] == 7


FACTS = ("f0", "f1", "f2", "f3", "f4", "f5")


@st.composite
def propositional_tasks(draw: st.DrawFn) -> Problem:
    """Random tasks over six propositions: up to ten actions with costs 0 to 3,
    and a goal among the facts some action adds (the shared generator's tasks
    are mostly trivial for LM-cut)."""
    facts = st.sampled_from(FACTS)
    init = draw(st.lists(facts, min_size=1, max_size=3, unique=True))
    actions = []
    added: set[str] = set()
    for i in range(draw(st.integers(3, 10))):
        pre = draw(st.lists(facts, max_size=3, unique=True))
        add = draw(st.lists(facts, min_size=1, max_size=2, unique=True))
        dele = draw(st.lists(st.sampled_from([f for f in FACTS if f not in add]), max_size=2))
        added.update(add)
        effects = [lit(f) for f in add] + [neg(f) for f in sorted(set(dele))]
        cost = draw(st.integers(0, 3))
        actions.append(action(f"a{i}", pre=[lit(f) for f in pre], eff=effects, cost=cost))
    targets = sorted(added - set(init)) or list(FACTS)
    goal = draw(st.lists(st.sampled_from(targets), min_size=1, max_size=3, unique=True))
    return problem(actions, [atom(f) for f in init], [lit(f) for f in goal])


_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.one_of(propositional_tasks(), strips_problems(costs=True)))
def test_lmcut_lies_between_hmax_and_the_optimal_cost(prob: Problem) -> None:
    task = ground(prob)
    optimal = naive_optimal_cost(prob)
    if task.unreachable_goal:
        assert optimal is None
        return
    h = lmcut(task)(task.init)[0]
    h_max = HEURISTICS["max"](task)(task.init)[0]
    if h == math.inf:
        assert h_max == math.inf
        assert optimal is None
        return
    assert h_max <= h
    if optimal is not None:
        assert h <= optimal


@_SETTINGS
@given(st.one_of(propositional_tasks(), strips_problems(costs=True)))
def test_astar_with_lmcut_returns_the_cheapest_plan(prob: Problem) -> None:
    optimal = naive_optimal_cost(prob)
    options = PlanOptions(search="astar", heuristic="lmcut")
    if optimal is None:
        with pytest.raises(UnsolvableError):
            solve(prob, options)
        return
    result = solve(prob, options)
    assert result.cost == optimal
    assert replays(prob, result.actions)


# -- the landmarks themselves, and the two hmax passes ------------------------------------


def _relaxed_reachable(relaxed: _Relaxed, state: int, dropped: set[int]) -> bool:
    """Whether the goal fact is reachable from ``state`` with deletes ignored and
    the relaxed operators ``dropped`` removed (a plain fixpoint)."""
    reached = {*bits(state), relaxed.always}
    changed = True
    while changed:
        changed = False
        for q, pre in enumerate(relaxed.group_pre):
            if reached.issuperset(pre):
                for o in relaxed.group_ops[q]:
                    if o not in dropped and not reached.issuperset(relaxed.effects[o]):
                        reached.update(relaxed.effects[o])
                        changed = True
    return relaxed.goal in reached


def _check_cuts(task: GroundTask, state: int) -> None:
    """Each cut is a landmark of the relaxed task (no relaxed plan avoids it), is
    charged more than 0, and no operator is charged more than it costs in all."""
    relaxed = _Relaxed(task)
    found = relaxed.cuts(state)
    if found == [([], math.inf)]:
        assert not _relaxed_reachable(relaxed, state, set())
        return
    charged = [0.0] * len(relaxed.effects)
    for cut, cost in found:
        assert cost > 0
        assert not _relaxed_reachable(relaxed, state, set(cut))
        for o in cut:
            charged[o] += cost
    assert all(c <= b + 1e-9 for c, b in zip(charged, relaxed.base_cost, strict=True))


def _random_states(task: GroundTask, seed: int, count: int) -> list[int]:
    space, rng, out = TaskSpace(task), random.Random(seed), [task.init]
    for _ in range(count - 1):
        state = task.init
        for _ in range(rng.randint(1, 12)):
            succ = space.successors(state)
            if not succ:
                break
            state = rng.choice(succ)[1]
        out.append(state)
    return out


@_SETTINGS
@given(st.one_of(propositional_tasks(), strips_problems(costs=True)), st.integers(0, 2**16))
def test_every_cut_is_a_landmark_and_the_cost_partitioning_is_sound(
    prob: Problem, seed: int
) -> None:
    task = ground(prob)
    if task.unreachable_goal:
        return
    for state in _random_states(task, seed, 3):
        _check_cuts(task, state)


def _values_both_ways(task: GroundTask, states: list[int]) -> tuple[list[float], list[float]]:
    loop, masks = _Relaxed(task, masks=False), _Relaxed(task, masks=True)
    return [loop.value(s) for s in states], [masks.value(s) for s in states]


def _cut_sets(relaxed: _Relaxed, state: int) -> list[tuple[list[int], float]]:
    return [(sorted(cut), cost) for cut, cost in relaxed.cuts(state)]


@_SETTINGS
@given(st.one_of(propositional_tasks(), strips_problems(costs=False)), st.integers(0, 2**16))
def test_hmax_as_masks_gives_the_same_values_as_hmax_by_facts(prob: Problem, seed: int) -> None:
    task = ground(prob)
    if task.unreachable_goal:
        return
    loop, masks = _values_both_ways(task, _random_states(task, seed, 4))
    assert loop == masks


@_SETTINGS
@given(st.one_of(propositional_tasks(), strips_problems(costs=True)), st.integers(0, 2**16))
def test_the_one_fact_per_operator_shortcut_finds_the_same_cuts(prob: Problem, seed: int) -> None:
    task = ground(prob)
    if task.unreachable_goal:
        return
    for masks in (False, True):
        plain, shortcut = (_Relaxed(task, masks=masks, by_fact=b) for b in (False, True))
        for state in _random_states(task, seed, 3):
            assert _cut_sets(plain, state) == _cut_sets(shortcut, state)


# Mid-sized generated tasks (15 to 20 objects), one of each of three domains.
SUITE_TASKS = [
    ("miconic", "miconic-8-16-s3"),
    ("satellite", "satellite-3-6-s3"),
    ("depot", "depot-3-3-s2"),
]


@pytest.mark.parametrize(("domain", "name"), SUITE_TASKS)
def test_on_suite_tasks_the_two_hmax_passes_agree_and_cuts_are_landmarks(
    domain: str, name: str
) -> None:
    task = ground(suite.load(suite.task(domain, name)))
    states = _random_states(task, 7, 6)
    loop, masks = _values_both_ways(task, states)
    assert loop == masks
    assert all(0 < v < math.inf for v in loop)
    for state in states[:2]:
        _check_cuts(task, state)
        plain = _Relaxed(task, by_fact=False)
        assert _cut_sets(plain, state) == _cut_sets(_Relaxed(task), state)


# Built so that the optimal length is known (see the generators in tests/_pddl_suite.py).
OPTIMAL = [
    ("depot", "shipment-3", 13),
    ("satellite", "tour-6", 14),
    ("logistics", "relay-2", 15),
    ("gripper", "gripper-5", 15),
]


@pytest.mark.parametrize(("domain", "name", "optimal"), OPTIMAL)
def test_astar_with_lmcut_finds_the_optimal_length_of_suite_tasks(
    domain: str, name: str, optimal: int
) -> None:
    task = suite.task(domain, name)
    assert task.optimal == optimal
    problem_ = suite.load(task)
    grounded = ground(problem_)
    assert lmcut(grounded)(grounded.init)[0] <= optimal
    result = solve(problem_, PlanOptions(search="astar", heuristic="lmcut"))
    assert result.cost == len(result.actions) == optimal
    assert replays(problem_, result.actions)
