"""Breadth-first search: fewest actions first (costs are ignored); no heuristic."""

from __future__ import annotations

from collections import deque

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

__all__ = ["bfs"]


def bfs(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, options: PlanOptions
) -> SearchResult:
    """Breadth-first search with duplicate detection; the goal is tested on generation.

    ``evaluate`` is not called: breadth-first search uses no heuristic.
    """
    expanded = generated = 0
    init = space.initial_state()
    parents: Parents[S] = {init: None}
    if space.is_goal(init):
        return SearchResult((), 0, 0, 0, 0)
    queue = deque([init])
    check_at = limits.first_check()
    is_goal, successors = space.is_goal, space.successors
    while queue:
        state = queue.popleft()
        if expanded >= check_at:
            check_at = limits.check(expanded, generated, 0)
        expanded += 1
        for op, succ, c in successors(state):
            generated += 1
            if succ in parents:
                continue
            parents[succ] = (state, op, c)
            if is_goal(succ):
                ops, cost = extract_path(parents, succ)
                return SearchResult(ops, cost, expanded, generated, 0)
            queue.append(succ)
    raise unsolvable(expanded, generated, 0)
