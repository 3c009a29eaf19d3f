"""The sans-I/O core of the runner: the step state table, readiness, and folding a log.

Nothing here awaits or reads a clock. ``fold`` rebuilds a run's state from its
events, which is all that resume needs; ``RunView`` (``_view``) builds what the
faces show on the same ``apply_event``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import cast

from plansmith.binding import BoundPlan
from plansmith.errors import ExecutionError, Location
from plansmith.execution._codec import bound_from_dict
from plansmith.execution._events import (
    AnswerRecorded,
    AwaitingAnswer,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunFinished,
    RunRetried,
    StepEvent,
    StepFailed,
    StepRetrying,
    StepSkipped,
    StepStarted,
    StepSucceeded,
)
from plansmith.model import JSONValue, Tier

__all__ = [
    "StepState",
    "TRANSITIONS",
    "transition",
    "ready_steps",
    "RunState",
    "fold",
    "apply_event",
    "apply_step_started",
    "apply_step_succeeded",
]


class StepState(StrEnum):
    """A step's state: ``dropped``, given up by a replan before it started;
    ``cancelled``, in flight when the run was cancelled (``RunCancelled``); ``skipped``,
    ended without a call because a value it reads is absent (``StepSkipped``): done,
    like ``succeeded``, for the steps that wait on it, but with no outputs."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DROPPED = "dropped"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"


_PENDING = StepState.PENDING  # an enum member read through the class costs a descriptor call
_RUNNING = StepState.RUNNING
_SUCCEEDED = StepState.SUCCEEDED
_SKIPPED = StepState.SKIPPED

TRANSITIONS: dict[tuple[StepState, str], StepState] = {
    (StepState.PENDING, "StepStarted"): StepState.RUNNING,
    (StepState.RUNNING, "StepStarted"): StepState.RUNNING,  # resumed: started again, same key
    (StepState.RUNNING, "StepProgress"): StepState.RUNNING,
    (StepState.RUNNING, "StepRetrying"): StepState.RUNNING,
    (StepState.RUNNING, "StepSucceeded"): StepState.SUCCEEDED,
    (StepState.RUNNING, "StepFailed"): StepState.FAILED,
    (StepState.RUNNING, "StepSkipped"): StepState.SKIPPED,
    (StepState.PENDING, "Replanned"): StepState.DROPPED,
    (StepState.FAILED, "Replanned"): StepState.FAILED,
    (StepState.RUNNING, "RunCancelled"): StepState.CANCELLED,
}


def transition(state: StepState, event_type: str, step: str = "") -> StepState:
    """The state after ``event_type``; an event the table does not allow is an error."""
    try:
        return TRANSITIONS[(state, event_type)]
    except KeyError:
        raise ExecutionError(
            f"event {event_type} is not allowed for a step that is {state.value}",
            location=Location(step=step or None),
            hint="the run log is inconsistent; inspect it with `plansmith show`",
        ) from None


def ready_steps(after: Mapping[str, Iterable[str]], states: Mapping[str, StepState]) -> list[str]:
    """Pending steps whose dependencies all succeeded (or were skipped), in the order of
    ``after``."""
    ready = []
    for step, deps in after.items():
        if states.get(step, _PENDING) is _PENDING:
            for d in deps:
                done = states.get(d)
                if done is not _SUCCEEDED and done is not _SKIPPED:
                    break
            else:
                ready.append(step)
    return ready


@dataclass(slots=True)
class RunState:
    """What a run's events say: the plan in force, step states, outputs, attempts.

    ``plan_hash`` is the hash of the plan the run was made with (what an approval
    names) and ``plan_tiers`` the tiers of its steps; a replan within those tiers
    does not need a new approval (the runner refuses one that needs another
    tier), and each ``Replanned`` event records the new plan's hash.
    """

    run_id: str
    bound: BoundPlan | None = None
    plan: dict[str, JSONValue] = field(default_factory=dict)
    states: dict[str, StepState] = field(default_factory=dict)
    outputs: dict[str, JSONValue] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    plan_hash: str | None = None
    plan_tiers: frozenset[Tier] = frozenset()
    approved: str | None = None
    replans: int = 0
    #: ``replans`` when the run was last retried (``RunRetried``): its budget counts from there
    replans_at_retry: int = 0
    failed_pending: list[str] = field(default_factory=list)
    failed_all: list[str] = field(default_factory=list)
    #: why each step failed last: ``error_class: message`` of its StepFailed
    failures: dict[str, str] = field(default_factory=dict)
    finished: str | None = None
    finished_reason: str | None = None  # why it failed or was cancelled
    last_seq: int = 0
    #: the answers recorded for ask steps (step id -> answer; a declined question with no
    #: default has none)
    answers: dict[str, JSONValue] = field(default_factory=dict)
    #: the ask steps waiting for an answer (step id -> its ``AwaitingAnswer``)
    awaiting_answer: dict[str, AwaitingAnswer] = field(default_factory=dict)


def fold(run_id: str, events: Iterable[Event]) -> RunState:
    """Replay ``events`` through the state table (pure)."""
    run = RunState(run_id)
    for event in events:
        apply_event(run, event)
    return run


#: how each step event moves a step: 0 started, retrying or skipped (no outputs, no
#: failure), 1 succeeded, 2 failed
_STEP_KINDS: dict[type[Event], int] = {
    StepStarted: 0,
    StepRetrying: 0,
    StepSkipped: 0,
    StepSucceeded: 1,
    StepFailed: 2,
}


def _subclass_kind(event: Event) -> int | None:
    for cls, k in _STEP_KINDS.items():  # an instance of a subclass of a step event
        if isinstance(event, cls):
            return k
    return None


def apply_event(run: RunState, event: Event) -> None:
    """Move ``run`` on by one event: the one place where step states change."""
    run.last_seq = max(run.last_seq, event.seq)
    kind = _STEP_KINDS.get(type(event))
    if kind is None:
        kind = _subclass_kind(event)
    if kind is not None:
        step_event = cast(StepEvent, event)
        step = step_event.step
        current = run.states.get(step, _PENDING)
        moved = TRANSITIONS.get((current, event.type))
        run.states[step] = moved if moved is not None else transition(current, event.type, step)
        if step_event.attempt > run.attempts.get(step, 0):
            run.attempts[step] = step_event.attempt
        if kind == 1:
            run.outputs[step] = cast(StepSucceeded, event).outputs
            run.order.append(step)
        elif kind == 2:
            run.failed_pending.append(step)
            failed = cast(StepFailed, event)
            run.failures[step] = f"{failed.error_class}: {failed.message}"
    elif isinstance(event, PlanReady):
        run.bound = bound_from_dict(event.bound)
        run.plan = event.plan
        run.plan_hash = event.plan_hash
        run.plan_tiers = frozenset(s.tier for s in run.bound.steps)
        run.states = {s.id: StepState.PENDING for s in run.bound.steps}
    elif isinstance(event, PlanApproved):
        run.approved = event.plan_hash
    elif isinstance(event, Replanned):
        run.replans += 1
        run.failed_all.extend(run.failed_pending)
        run.failed_pending.clear()
        for step_id, state in list(run.states.items()):
            if state is StepState.PENDING:
                run.states[step_id] = transition(state, event.type, step_id)
        new = bound_from_dict(event.bound)
        kept = run.bound.steps if run.bound else ()
        run.bound = BoundPlan(new.plan_hash, (*kept, *new.steps))
        for s in new.steps:
            run.states[s.id] = StepState.PENDING
    elif isinstance(event, RunCancelled):
        for step_id, state in list(run.states.items()):
            if state is _RUNNING:  # in flight: cancelled with the run
                run.states[step_id] = transition(state, event.type, step_id)
    elif isinstance(event, RunFinished):
        run.finished = event.state
        run.finished_reason = event.reason
    elif isinstance(event, RunRetried):
        _retried(run)
    elif isinstance(event, AwaitingAnswer):
        run.awaiting_answer[event.step] = event
    elif isinstance(event, AnswerRecorded):
        run.awaiting_answer.pop(event.step, None)
        if event.answer is not None:
            run.answers[event.step] = event.answer


def _retried(run: RunState) -> None:
    """A finished run goes on: the steps that failed since the last replan, and those in
    flight when it was cancelled, are pending again, with a new replan budget."""
    for step_id in run.failed_pending:
        run.states[step_id] = StepState.PENDING
    for step_id, state in run.states.items():
        if state.value == "cancelled":  # a step in flight when the run was cancelled
            run.states[step_id] = StepState.PENDING
    run.failed_pending.clear()
    run.replans_at_retry = run.replans  # the replan budget starts again (step ids go on)
    run.finished = None
    run.finished_reason = None


def apply_step_started(run: RunState, event: StepStarted) -> None:
    """``apply_event(run, event)`` for a ``StepStarted`` (the runner's fast path: the
    same changes, without finding the event's kind; tests check they agree)."""
    step = event.step
    if event.seq > run.last_seq:  # noqa: PLR1730 - max() is a call, on the hot path
        run.last_seq = event.seq
    current = run.states.get(step, _PENDING)
    if current is not _PENDING and current is not _RUNNING:
        transition(current, "StepStarted", step)  # not allowed: raises
    run.states[step] = _RUNNING
    if event.attempt > run.attempts.get(step, 0):
        run.attempts[step] = event.attempt


def apply_step_succeeded(run: RunState, event: StepSucceeded) -> None:
    """``apply_event(run, event)`` for a ``StepSucceeded`` (as ``apply_step_started``)."""
    step = event.step
    if event.seq > run.last_seq:  # noqa: PLR1730 - max() is a call, on the hot path
        run.last_seq = event.seq
    current = run.states.get(step, _PENDING)
    if current is not _RUNNING:
        transition(current, "StepSucceeded", step)  # not allowed: raises
    run.states[step] = _SUCCEEDED
    if event.attempt > run.attempts.get(step, 0):
        run.attempts[step] = event.attempt
    run.outputs[step] = event.outputs
    run.order.append(step)
