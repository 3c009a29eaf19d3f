"""Limits of a source server over time: a rate quota and a circuit breaker.

Both are kept per source server and shared by every research run of the service
(as the server pool's limiter of calls at once is), built from the source's
:class:`~._quota.SourceQuota` by :func:`guards_for`.

:class:`RateQuota` lets at most ``max_rate`` calls start in any ``rate_window``
seconds. A call's slot is freed ``rate_window`` seconds after the call *returns*
(not after it was sent), so the server never sees more calls start in a window,
whatever the transport's delay. A call over the rate waits for a slot (first come,
first served); the desk waits within its run's deadline.

:class:`CircuitBreaker` opens after ``breaker_failures`` failed calls in a row (a
tool error or an error result); while open it refuses calls at once; after
``breaker_cooldown`` seconds it half-opens and lets one trial call through: a
success closes it (a recovery), a failure opens it again.

Time comes from a :class:`LimitClock` (``now`` and ``sleep``): :data:`REAL_CLOCK`
by default, a fake one in tests.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import anyio

from plansmith.domains.research.desk._quota import SourceQuota

__all__ = [
    "LimitClock",
    "REAL_CLOCK",
    "RateQuota",
    "CircuitBreaker",
    "SourceGuard",
    "guards_for",
]


class LimitClock(Protocol):
    """Where the limits get the time from (seconds) and how they wait."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class _RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


REAL_CLOCK: LimitClock = _RealClock()


class RateQuota:
    """At most ``calls`` calls start in any ``window`` seconds (see the module)."""

    def __init__(self, calls: int, window: float, clock: LimitClock = REAL_CLOCK) -> None:
        self.calls, self.window, self.clock = calls, window, clock
        self._free_at: deque[float] = deque()  # when the slots of returned calls free up
        self._busy = 0  # slots of calls in flight
        self._lock: anyio.Lock | None = None  # the waiters, first come first served
        self._returned: anyio.Event | None = None  # made in the event loop, on first use

    async def acquire(self) -> float:
        """Take a slot, waiting for one when the rate is reached; the seconds waited."""
        start = self.clock.now()
        if self._lock is None:
            self._lock = anyio.Lock()
        waited = self._lock.locked()  # queued behind a waiter
        async with self._lock:
            while True:
                now = self.clock.now()
                while self._free_at and self._free_at[0] <= now:
                    self._free_at.popleft()
                if len(self._free_at) + self._busy < self.calls:
                    self._busy += 1
                    return self.clock.now() - start if waited else 0.0
                waited = True
                if self._free_at:
                    await self.clock.sleep(self._free_at[0] - now)
                else:  # every slot is held by a call in flight
                    self._returned = anyio.Event()
                    await self._returned.wait()

    def release(self) -> None:
        """The call of a slot returned: its slot frees up ``window`` seconds from now."""
        self._busy -= 1
        self._free_at.append(self.clock.now() + self.window)
        if self._returned is not None:
            self._returned.set()


class CircuitBreaker:
    """Opens after ``failures`` failed calls in a row (see the module)."""

    def __init__(
        self, source: str, failures: int, cooldown: float, clock: LimitClock = REAL_CLOCK
    ) -> None:
        self.source, self.failures, self.cooldown, self.clock = source, failures, cooldown, clock
        self.state = "closed"  # closed, open, half-open
        self.in_a_row = 0
        self.opened_at = 0.0
        self._trial = False
        self.openings = 0
        self.recoveries = 0

    def refusal(self, *, trial: bool = True) -> str | None:
        """Why a call may not be sent now (None: it may; in half-open it becomes the trial
        call, unless ``trial`` is False: only asking)."""
        if self.state == "open":
            left = self.opened_at + self.cooldown - self.clock.now()
            if left > 0:
                return (
                    f"breaker of {self.source} open ({self.failures} failures in a row; "
                    f"cool-down {self.cooldown:g} s)"
                )
            self.state = "half-open"
        if self.state == "half-open":
            if self._trial:
                return f"breaker of {self.source} half-open (its trial call in flight)"
            self._trial = trial
        return None

    def succeeded(self) -> bool:
        """A call succeeded; True when that closed the breaker (a recovery)."""
        self.in_a_row = 0
        if self.state != "half-open":
            return False
        self.state, self._trial = "closed", False
        self.recoveries += 1
        return True

    def failed(self) -> bool:
        """A call failed; True when that opened the breaker."""
        self.in_a_row += 1
        if self.state == "half-open" or (self.state == "closed" and self.in_a_row >= self.failures):
            self.state, self._trial, self.opened_at = "open", False, self.clock.now()
            self.openings += 1
            return True
        return False

    def abandoned(self) -> None:
        """A call was cancelled before its outcome was known (no success, no failure)."""
        self._trial = False


@dataclass(slots=True)
class SourceGuard:
    """One source server's limits over time (either may be absent)."""

    rate: RateQuota | None = None
    breaker: CircuitBreaker | None = None


def guards_for(
    quota: Mapping[str, SourceQuota], clock: LimitClock = REAL_CLOCK
) -> dict[str, SourceGuard]:
    """A guard per source, from its quota (``max_rate`` 0: no rate; ``breaker_failures``
    0: no breaker)."""
    out = {}
    for name, q in quota.items():
        rate = RateQuota(q.max_rate, q.rate_window, clock) if q.max_rate else None
        breaker = (
            CircuitBreaker(name, q.breaker_failures, q.breaker_cooldown, clock)
            if q.breaker_failures
            else None
        )
        out[name] = SourceGuard(rate, breaker)
    return out
