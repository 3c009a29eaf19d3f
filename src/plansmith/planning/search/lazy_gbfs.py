"""Lazy greedy best-first search with preferred operators (Fast Downward's ``lazy_greedy``).

Successors are not evaluated when generated: each enters the open list with its
parent's heuristic value and is evaluated only when taken out (deferred
evaluation), which saves most evaluations when the heuristic guides well.
Successors reached by a preferred operator of their parent also enter a
preferred queue, used in turn with the regular one; whenever a new best
heuristic value is found, the preferred queue gets ``BOOST`` extra turns.
With ``novelty``, successors that are novel among those generated from states
of the same heuristic value (:class:`~._alternation.Novelty`) also enter a
third queue, never boosted. States are never reopened. The goal test is done
when a state is expanded.
"""

from __future__ import annotations

import math

from plansmith.model import Number
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

__all__ = ["lazy_gbfs", "BOOST"]

BOOST = 1000


def lazy_gbfs(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, options: PlanOptions
) -> SearchResult:
    """Lazy GBFS; preferred operators and boosting if ``options.preferred_operators``,
    a novelty queue if ``options.novelty``."""
    use_preferred = options.preferred_operators
    novelty = Novelty() if options.novelty else None
    expanded = generated = evaluated = 0
    state = space.initial_state()
    h, preferred = evaluate(state)
    evaluated += 1
    if h == math.inf:
        raise unsolvable(expanded, generated, evaluated)
    best_h = h
    parents: Parents[S] = {state: None}
    queue: Alternation[tuple[S, S, int, Number]] = Alternation(
        preferred=use_preferred, novel=novelty is not None
    )
    check_at = limits.first_check()
    is_goal, successors, features = space.is_goal, space.successors, space.features
    while True:
        if is_goal(state):
            ops, cost = extract_path(parents, state)
            return SearchResult(ops, cost, expanded, generated, evaluated)
        if expanded >= check_at:
            check_at = limits.check(expanded, generated, evaluated)
        expanded += 1
        batch = [(succ, state, op, c) for op, succ, c in successors(state)]
        generated += len(batch)
        chosen = (
            [entry for entry in batch if entry[2] in preferred]
            if use_preferred and preferred
            else []
        )
        novel = (
            [batch[i] for i in novelty.novel(h, [features(entry[0]) for entry in batch])]
            if novelty is not None
            else []
        )
        queue.push_batch(h, batch, chosen, novel)
        while True:
            entry = queue.pop_unseen(parents)  # skips the states already reached
            if entry is None:
                raise unsolvable(expanded, generated, evaluated)
            succ, parent, op, c = entry
            parents[succ] = (parent, op, c)
            h, preferred = evaluate(succ)
            evaluated += 1
            if h == math.inf:
                continue
            if h < best_h:
                best_h = h
                queue.boost(BOOST)
            state = succ
            break
