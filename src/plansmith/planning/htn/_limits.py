"""The node and time budget of one decomposition, with an injected clock."""

from __future__ import annotations

from collections.abc import Callable

from plansmith.errors import LimitReachedError

__all__ = ["Budget"]

_CLOCK_EVERY = 64  # nodes between two readings of the clock


class Budget:
    """Counts decomposition nodes; raises LimitReachedError past either limit, or once
    ``should_stop`` returns true.

    ``tick`` is called once per node (a task, goal or action taken from the
    agenda). The clock and ``should_stop`` are read every 64 nodes, and the clock
    once at the start.
    """

    __slots__ = (
        "_clock",
        "_deadline",
        "_next_check",
        "node_limit",
        "nodes",
        "should_stop",
        "time_limit",
    )

    def __init__(
        self,
        node_limit: int | None,
        time_limit: float | None,
        clock: Callable[[], float],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.nodes = 0
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.should_stop = should_stop
        self._clock = clock
        self._deadline = None if time_limit is None else clock() + time_limit
        self._next_check = _CLOCK_EVERY

    def tick(self) -> None:
        self.nodes += 1
        if self.node_limit is not None and self.nodes > self.node_limit:
            raise LimitReachedError(
                f"the node limit ({self.node_limit} decomposition steps) was reached",
                hint="raise the node limit, or check the methods for a loop without progress",
            )
        if self.nodes >= self._next_check:
            self._next_check = self.nodes + _CLOCK_EVERY
            if self._deadline is not None and self._clock() >= self._deadline:
                raise LimitReachedError(
                    f"the time limit ({self.time_limit:g} s) was reached after "
                    f"{self.nodes} decomposition steps",
                    hint="raise the time limit, or check the methods for a loop without progress",
                )
            if self.should_stop is not None and self.should_stop():
                raise LimitReachedError(
                    "the decomposition was stopped before it ended: its caller gave up on"
                    f" it (after {self.nodes} decomposition steps)",
                    hint="plan again, and let the decomposition run to its end",
                )
