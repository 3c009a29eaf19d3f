"""Eager greedy best-first search: expand the state with the lowest heuristic value.

Every successor is evaluated when it is generated; states are never reopened.
With preferred operators, successors reached by one also enter a second queue,
used in turn with the regular one (:mod:`._alternation`); with novelty, so do
successors that are novel among the states of their heuristic value. The goal
test is done
when a state is expanded. Costs only add up the plan's cost.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from plansmith.planning._options import PlanOptions
from plansmith.planning.search._alternation import Alternation, Novelty
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

__all__ = ["gbfs"]


def gbfs(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, options: PlanOptions
) -> SearchResult:
    """Eager GBFS; preferred operators if ``options.preferred_operators``, a
    novelty queue if ``options.novelty``."""
    use_preferred = options.preferred_operators
    novelty = Novelty() if options.novelty else None
    expanded = generated = evaluated = 0
    init = space.initial_state()
    h0, preferred0 = evaluate(init)
    evaluated += 1
    if h0 == math.inf:
        raise unsolvable(expanded, generated, evaluated)
    parents: Parents[S] = {init: None}
    preferred_of: dict[S, Collection[int]] = {init: preferred0}
    queue: Alternation[S] = Alternation(preferred=use_preferred, novel=novelty is not None)
    queue.push(h0, init)
    check_at = limits.first_check()
    is_goal, successors, features = space.is_goal, space.successors, space.features
    while queue:
        state = queue.pop()
        preferred = preferred_of.pop(state, None)
        if preferred is None:
            continue  # already expanded (it was in both queues)
        if is_goal(state):
            ops, cost = extract_path(parents, state)
            return SearchResult(ops, cost, expanded, generated, evaluated)
        if expanded >= check_at:
            check_at = limits.check(expanded, generated, evaluated)
        expanded += 1
        for op, succ, c in successors(state):
            generated += 1
            if succ in parents:
                continue
            parents[succ] = (state, op, c)
            h, succ_preferred = evaluate(succ)
            evaluated += 1
            if h == math.inf:
                continue
            preferred_of[succ] = succ_preferred
            novel = novelty is not None and bool(novelty.novel(h, [features(succ)]))
            queue.push(h, succ, preferred=use_preferred and op in preferred, novel=novel)
    raise unsolvable(expanded, generated, evaluated)
