"""Weighted A*: A* on ``f = g + w * h`` with ``w = options.weight``; plans cost at most
``w`` times the optimum when the heuristic is admissible."""

from __future__ import annotations

from plansmith.planning._options import PlanOptions
from plansmith.planning.search._space import Evaluator, Limits, S, SearchResult, SearchSpace
from plansmith.planning.search.astar import weighted_astar

__all__ = ["wastar"]


def wastar(
    space: SearchSpace[S], evaluate: Evaluator[S], limits: Limits, options: PlanOptions
) -> SearchResult:
    """Weighted A* with the weight of ``options`` (at least 1)."""
    return weighted_astar(space, evaluate, limits, max(1, options.weight))
