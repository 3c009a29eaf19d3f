"""hmax: the costliest goal fact, each fact costing the cheapest way to reach it when
an operator costs its own cost plus the *max* of its preconditions' costs.

Admissible and consistent: A* with hmax returns optimal plans.
"""

from __future__ import annotations

from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics._relaxed import goal_cost
from plansmith.planning.search import Evaluator

__all__ = ["hmax"]


def hmax(task: GroundTask) -> Evaluator[int]:
    """The hmax evaluator of ``task`` (no preferred operators)."""
    return goal_cost(task, additive=False)
