"""Forward searches, one per module, chosen by name from :data:`SEARCHES`.

Each search is a function ``(space, evaluate, limits, options) -> SearchResult``
over the small :class:`SearchSpace` protocol, so tests can run it on toy spaces.
It raises UnsolvableError when it exhausts the space and LimitReachedError when
a limit stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plansmith.planning._options import PlanOptions, SearchName
from plansmith.planning.search._space import (
    Evaluation,
    Evaluator,
    Limits,
    SearchResult,
    SearchSpace,
)
from plansmith.planning.search.astar import astar
from plansmith.planning.search.bfs import bfs
from plansmith.planning.search.gbfs import gbfs
from plansmith.planning.search.lazy_gbfs import lazy_gbfs
from plansmith.planning.search.wastar import wastar

__all__ = [
    "SEARCHES",
    "SearchFunction",
    "SearchSpace",
    "Evaluation",
    "Evaluator",
    "Limits",
    "SearchResult",
    "astar",
    "wastar",
    "gbfs",
    "lazy_gbfs",
    "bfs",
]

SearchFunction = Callable[[SearchSpace[Any], Evaluator[Any], Limits, PlanOptions], SearchResult]

SEARCHES: dict[SearchName, SearchFunction] = {
    "astar": astar,
    "wastar": wastar,
    "gbfs": gbfs,
    "lazy-gbfs": lazy_gbfs,
    "bfs": bfs,
}
