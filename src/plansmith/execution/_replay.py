"""Replay: answer every call from a recorded run's events, offline."""

from __future__ import annotations

from collections.abc import Sequence

from plansmith.binding import BoundPlan
from plansmith.errors import ExecutionError, Location, ToolCallError
from plansmith.execution._codec import bound_from_dict
from plansmith.execution._emit import unpack
from plansmith.execution._events import Event, Replanned, StepFailed, StepRetrying, StepSucceeded
from plansmith.execution._invoker import ToolCall, ToolResult
from plansmith.execution._log import RunLog
from plansmith.execution._replan import ReplanFn, ReplanRequest

__all__ = ["ReplayInvoker", "replay_replan"]

Outcome = ToolResult | ToolCallError


class ReplayInvoker:
    """Returns, for each step and attempt, what the recorded run got (result or failure)."""

    def __init__(self, log: RunLog, events: Sequence[Event]) -> None:
        self.outcomes: dict[tuple[str, int], Outcome] = {}
        for e in events:
            if isinstance(e, StepSucceeded):
                self.outcomes[(e.step, e.attempt)] = _result(log, e.result)
            elif isinstance(e, StepRetrying | StepFailed):
                error = ToolCallError(e.error_class, e.message, retryable=e.retryable)
                recorded = e.result if isinstance(e, StepFailed) else None
                if recorded is not None and e.error_class == "extraction_error":
                    self.outcomes[(e.step, e.attempt)] = _result(log, recorded)
                elif e.error_class == "tool_error":
                    self.outcomes[(e.step, e.attempt)] = ToolResult(
                        text=e.message, is_error=True, retryable=e.retryable
                    )
                else:
                    self.outcomes[(e.step, e.attempt)] = error

    async def invoke(self, call: ToolCall) -> ToolResult:
        outcome = self.outcomes.get((call.step, call.attempt))
        if outcome is None:
            raise ExecutionError(
                f"the recorded run has no attempt {call.attempt} of step {call.step}",
                location=Location(step=call.step),
            )
        if isinstance(outcome, ToolCallError):
            raise ToolCallError(outcome.error_class, outcome.message, retryable=outcome.retryable)
        return outcome


def _result(log: RunLog, value: object) -> ToolResult:
    data = unpack(log, value)
    return ToolResult.from_dict(data if isinstance(data, dict) else {})


def replay_replan(events: Sequence[Event]) -> ReplanFn:
    """Gives back the recorded replans, in order."""
    plans: list[BoundPlan] = [bound_from_dict(e.bound) for e in events if isinstance(e, Replanned)]

    def replan(request: ReplanRequest) -> BoundPlan | None:
        return plans[request.replans] if request.replans < len(plans) else None

    return replan
