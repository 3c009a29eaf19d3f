"""What a search runs over: a space of states, an evaluator, limits and its result.

Searches never see atoms or tasks: a :class:`SearchSpace` gives the initial
state, the goal test and the successors of a state (``(operator id, successor,
cost)``, in a fixed order), and an :data:`Evaluator` gives a state's heuristic
value (``math.inf`` for a dead end) with its preferred operators. Tests use
small hand-made spaces; the planner uses :class:`plansmith.planning._task.TaskSpace`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from plansmith.errors import LimitReachedError, UnsolvableError
from plansmith.model import Number

__all__ = [
    "SearchSpace",
    "Evaluator",
    "Evaluation",
    "SearchResult",
    "Limits",
    "extract_path",
    "stopped",
    "unsolvable",
]

S = TypeVar("S", bound=Hashable)

Evaluation = tuple[float, Collection[int]]
"""A heuristic value (``inf``: dead end) and the preferred operator ids of a state."""

Evaluator = Callable[[S], Evaluation]

Parents = dict[S, tuple[S, int, Number] | None]
"""For each reached state, its parent, the operator that led to it and its cost."""


class SearchSpace(Protocol[S]):
    """A state space: the initial state, the goal test and the successors."""

    def initial_state(self) -> S: ...

    def is_goal(self, state: S) -> bool: ...

    def successors(self, state: S) -> Sequence[tuple[int, S, Number]]: ...

    def features(self, state: S) -> int:
        """The state's facts as a bitset (bit i: fact i), for novelty."""
        ...


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A path of operator ids from the initial state to a goal state, and counts."""

    operators: tuple[int, ...]
    cost: Number
    expanded: int
    generated: int
    evaluated: int


class Limits:
    """The node and time limits of one search, checked every ``every`` expansions.

    ``clock`` is only called when there is a time limit; ``start`` is its value
    when the limits were made (so grounding counts against the time limit).
    ``should_stop`` (injected like the clock: e.g. a ``threading.Event``'s ``is_set``)
    is called at the same check points; once it returns true the search stops with
    LimitReachedError, so that a caller that gave up on the search (Ctrl-C, a
    cancelled request) does not leave it burning a CPU.
    """

    __slots__ = ("clock", "every", "node_limit", "should_stop", "start", "time_limit")

    def __init__(
        self,
        *,
        time_limit: float | None = None,
        node_limit: int | None = None,
        clock: Callable[[], float] | None = None,
        every: int = 64,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        if time_limit is not None and clock is None:
            raise ValueError("a time limit needs a clock")
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.clock = clock
        self.every = every
        self.should_stop = should_stop
        self.start = clock() if clock is not None and time_limit is not None else 0.0

    def first_check(self) -> int:
        """The number of expansions at which a search first calls :meth:`check`."""
        return self.next_check(0)

    def next_check(self, expanded: int) -> int:
        nxt = expanded + self.every
        if self.node_limit is not None:
            nxt = min(nxt, self.node_limit)
        return nxt

    def check(self, expanded: int, generated: int, evaluated: int) -> int:
        """Raise LimitReachedError if a limit is reached or the search is to stop; else
        the next check point."""
        counts = f"expanded {expanded}, generated {generated}, evaluated {evaluated} states"
        if self.node_limit is not None and expanded >= self.node_limit:
            raise LimitReachedError(
                f"the node limit of {self.node_limit} expansions was reached ({counts})",
                hint="raise the node limit, or try a greedy search "
                "(lazy-gbfs with the ff heuristic) that expands fewer nodes",
            )
        self.check_time(counts)
        self.check_stop(counts)
        return self.next_check(expanded)

    def check_time(self, counts: str = "before the search") -> None:
        """Raise LimitReachedError if the time limit is reached."""
        if self.time_limit is not None and self.clock is not None:
            elapsed = self.clock() - self.start
            if elapsed >= self.time_limit:
                raise LimitReachedError(
                    f"the time limit of {self.time_limit:g} s was reached after "
                    f"{elapsed:.2f} s ({counts})",
                    hint="raise the time limit, or try a greedy search "
                    "(lazy-gbfs with the ff heuristic) that finds plans faster",
                )

    def check_stop(self, counts: str = "before the search") -> None:
        """Raise LimitReachedError if ``should_stop`` says the search is to stop."""
        if self.should_stop is not None and self.should_stop():
            raise stopped(counts)


def extract_path(parents: Parents[S], goal: S) -> tuple[tuple[int, ...], Number]:
    """The operators from the initial state (the one without parent) to ``goal``."""
    ops: list[int] = []
    cost: Number = 0
    entry = parents[goal]
    while entry is not None:
        state, op, c = entry
        ops.append(op)
        cost += c
        entry = parents[state]
    ops.reverse()
    return tuple(ops), cost


def stopped(counts: str) -> LimitReachedError:
    """The error of a search stopped because its caller asked it to (``should_stop``)."""
    return LimitReachedError(
        f"the search was stopped before it ended: its caller gave up on it ({counts})",
        hint="plan again, and let the search run to its end",
    )


def unsolvable(expanded: int, generated: int, evaluated: int) -> UnsolvableError:
    """The error of a search that exhausted its space."""
    return UnsolvableError(
        "no plan exists: the search exhausted every reachable state "
        f"(expanded {expanded}, generated {generated}, evaluated {evaluated} states)",
        hint="check the goal against the actions' effects, and the initial state",
    )
