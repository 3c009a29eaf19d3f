"""hadd: the sum of the goal facts' costs, each the cheapest way to reach it when
an operator costs its own cost plus the sum of its preconditions' costs."""

from __future__ import annotations

import math

from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics._relaxed import Relaxation
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["add"]


def add(task: GroundTask) -> Evaluator[int]:
    """The hadd evaluator of ``task`` (no preferred operators)."""
    relaxed = Relaxation(task)
    goals, explore = relaxed.goals, relaxed.explore

    def evaluate(state: int) -> Evaluation:
        cost, _, reached = explore(state, additive=True)
        if not reached:
            return math.inf, ()
        return float(sum(cost[g] for g in goals)), ()

    return evaluate
