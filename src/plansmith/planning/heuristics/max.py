"""hmax: the costliest goal fact, each fact costing the cheapest way to reach it when
an operator costs its own cost plus the *max* of its preconditions' costs.

Admissible and consistent: A* with hmax returns optimal plans.
"""

from __future__ import annotations

import math

from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics._relaxed import Relaxation
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["hmax"]


def hmax(task: GroundTask) -> Evaluator[int]:
    """The hmax evaluator of ``task`` (no preferred operators)."""
    relaxed = Relaxation(task)
    goals, explore = relaxed.goals, relaxed.explore

    def evaluate(state: int) -> Evaluation:
        cost, _, reached = explore(state, additive=False)
        if not reached:
            return math.inf, ()
        return float(max((cost[g] for g in goals), default=0)), ()

    return evaluate
