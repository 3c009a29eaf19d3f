"""Problems and spaces for the grounding, heuristic, search and solve tests:
hand-made problems, random small STRIPS problems (hypothesis), a naive reference
planner and toy search spaces (the PDDL benchmark problems are in ``tests/_pddl_suite.py``)."""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from hypothesis import strategies as st

from plansmith.model import (
    ActionSchema,
    Atom,
    Condition,
    Domain,
    Equality,
    GroundAction,
    Literal,
    Number,
    Problem,
    TypedName,
    TypeHierarchy,
)
from plansmith.planning import instantiate


def lit(pred: str, *args: str, positive: bool = True) -> Literal:
    return Literal(Atom(pred, tuple(args)), positive)


def neg(pred: str, *args: str) -> Literal:
    return lit(pred, *args, positive=False)


def atom(pred: str, *args: str) -> Atom:
    return Atom(pred, tuple(args))


def action(
    name: str,
    params: Sequence[str | tuple[str, str]] = (),
    pre: Sequence[Condition] = (),
    eff: Sequence[Literal] = (),
    cost: Number | Atom = 1,
) -> ActionSchema:
    """An action schema; a parameter is ``"?x"`` or ``("?x", "type")``."""
    typed = tuple(TypedName(p) if isinstance(p, str) else TypedName(*p) for p in params)
    return ActionSchema(name, typed, tuple(pre), tuple(eff), cost)


def problem(
    actions: Sequence[ActionSchema],
    init: Sequence[Atom],
    goal: Sequence[Condition],
    *,
    objects: Sequence[str | tuple[str, str] | TypedName] = (),
    types: dict[str, str] | None = None,
    constants: Sequence[str | tuple[str, str]] = (),
    functions: Sequence[tuple[Atom, Number]] = (),
) -> Problem:
    def typed(names: Sequence[str | tuple[str, str] | TypedName]) -> tuple[TypedName, ...]:
        return tuple(
            n if isinstance(n, TypedName) else TypedName(n) if isinstance(n, str) else TypedName(*n)
            for n in names
        )

    domain = Domain(
        "toy",
        types=TypeHierarchy.of(types or {}),
        constants=typed(constants),
        actions=tuple(actions),
    )
    return Problem(
        "toy",
        domain,
        objects=typed(objects),
        init=frozenset(init),
        goal=tuple(goal),
        function_values=tuple(functions),
    )


# -- replaying and a naive reference planner --------------------------------------------


def goal_holds(prob: Problem, state: frozenset[Atom]) -> bool:
    for cond in prob.goal:
        if isinstance(cond, Equality):
            if (cond.left == cond.right) != cond.positive:
                return False
        elif (cond.atom in state) != cond.positive:
            return False
    return True


def replays(prob: Problem, actions: Sequence[GroundAction]) -> bool:
    """Whether ``actions`` apply in turn from the initial state and reach the goal."""
    state = prob.init
    for a in actions:
        if not a.applicable(state):
            return False
        state = a.apply(state)
    return goal_holds(prob, state)


def naive_actions(prob: Problem) -> list[GroundAction]:
    """Every schema applied to every tuple of objects of the right types."""
    types = prob.domain.types
    objects = prob.all_objects
    out: list[GroundAction] = []
    for schema in prob.domain.actions:
        domains = [
            [o.name for o in objects if types.is_subtype(o.type, p.type)] for p in schema.parameters
        ]
        for args in itertools.product(*domains):
            ground = instantiate(schema, args, dict(prob.function_values))
            if ground is not None:
                out.append(ground)
    return out


def naive_optimal_cost(prob: Problem, limit: int = 20000) -> float | None:
    """The cheapest plan's cost by uniform-cost search over naive ground actions,
    None if no plan exists (raises if more than ``limit`` states are reached)."""
    import heapq

    acts = naive_actions(prob)
    start = prob.init
    best = {start: 0.0}
    heap: list[tuple[float, int, frozenset[Atom]]] = [(0.0, 0, start)]
    counter = 0
    while heap:
        g, _, state = heapq.heappop(heap)
        if g > best[state]:
            continue
        if goal_holds(prob, state):
            return g
        for a in acts:
            if a.applicable(state):
                nxt = a.apply(state)
                g2 = g + a.cost
                if g2 < best.get(nxt, math.inf):
                    best[nxt] = g2
                    counter += 1
                    if counter > limit:
                        raise RuntimeError("reference search too large")
                    heapq.heappush(heap, (g2, counter, nxt))
    return None


# -- random small STRIPS problems ---------------------------------------------------------

PREDICATES = {"p": 0, "q": 1, "r": 1, "s": 2}
OBJECTS = (("a", "t1"), ("b", "t2"), ("c", "t2"))
TYPES = {"t1": "object", "t2": "t1"}


@st.composite
def _literal(draw: st.DrawFn, params: Sequence[str], positive: bool | None = None) -> Literal:
    pred = draw(st.sampled_from(sorted(PREDICATES)))
    terms = params or ["a"]
    args = tuple(draw(st.sampled_from(terms)) for _ in range(PREDICATES[pred]))
    pos = draw(st.booleans()) if positive is None else positive
    return Literal(Atom(pred, args), pos)


@st.composite
def _schema(draw: st.DrawFn, index: int, costs: bool) -> ActionSchema:
    n = draw(st.integers(0, 2))
    params = [f"?x{i}" for i in range(n)]
    typed = tuple(TypedName(p, draw(st.sampled_from(["object", "t1", "t2"]))) for p in params)
    pre: list[Condition] = draw(st.lists(_literal(params), max_size=3))
    if n == 2 and draw(st.booleans()):
        pre.append(Equality(params[0], params[1], positive=draw(st.booleans())))
    eff = draw(st.lists(_literal(params), min_size=1, max_size=3))
    cost = draw(st.integers(0, 3)) if costs else 1
    return ActionSchema(f"act{index}", typed, tuple(pre), tuple(eff), cost)


def _ground_atoms() -> list[Atom]:
    names = [o for o, _ in OBJECTS]
    return [
        Atom(p, args)
        for p, arity in sorted(PREDICATES.items())
        for args in itertools.product(names, repeat=arity)
    ]


@st.composite
def strips_problems(draw: st.DrawFn, costs: bool = False) -> Problem:
    """A random problem with up to four small schemas over three typed objects."""
    n = draw(st.integers(1, 4))
    schemas = [draw(_schema(i, costs)) for i in range(n)]
    atoms = _ground_atoms()
    init = draw(st.sets(st.sampled_from(atoms), max_size=6))
    goal = draw(
        st.lists(
            st.builds(Literal, st.sampled_from(atoms), st.booleans()),
            min_size=1,
            max_size=3,
            unique_by=lambda lit: lit.atom,
        )
    )
    return problem(schemas, sorted(init), goal, objects=OBJECTS, types=TYPES)


# -- toy search spaces ---------------------------------------------------------------------


class GraphSpace:
    """A search space from an explicit graph: ``edges[state] = [(op, succ, cost)]``."""

    def __init__(
        self,
        edges: dict[str, list[tuple[int, str, Number]]],
        initial: str,
        goals: set[str],
    ) -> None:
        self.edges = edges
        self.initial = initial
        self.goals = goals
        self.expanded: list[str] = []
        self._bits: dict[str, int] = {}

    def initial_state(self) -> str:
        return self.initial

    def is_goal(self, state: str) -> bool:
        return state in self.goals

    def successors(self, state: str) -> list[tuple[int, str, Number]]:
        self.expanded.append(state)
        return self.edges.get(state, [])

    def features(self, state: str) -> int:
        """Each state is a fact of its own: every new state is novel."""
        return 1 << self._bits.setdefault(state, len(self._bits))


def table_evaluator(
    values: Mapping[str, float], preferred: Mapping[str, set[int]] | None = None
) -> Callable[[str], tuple[float, set[int]]]:
    """An evaluator reading ``values`` (missing: 0) and ``preferred`` operators."""

    def evaluate(state: str) -> tuple[float, set[int]]:
        return values.get(state, 0.0), (preferred or {}).get(state, set())

    return evaluate


def grid_space(
    width: int, height: int
) -> tuple[GraphSpace, Callable[[str], tuple[float, set[int]]]]:
    """A grid from (0,0) to the far corner, unit moves right (op 0) and up (op 1),
    with the Manhattan distance as heuristic."""
    edges: dict[str, list[tuple[int, str, Number]]] = {}
    for x, y in itertools.product(range(width), range(height)):
        out: list[tuple[int, str, Number]] = []
        if x + 1 < width:
            out.append((0, f"{x + 1},{y}", 1))
        if y + 1 < height:
            out.append((1, f"{x},{y + 1}", 1))
        edges[f"{x},{y}"] = out
    goal = f"{width - 1},{height - 1}"

    def evaluate(state: str) -> tuple[float, set[int]]:
        x, y = map(int, state.split(","))
        return float(width - 1 - x + height - 1 - y), set()

    return GraphSpace(edges, "0,0", {goal}), evaluate


def bfs_distance(space: GraphSpace) -> int | None:
    """The fewest steps to a goal in ``space`` (no limits, no heuristic)."""
    seen = {space.initial: 0}
    queue = deque([space.initial])
    while queue:
        s = queue.popleft()
        if space.is_goal(s):
            return seen[s]
        for _, t, _ in space.edges.get(s, []):
            if t not in seen:
                seen[t] = seen[s] + 1
                queue.append(t)
    return None
