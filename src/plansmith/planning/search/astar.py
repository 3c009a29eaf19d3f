"""A*: best-first search on ``f = g + w * h``, optimal for an admissible heuristic when ``w = 1``.

Ties on ``f`` go to the lower ``h``, then to the state generated first. The goal
test is done when a state is expanded. A state reached again more cheaply is
reopened (each state has at most one live entry: a push needs a strictly lower
``g``), so inconsistent heuristics keep their guarantee.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush

from plansmith.model import Number
from plansmith.planning._options import PlanOptions
from plansmith.planning.search._space import (
    Evaluator,
    Limits,
    Parents,
    S,
    SearchResult,
    SearchSpace,
    extract_path,
    unsolvable,
)

__all__ = ["astar", "weighted_astar"]


def astar(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, options: PlanOptions
) -> SearchResult:
    """A* (``weight`` 1); ``options`` only choose the heuristic here."""
    return weighted_astar(space, evaluate, limits, 1)


def weighted_astar(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, weight: float
) -> SearchResult:
    """Best-first search on ``g + weight * h`` with reopening."""
    expanded = generated = evaluated = 0
    init = space.initial_state()
    h0 = evaluate(init)[0]
    evaluated += 1
    if h0 == math.inf:
        raise unsolvable(expanded, generated, evaluated)
    parents: Parents[S] = {init: None}
    best_g: dict[S, Number] = {init: 0}
    h_of: dict[S, float] = {init: h0}
    counter = 0
    heap: list[tuple[float, float, int, Number, S]] = [(weight * h0, h0, counter, 0, init)]
    check_at = limits.first_check()
    is_goal, successors = space.is_goal, space.successors
    while heap:
        _, _, _, g, state = heappop(heap)
        if g > best_g[state]:
            continue  # a cheaper path to this state was found after this entry
        if is_goal(state):
            ops, cost = extract_path(parents, state)
            return SearchResult(ops, cost, expanded, generated, evaluated)
        if expanded >= check_at:
            check_at = limits.check(expanded, generated, evaluated)
        expanded += 1
        for op, succ, c in successors(state):
            generated += 1
            g2 = g + c
            old = best_g.get(succ)
            if old is not None and old <= g2:
                continue
            h = h_of.get(succ)
            if h is None:
                h = evaluate(succ)[0]
                evaluated += 1
                h_of[succ] = h
            if h == math.inf:
                continue
            best_g[succ] = g2
            parents[succ] = (state, op, c)
            counter += 1
            heappush(heap, (g2 + weight * h, h, counter, g2, succ))
    raise unsolvable(expanded, generated, evaluated)
