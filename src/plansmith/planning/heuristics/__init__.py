"""Heuristics, one per module, chosen by name from :data:`HEURISTICS`.

Each is a factory ``task -> evaluate``: it precomputes what it needs from a
:class:`GroundTask` once, and ``evaluate(state)`` returns the state's value
(``math.inf`` for a proved dead end) and its preferred operator ids.
"""

from __future__ import annotations

from collections.abc import Callable

from plansmith.planning._options import HeuristicName
from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics.add import add
from plansmith.planning.heuristics.blind import blind
from plansmith.planning.heuristics.ff import ff
from plansmith.planning.heuristics.goalcount import goalcount
from plansmith.planning.heuristics.lmcut import lmcut
from plansmith.planning.heuristics.max import hmax
from plansmith.planning.search import Evaluator

__all__ = [
    "HEURISTICS",
    "HeuristicFactory",
    "ff",
    "add",
    "hmax",
    "lmcut",
    "goalcount",
    "blind",
]

HeuristicFactory = Callable[[GroundTask], Evaluator[int]]

HEURISTICS: dict[HeuristicName, HeuristicFactory] = {
    "ff": ff,
    "add": add,
    "max": hmax,
    "lmcut": lmcut,
    "goalcount": goalcount,
    "blind": blind,
}
