"""A run's events in memory, for the views: loaded from the log, then pushed live."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from plansmith.execution import Event, RunFinished

__all__ = ["Feed"]


class Feed:
    """Every event of one run, in seq order; ``signal`` is set when an event arrives."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = []
        self.signal = asyncio.Event()
        self.finished = False
        self.closed = False
        for event in events:
            self._add(event)

    def _add(self, event: Event) -> None:
        if self.events and event.seq <= self.events[-1].seq:
            return  # already here (a subscriber and a log read can overlap)
        self.events.append(event)
        if isinstance(event, RunFinished):
            self.finished = True

    def push(self, event: Event) -> None:
        """Add ``event`` (the engine's subscriber) and wake the streams."""
        self._add(event)
        self.poke()

    def poke(self) -> None:
        signal, self.signal = self.signal, asyncio.Event()
        signal.set()

    def close(self) -> None:
        """No more events will come from this process (the app is shutting down)."""
        self.closed = True
        self.poke()
