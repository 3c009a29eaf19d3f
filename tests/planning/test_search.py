"""Each search on toy spaces: paths, optimality, unsolvability, limits, preferred operators."""

from __future__ import annotations

import itertools

import pytest
from _search_fixtures import GraphSpace, bfs_distance, grid_space, table_evaluator
from hypothesis import given, settings
from hypothesis import strategies as st

from plansmith.errors import LimitReachedError, UnsolvableError
from plansmith.model import Number
from plansmith.planning import SEARCH_NAMES, SEARCHES, PlanOptions, SearchName
from plansmith.planning.search import Limits, SearchResult
from plansmith.planning.search._alternation import Alternation, Novelty

Edges = dict[str, list[tuple[int, str, Number]]]

# s --0--> a --1--> g   (cost 1 + 1)
# s --2--> g            (cost 5)
DETOUR: Edges = {
    "s": [(0, "a", 1), (2, "g", 5)],
    "a": [(1, "g", 1)],
}


def _run(
    name: SearchName, space: GraphSpace, values: dict[str, float] | None = None
) -> SearchResult:
    return SEARCHES[name](space, table_evaluator(values or {}), Limits(), PlanOptions(search=name))


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_every_search_finds_a_path_to_the_goal(name: SearchName) -> None:
    space = GraphSpace(DETOUR, "s", {"g"})
    result = SEARCHES[name](space, table_evaluator({}), Limits(), PlanOptions(search=name))
    assert result.operators in ((0, 1), (2,))
    assert result.cost == {(0, 1): 2, (2,): 5}[result.operators]


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_a_goal_initial_state_needs_no_step(name: SearchName) -> None:
    space = GraphSpace(DETOUR, "g", {"g"})
    result = SEARCHES[name](space, table_evaluator({}), Limits(), PlanOptions(search=name))
    assert (result.operators, result.cost, result.expanded) == ((), 0, 0)


def test_astar_returns_the_cheapest_path_not_the_shortest() -> None:
    space = GraphSpace(DETOUR, "s", {"g"})
    result = SEARCHES["astar"](space, table_evaluator({"a": 1}), Limits(), PlanOptions())
    assert (result.operators, result.cost) == ((0, 1), 2)


def test_breadth_first_search_returns_the_fewest_steps() -> None:
    space = GraphSpace(DETOUR, "s", {"g"})
    result = SEARCHES["bfs"](space, table_evaluator({}), Limits(), PlanOptions())
    assert (result.operators, result.cost) == ((2,), 5)


def test_astar_reopens_a_state_reached_again_more_cheaply() -> None:
    # h(b) = 2 is admissible but not consistent (b -> c costs 1, h(c) = 0): on the
    # tie f = 3, A* expands c through a (g = 3) before b, then finds c at g = 2
    edges: Edges = {
        "s": [(0, "a", 1), (1, "b", 1)],
        "a": [(2, "c", 2)],
        "b": [(3, "c", 1)],
        "c": [(4, "g", 1)],
    }
    space = GraphSpace(edges, "s", {"g"})
    result = SEARCHES["astar"](space, table_evaluator({"b": 2}), Limits(), PlanOptions())
    assert (result.operators, result.cost) == ((1, 3, 4), 3)
    assert space.expanded.count("c") == 2


def test_weighted_astar_trusts_the_heuristic_more_within_its_bound() -> None:
    # s -> a -> g costs 4, s -> b -> c -> g costs 3; h underestimates a
    edges: Edges = {
        "s": [(0, "a", 1), (1, "b", 1)],
        "a": [(2, "g", 3)],
        "b": [(3, "c", 1)],
        "c": [(4, "g", 1)],
    }
    values = {"a": 1, "b": 2, "c": 1}
    optimal = SEARCHES["astar"](
        GraphSpace(edges, "s", {"g"}), table_evaluator(values), Limits(), PlanOptions()
    )
    weighted = SEARCHES["wastar"](
        GraphSpace(edges, "s", {"g"}), table_evaluator(values), Limits(), PlanOptions(weight=2)
    )
    assert (optimal.operators, optimal.cost) == ((1, 3, 4), 3)
    assert (weighted.operators, weighted.cost) == ((0, 2), 4)
    assert weighted.cost <= 2 * optimal.cost
    assert weighted.expanded < optimal.expanded


@pytest.mark.parametrize("name", ["gbfs", "lazy-gbfs"])
def test_greedy_search_follows_the_heuristic(name: SearchName) -> None:
    space, evaluate = grid_space(6, 6)
    result = SEARCHES[name](space, evaluate, Limits(), PlanOptions(search=name))
    assert len(result.operators) == 10
    assert result.expanded == 10  # straight to the goal: one expansion per step


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_exhausting_the_space_proves_there_is_no_plan(name: SearchName) -> None:
    edges: Edges = {"s": [(0, "a", 1)], "a": [(1, "s", 1)]}
    with pytest.raises(UnsolvableError, match="no plan exists") as err:
        _run(name, GraphSpace(edges, "s", {"g"}))
    assert err.value.hint


@pytest.mark.parametrize("name", ["astar", "wastar", "gbfs", "lazy-gbfs"])
def test_an_infinite_value_prunes_a_dead_end(name: SearchName) -> None:
    space = GraphSpace(DETOUR, "s", {"g"})
    result = _run(name, space, {"a": float("inf")})
    assert result.operators == (2,)
    assert "a" not in space.expanded


@pytest.mark.parametrize("name", ["astar", "wastar", "gbfs", "lazy-gbfs"])
def test_a_dead_initial_state_is_unsolvable(name: SearchName) -> None:
    with pytest.raises(UnsolvableError):
        _run(name, GraphSpace(DETOUR, "s", {"g"}), {"s": float("inf")})


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_the_node_limit_stops_the_search(name: SearchName) -> None:
    space, evaluate = grid_space(30, 30)
    limits = Limits(node_limit=5)
    with pytest.raises(LimitReachedError, match="node limit of 5") as err:
        SEARCHES[name](space, table_evaluator({}), limits, PlanOptions(search=name))
    assert "expanded 5" in err.value.message
    assert err.value.hint
    del evaluate


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_a_node_limit_large_enough_does_not_stop_the_search(name: SearchName) -> None:
    space, evaluate = grid_space(4, 4)
    result = SEARCHES[name](space, evaluate, Limits(node_limit=10_000), PlanOptions(search=name))
    assert len(result.operators) == 6


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_the_time_limit_reads_the_injected_clock(name: SearchName) -> None:
    ticks = itertools.count()
    space, _ = grid_space(40, 40)
    limits = Limits(time_limit=3.0, clock=lambda: float(next(ticks)), every=1)
    with pytest.raises(LimitReachedError, match="time limit of 3 s"):
        SEARCHES[name](space, table_evaluator({}), limits, PlanOptions(search=name))


def test_a_time_limit_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        Limits(time_limit=1.0)


def _plateau() -> tuple[GraphSpace, dict[str, set[int]]]:
    # a chain 0 -> 1 -> ... -> 8 (op 0, the preferred one) with side branches
    # (ops 1..3) that lead nowhere; every state looks the same to the heuristic
    edges: Edges = {}
    preferred: dict[str, set[int]] = {}
    for i in range(8):
        side: list[tuple[int, str, Number]] = [(op, f"c{i}-side{op}", 1) for op in (1, 2, 3)]
        edges[f"c{i}"] = [*side, (0, f"c{i + 1}", 1)]
        preferred[f"c{i}"] = {0}
    return GraphSpace(edges, "c0", {"c8"}), preferred


@pytest.mark.parametrize("name", ["gbfs", "lazy-gbfs"])
def test_preferred_operators_cut_the_search_on_a_plateau(name: SearchName) -> None:
    space, preferred = _plateau()
    with_pref = SEARCHES[name](
        space, table_evaluator({}, preferred), Limits(), PlanOptions(search=name)
    )
    space2, _ = _plateau()
    without = SEARCHES[name](
        space2,
        table_evaluator({}, preferred),
        Limits(),
        PlanOptions(search=name, preferred_operators=False),
    )
    assert with_pref.operators == without.operators == (0,) * 8
    assert with_pref.expanded < without.expanded


def test_the_alternation_takes_turns_and_boosts_the_preferred_queue() -> None:
    queue: Alternation[str] = Alternation(preferred=True)
    for i, name in enumerate("abcd"):
        queue.push(i, name, preferred=name in "cd")
    assert [queue.pop(), queue.pop()] == ["a", "c"]
    queue.boost(10)
    assert queue.pop() == "d"
    assert [queue.pop(), queue.pop(), queue.pop()] == ["b", "c", "d"]
    assert not queue
    with pytest.raises(IndexError):
        queue.pop()


def test_the_alternation_gives_the_novelty_queue_its_turn_and_never_boosts_it() -> None:
    queue: Alternation[str] = Alternation(preferred=True, novel=True)
    queue.push_batch(0, ["a", "b", "c", "d"], preferred=["c"], novel=["d"])
    assert [queue.pop(), queue.pop(), queue.pop()] == ["a", "c", "d"]
    queue.boost(5)
    queue.push_batch(1, ["e", "f"], preferred=["e"], novel=["f"])
    assert [queue.pop(), queue.pop()] == ["e", "b"]  # the preferred queue, then the others
    assert [queue.pop() for _ in range(5)] == ["f", "c", "d", "e", "f"]  # the search skips repeats
    assert not queue


def test_pop_unseen_skips_seen_items_and_counts_each_skipped_one_as_a_turn() -> None:
    def filled() -> Alternation[tuple[str, int]]:
        queue: Alternation[tuple[str, int]] = Alternation(preferred=True, novel=True)
        batch = [(name, i) for i, name in enumerate("abcdef")]
        queue.push_batch(0, batch, preferred=batch[2:4], novel=batch[4:])
        queue.push_batch(1, [("g", 6)], preferred=[("g", 6)])
        return queue

    seen = {"a", "c", "e"}
    by_pop, by_pop_unseen = filled(), filled()
    expected = []
    while by_pop:  # the loop lazy search used to run
        item = by_pop.pop()
        if item[0] not in seen:
            expected.append(item)
    got = []
    while (item := by_pop_unseen.pop_unseen(seen)) is not None:
        got.append(item)
    assert got == expected
    # turns: a (seen) c (seen) e (seen) b d f c (seen) g d; then the regular queue alone
    assert [name for name, _ in got] == ["b", "d", "f", "g", "d", "f", "g"]
    assert by_pop_unseen.pop_unseen(seen) is None


def test_a_state_is_novel_when_it_brings_a_fact_unseen_at_its_heuristic_value() -> None:
    novelty = Novelty()
    assert novelty.novel(3, [0b0011, 0b0001, 0b0100, 0b0111]) == [0, 2]
    assert novelty.novel(3, [0b0110, 0b1000]) == [1]
    assert novelty.novel(2, [0b0110]) == [0]  # each heuristic value keeps its own record
    assert novelty.novel(3, [0b0000]) == []


class _TrapSpace:
    """Facts as bits: 0 start, 1 trap, 2 escape, 3 goal, 4.. the trap's own facts.

    From the start, op 0 enters the trap and op 1 the escape, whose op 2 reaches
    the goal. In the trap, op 10 + i adds trap fact i: its 2**width states all look
    one step from the goal to the heuristic, and all come before the escape (whose
    parent, the start, looked worse). Only the first few of them bring a new fact."""

    def __init__(self, width: int) -> None:
        self.width = width

    def initial_state(self) -> int:
        return 1

    def is_goal(self, state: int) -> bool:
        return bool(state & 0b1000)

    def successors(self, state: int) -> list[tuple[int, int, Number]]:
        if state == 1:
            return [(0, 0b10, 1), (1, 0b100, 1)]
        if state == 0b100:
            return [(2, 0b1100, 1)]
        absent = [i for i in range(self.width) if not state >> (4 + i) & 1]
        return [(10 + i, state | 1 << (4 + i), 1) for i in absent]

    def features(self, state: int) -> int:
        return state

    @staticmethod
    def evaluate(state: int) -> tuple[float, set[int]]:
        return (0.0 if state & 0b1000 else 2.0 if state in (1, 0b100) else 1.0), set()


@pytest.mark.parametrize("name", ["gbfs", "lazy-gbfs"])
def test_the_novelty_queue_leaves_a_plateau_the_heuristic_cannot_tell_apart(
    name: SearchName,
) -> None:
    space = _TrapSpace(width=12)  # 4,096 trap states
    limits = Limits(node_limit=100)
    found = SEARCHES[name](space, space.evaluate, limits, PlanOptions(search=name))
    assert found.operators == (1, 2)
    assert found.expanded < 40
    with pytest.raises(LimitReachedError):
        SEARCHES[name](space, space.evaluate, limits, PlanOptions(search=name, novelty=False))


def test_novelty_is_a_planner_setting_of_the_greedy_searches() -> None:
    assert ("novelty", True) in PlanOptions().settings()
    assert ("novelty", False) in PlanOptions(search="gbfs", novelty=False).settings()
    assert all(key != "novelty" for key, _ in PlanOptions(search="astar").settings())


def test_equal_keys_come_out_first_in_first_out() -> None:
    queue: Alternation[str] = Alternation(preferred=False)
    for name in "xyz":
        queue.push(1.0, name)
    assert [queue.pop() for _ in range(3)] == ["x", "y", "z"]


@st.composite
def _graphs(draw: st.DrawFn) -> GraphSpace:
    n = draw(st.integers(2, 9))
    names = [f"n{i}" for i in range(n)]
    edges: Edges = {}
    op = 0
    for s in names:
        targets = draw(st.lists(st.sampled_from(names), max_size=3))
        out: list[tuple[int, str, Number]] = []
        for t in targets:
            out.append((op, t, draw(st.integers(1, 4))))
            op += 1
        edges[s] = out
    goals = set(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2)))
    return GraphSpace(edges, "n0", goals)


def _dijkstra(space: GraphSpace) -> Number | None:
    import heapq

    best: dict[str, Number] = {space.initial: 0}
    heap: list[tuple[Number, str]] = [(0, space.initial)]
    while heap:
        g, s = heapq.heappop(heap)
        if g > best[s]:
            continue
        if space.is_goal(s):
            return g
        for _, t, c in space.edges.get(s, []):
            if g + c < best.get(t, float("inf")):
                best[t] = g + c
                heapq.heappush(heap, (g + c, t))
    return None


@settings(max_examples=200, deadline=None)
@given(_graphs())
def test_searches_agree_with_dijkstra_and_breadth_first_on_random_graphs(space: GraphSpace) -> None:
    optimal = _dijkstra(space)
    fewest = bfs_distance(space)
    for name in SEARCH_NAMES:
        fresh = GraphSpace(space.edges, space.initial, space.goals)
        if optimal is None:
            with pytest.raises(UnsolvableError):
                _run(name, fresh)
            continue
        result = _run(name, fresh)
        # the path is real and ends in a goal
        state = space.initial
        cost: Number = 0
        for op in result.operators:
            state, c = next((t, c) for o, t, c in space.edges[state] if o == op)
            cost += c
        assert space.is_goal(state)
        assert cost == result.cost
        if name == "astar":
            assert cost == optimal
        if name == "bfs":
            assert len(result.operators) == fewest
