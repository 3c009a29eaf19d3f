"""A run while it is planned, or its servers start and its plan is bound."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

import anyio

from plansmith.execution import RunOutcome

__all__ = ["INTERRUPTED", "Starting"]

#: the reason of a run cancelled by an interrupt, not by ``Engine.cancel`` (the runner's)
INTERRUPTED = "the engine was interrupted"


class Starting:
    """A run being planned, or whose servers start (or whose plan is bound), in ``starts``
    while entered: ``Engine.cancel`` sets ``reason`` and cancels ``scope`` (or leaves the
    reason in ``pending`` for a run about to enter), which the
    ``with`` block then ends (the run is recorded cancelled, see
    ``Engine._cancelled_starting``)."""

    def __init__(
        self, run_id: str, starts: dict[str, Starting], pending: dict[str, str] | None = None
    ) -> None:
        self.run_id = run_id
        self.starts = starts
        self.pending = pending if pending is not None else {}
        self.scope = anyio.CancelScope()
        self.reason: str | None = None
        self.in_view = False  # while the run's views hear an event it records

    def __enter__(self) -> Starting:
        self.starts[self.run_id] = self
        self.scope.__enter__()
        reason = self.pending.pop(self.run_id, None)
        if reason is not None:  # ``Engine.cancel`` came before the run began here
            self.reason = reason
            self.scope.cancel()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool:
        try:
            return self.scope.__exit__(et, e, tb)
        finally:
            if self.starts.get(self.run_id) is self:
                del self.starts[self.run_id]

    def cancel(self, reason: str) -> None:
        """Cancel the run with ``reason``: its scope is cancelled (what it awaits ends at
        once), unless a view of its events asks (views are called as each event is
        recorded, see ``views``): the run checks the reason after each event it records,
        and its servers then close in order, not under a cancelled scope."""
        if self.reason is not None:
            return
        self.reason = reason
        if not self.in_view:
            self.scope.cancel()

    @contextmanager
    def views(self) -> Iterator[None]:
        """While the run's views hear the events recorded in the block."""
        self.in_view = True
        try:
            yield
        finally:
            self.in_view = False

    def outcome(self) -> RunOutcome:
        return RunOutcome(self.run_id, "cancelled", self.reason or INTERRUPTED, {})
