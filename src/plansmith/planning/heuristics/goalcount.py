"""Goal count: how many goal literals the state does not satisfy (not admissible
with costs, never a dead end)."""

from __future__ import annotations

from plansmith.planning._task import GroundTask
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["goalcount"]


def goalcount(task: GroundTask) -> Evaluator[int]:
    """The goal-count evaluator of ``task`` (no preferred operators)."""
    goal, goal_neg = task.goal, task.goal_neg

    def evaluate(state: int) -> Evaluation:
        return float((goal & ~state).bit_count() + (goal_neg & state).bit_count()), ()

    return evaluate
