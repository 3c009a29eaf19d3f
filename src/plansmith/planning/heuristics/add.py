"""hadd: the sum of the goal facts' costs, each the cheapest way to reach it when
an operator costs its own cost plus the sum of its preconditions' costs."""

from __future__ import annotations

from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics._relaxed import goal_cost
from plansmith.planning.search import Evaluator

__all__ = ["add"]


def add(task: GroundTask) -> Evaluator[int]:
    """The hadd evaluator of ``task`` (no preferred operators)."""
    return goal_cost(task, additive=True)
