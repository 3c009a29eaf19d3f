"""Planner options: which search, which heuristic, and the limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["SearchName", "HeuristicName", "PlanOptions", "SEARCH_NAMES", "HEURISTIC_NAMES"]

SearchName = Literal["astar", "wastar", "gbfs", "lazy-gbfs", "bfs"]
HeuristicName = Literal["ff", "add", "max", "lmcut", "goalcount", "blind"]

SEARCH_NAMES: tuple[SearchName, ...] = ("astar", "wastar", "gbfs", "lazy-gbfs", "bfs")
HEURISTIC_NAMES: tuple[HeuristicName, ...] = (
    "ff",
    "add",
    "max",
    "lmcut",
    "goalcount",
    "blind",
)


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """How to plan. The default is lazy greedy best-first search with hFF,
    preferred operators and a novelty queue. ``novelty`` (gbfs, lazy-gbfs) adds
    a third queue of the successors that make a fact true for the first time
    among states of the same heuristic value. ``time_limit`` is in seconds of
    the injected clock; ``node_limit`` counts expanded nodes (HTN:
    decomposition steps)."""

    search: SearchName = "lazy-gbfs"
    heuristic: HeuristicName = "ff"
    weight: int = 2
    preferred_operators: bool = True
    novelty: bool = True
    time_limit: float | None = None
    node_limit: int | None = None

    def settings(self) -> tuple[tuple[str, str | int | float | bool | None], ...]:
        """What goes into the plan JSON's ``planner`` object (no limits: they do not
        change a plan that was found, and would make equal plans hash differently)."""
        out: list[tuple[str, str | int | float | bool | None]] = [
            ("kind", "classical"),
            ("search", self.search),
            ("heuristic", self.heuristic),
        ]
        if self.search == "wastar":
            out.append(("weight", self.weight))
        if self.search in ("gbfs", "lazy-gbfs"):
            out.append(("preferred_operators", self.preferred_operators))
            out.append(("novelty", self.novelty))
        return tuple(out)
