"""The retry rule of each failure class, and the backoff between attempts."""

from __future__ import annotations

from plansmith.binding import StepPolicy
from plansmith.errors import ToolCallError
from plansmith.execution._invoker import ErrorClass

__all__ = ["should_retry", "backoff_delay"]


def should_retry(error: ToolCallError, attempt: int, policy: StepPolicy) -> bool:
    """Whether attempt ``attempt`` (1-based), which failed with ``error``, is tried again.

    transport lost: always (the pool reconnects or restarts the server), unless the
    pool gave the server up (``final``); timeout: if the step is idempotent or reported
    progress; tool error: if the server marked it retryable; protocol and extraction
    errors: never.
    """
    if attempt > policy.retries or error.final:
        return False
    kind = error.error_class
    if kind == ErrorClass.TRANSPORT_LOST:
        return True
    if kind == ErrorClass.TIMEOUT:
        return policy.idempotent or error.progressed
    if kind == ErrorClass.TOOL_ERROR:
        return error.retryable
    return False


def backoff_delay(attempt: int, *, base: float = 0.05, cap: float = 2.0) -> float:
    """Seconds to wait before attempt ``attempt + 1``: exponential, capped."""
    return float(min(cap, base * (2 ** max(0, attempt - 1))))
