"""The retry rule of each failure class, and the backoff between attempts."""

from __future__ import annotations

from plansmith.binding import StepPolicy
from plansmith.errors import ToolCallError
from plansmith.execution._invoker import ErrorClass

__all__ = ["should_retry", "backoff_delay"]


def should_retry(
    error: ToolCallError, attempt: int, policy: StepPolicy, *, keyed: bool = True
) -> bool:
    """Whether attempt ``attempt`` (1-based), which failed with ``error``, is tried again.

    transport lost: always (the pool reconnects or restarts the server), unless the
    pool gave the server up (``final``), and even with no ``retries`` left once: the
    first attempt is re-sent after the restart when the call carried an idempotency key
    (``keyed``) and the policy's ``resend_on_transport_lost`` is on (the default);
    timeout: if the step is idempotent or reported progress; tool error: if the server
    marked it retryable; protocol and extraction errors: never.
    """
    if error.final:
        return False
    kind = error.error_class
    if attempt > policy.retries:
        # the one re-send of a lost transport that ``retries: 0`` still gets
        return (
            attempt == 1
            and kind == ErrorClass.TRANSPORT_LOST
            and keyed
            and policy.resend_on_transport_lost
        )
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
