"""Backpressure: at most N calls run at once; the next one is turned away at once.

A call that finds every slot taken does not queue: it gets a structured
``busy`` error (retryable, with a suggested wait) within microseconds, so a
flood cannot pile up work or memory on the server. N defaults to twice the CPUs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from plansmith.domains.code._errors import UnavailableError

__all__ = ["Backpressure"]


class Backpressure:
    """A non-blocking semaphore with counters (admitted, rejected, peak)."""

    def __init__(self, limit: int, *, retry_after_ms: int = 250) -> None:
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        self.limit = limit
        self.retry_after_ms = retry_after_ms
        self._slots = anyio.Semaphore(limit)
        self.admitted = 0
        self.rejected = 0
        self.peak = 0

    @property
    def active(self) -> int:
        return self.limit - self._slots.value

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the body, or raise ``busy`` if none is free."""
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            self.rejected += 1
            raise UnavailableError(
                "busy",
                f"the server is running {self.limit} calls, its limit",
                fix=f"retry after about {self.retry_after_ms} ms",
            ) from None
        self.admitted += 1
        self.peak = max(self.peak, self.active)
        try:
            yield
        finally:
            self._slots.release()
