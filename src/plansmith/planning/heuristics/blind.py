"""Blind: 0 in a goal state, else the cheapest operator's cost (admissible; A* with it
is uniform-cost search)."""

from __future__ import annotations

from plansmith.planning._task import GroundTask
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["blind"]


def blind(task: GroundTask) -> Evaluator[int]:
    """The blind evaluator of ``task`` (no preferred operators)."""
    step = float(min((op.cost for op in task.operators), default=0))
    is_goal = task.is_goal

    def evaluate(state: int) -> Evaluation:
        return (0.0 if is_goal(state) else step), ()

    return evaluate
