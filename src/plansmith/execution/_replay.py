"""Replay: answer every call from a recorded run's events, offline.

A recorded run is one or more *parts*, one per engine that drove it: the first from
``RunStarted``, and one more after each resume or take-over (its own ``RunStarted``).
A part ends finished (``RunFinished``), cancelled (``RunCancelled``), or stopped: its
engine was killed, and the next part (or nothing) follows. A replay runs each part
from the log as its engine found it, answers each call with the recorded outcome, and
ends a part that did not finish where the record ends it: once it has made every step
event the part recorded, it stops as a killed engine does, or cancels with the recorded
reason. A call the record has no outcome for was in flight when the part ended (or its
start was lost with the engine): it waits.

A replay does not read the environment of the machine it runs on: an ``${env.NAME}`` of
the recorded plans is rendered as its own text (``replay_env``). The value the run had
is not in the log (it may be a secret), and a replay calls no tool: nothing it records
holds a rendered argument (a step's event has the plan's arguments and the key
``RUN_ID/STEP_ID``), and a step that failed before its call (NAME unset where the run
went on) gets its recorded failure as the answer to the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

from plansmith.binding import BoundPlan, EnvRef, find_refs
from plansmith.errors import ExecutionError, Location, ToolCallError
from plansmith.execution._asking import Asker, AskReply, AskRequest
from plansmith.execution._codec import bound_from_dict
from plansmith.execution._emit import unpack
from plansmith.execution._events import (
    AnswerRecorded,
    Event,
    PlanReady,
    Replanned,
    RunCancelled,
    RunFinished,
    RunStarted,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSkipped,
    StepStarted,
    StepSucceeded,
)
from plansmith.execution._invoker import ToolCall, ToolResult
from plansmith.execution._log import RunLog
from plansmith.execution._replan import ReplanFn, ReplanRequest

__all__ = [
    "PartEnd",
    "RecordedPart",
    "ReplayInvoker",
    "recorded_parts",
    "replay_env",
    "replay_replan",
    "recorded_asker",
    "step_histories",
]

Outcome = ToolResult | ToolCallError
#: what the engine records, not a runner: the plan and its approvals
_ENGINE_EVENTS = frozenset({"RunCreated", "PlanReady", "AwaitingApproval", "PlanApproved"})


@dataclass(frozen=True, slots=True)
class RecordedPart:
    """One engine's part of a recorded run (see the module docstring)."""

    before: tuple[Event, ...]  # the engine's events recorded before it (plan, approvals)
    prefix: tuple[Event, ...]  # every event recorded before its RunStarted
    events: tuple[Event, ...]  # its RunStarted and the runner's events; () if none ran
    ending: str  # finished | cancelled | stopped
    reason: str = ""  # the cancellation's

    @property
    def peak(self) -> int:
        """The most steps it had in flight at once (at least 1): the limit its replay
        runs under, so that it starts no step the part did not start."""
        running: set[str] = set()
        peak = 1
        for event in self.events:
            if isinstance(event, StepStarted):
                running.add(event.step)
                peak = max(peak, len(running))
            elif isinstance(event, StepSucceeded | StepFailed | StepSkipped):
                running.discard(event.step)
        return peak


def recorded_parts(events: Sequence[Event]) -> list[RecordedPart]:
    """``events`` (a run's log) cut into its parts. What no runner recorded (the plan,
    approvals, an end before any step ran) goes into the next part's ``before``; when no
    part follows (the run never started, or a resume waits for an approval), into a last
    part with no events."""
    parts: list[RecordedPart] = []
    before: list[Event] = []
    opened: tuple[tuple[Event, ...], int] | None = None  # the part being read: before, start
    outside = _answers_from_outside(events)
    for at, event in enumerate(events):
        if isinstance(event, RunStarted):
            if opened is not None:
                parts.append(_part(opened[0], events, opened[1], at, outside))
            opened, before = (tuple(before), at), []
        elif event.type in _ENGINE_EVENTS or opened is None or at in outside:
            before.append(event)
    if opened is not None:
        parts.append(_part(opened[0], events, opened[1], len(events), outside))
    if before:
        parts.append(RecordedPart(tuple(before), tuple(events), (), "stopped"))
    return parts


def _answers_from_outside(events: Sequence[Event]) -> frozenset[int]:
    """The places of the ``AnswerRecorded`` events no runner recorded: given while the
    run waited (``plansmith answer``, a face's form), so no start of their step follows
    in the same part; what the engine records, as an approval is."""
    outside: set[int] = set()
    waiting: dict[str, int] = {}  # step -> the place of its answer not yet followed
    for at, event in enumerate(events):
        if isinstance(event, AnswerRecorded):
            waiting[event.step] = at
        elif isinstance(event, StepStarted):
            waiting.pop(event.step, None)
        elif isinstance(event, RunStarted):
            outside.update(waiting.values())
            waiting.clear()
    outside.update(waiting.values())
    return frozenset(outside)


def _part(
    before: tuple[Event, ...],
    events: Sequence[Event],
    start: int,
    end: int,
    outside: frozenset[int] = frozenset(),
) -> RecordedPart:
    prefix = tuple(events[:start])
    ran = tuple(
        e
        for at, e in enumerate(events[start:end], start)
        if e.type not in _ENGINE_EVENTS and at not in outside
    )
    for event in ran:
        if isinstance(event, RunCancelled):
            return RecordedPart(before, prefix, ran, "cancelled", event.reason)
    finished = any(isinstance(e, RunFinished) for e in ran)
    return RecordedPart(before, prefix, ran, "finished" if finished else "stopped")


def recorded_asker(events: Sequence[Event]) -> Asker:
    """An asker that answers each ask step as the part ``events`` recorded it: the
    ``AnswerRecorded`` its runner got from a face (one followed by the step's start).
    A step the part left waiting (answered later, from outside, or never) gets no
    answer: the replay waits there as the run did. Nobody is asked."""
    answers: dict[str, AskReply] = {}
    given: dict[str, AnswerRecorded] = {}
    for event in events:
        if isinstance(event, AnswerRecorded):
            given[event.step] = event
        elif isinstance(event, StepStarted) and event.step in given:
            answer = given.pop(event.step)
            value = answer.answer
            reply_value = value if isinstance(value, str | bool | int | float) else None
            answers[event.step] = AskReply(reply_value, answer.by, answer.declined)

    async def ask(request: AskRequest) -> AskReply | None:
        return answers.get(request.step)

    return ask


def _step_event_key(event: Event) -> tuple[str, str, int] | None:
    if isinstance(event, StepStarted | StepSucceeded | StepFailed | StepRetrying | StepSkipped):
        return (event.type, event.step, event.attempt)
    if isinstance(event, Replanned):
        return (event.type, event.plan_hash, 0)
    return None


def step_histories(events: Sequence[Event]) -> dict[str, list[tuple[str, int, str]]]:
    """Each step's events in order, without times, seqs and values (type, attempt, and
    a run event's state; the run's own events under ""): what a replay reproduces,
    whereas steps that ran in parallel may interleave otherwise. Progress reports are
    left out (a replay has none)."""
    steps: dict[str, list[tuple[str, int, str]]] = {}
    for event in events:
        if isinstance(event, StepProgress):
            continue
        row = (event.type, getattr(event, "attempt", 0), str(getattr(event, "state", "")))
        steps.setdefault(getattr(event, "step", ""), []).append(row)
    return steps


class PartEnd:
    """A view for the replay of a part that did not finish: calls ``stop`` once the
    replay has made every step event (start, end, retry) and replan the part recorded."""

    def __init__(self, part: RecordedPart, stop: Callable[[], None]) -> None:
        self.missing: dict[tuple[str, str, int], int] = {}
        for event in part.events:
            key = _step_event_key(event)
            if key is not None:
                self.missing[key] = self.missing.get(key, 0) + 1
        self.left = sum(self.missing.values())
        self.stop = stop
        self.stopped = False

    def __call__(self, event: Event) -> None:
        key = _step_event_key(event)
        if key is not None and self.missing.get(key, 0) > 0:
            self.missing[key] -= 1
            self.left -= 1
        if not self.left and not self.stopped:
            self.stopped = True
            self.stop()


class ReplayInvoker:
    """Returns, for each step and attempt, what the recorded run got (result or failure).

    An attempt it has no outcome for raises ``ExecutionError``; with ``unrecorded``, it
    calls ``unrecorded(call)`` instead and waits until it is cancelled (the attempt was
    in flight when the recorded part ended)."""

    def __init__(
        self,
        log: RunLog,
        events: Sequence[Event],
        *,
        unrecorded: Callable[[ToolCall], None] | None = None,
    ) -> None:
        self.unrecorded = unrecorded
        self.outcomes: dict[tuple[str, int], Outcome] = {}
        for e in events:
            if isinstance(e, StepSucceeded):
                self.outcomes[(e.step, e.attempt)] = _result(log, e.result)
            elif isinstance(e, StepRetrying | StepFailed):
                # what decided the retry is not all in the event (a call's progress, a
                # server given up on): the record's decision is the replay's
                retried = isinstance(e, StepRetrying)
                error = ToolCallError(
                    e.error_class,
                    e.message,
                    retryable=e.retryable,
                    progressed=retried,
                    final=not retried,
                )
                recorded = e.result if isinstance(e, StepFailed) else None
                if recorded is not None and e.error_class in ("extraction_error", "tool_error"):
                    # the tool's whole result: the event's message may be cut short
                    self.outcomes[(e.step, e.attempt)] = _result(log, recorded)
                elif e.error_class == "tool_error":
                    self.outcomes[(e.step, e.attempt)] = ToolResult(
                        text=e.message, is_error=True, retryable=e.retryable
                    )
                else:
                    self.outcomes[(e.step, e.attempt)] = error

    async def invoke(self, call: ToolCall) -> ToolResult:
        outcome = self.outcomes.get((call.step, call.attempt))
        if outcome is None and self.unrecorded is not None:
            self.unrecorded(call)
            await anyio.sleep_forever()
        if outcome is None:
            raise ExecutionError(
                f"the recorded run has no attempt {call.attempt} of step {call.step}",
                location=Location(step=call.step),
            )
        if isinstance(outcome, ToolCallError):
            raise ToolCallError(
                outcome.error_class,
                outcome.message,
                retryable=outcome.retryable,
                progressed=outcome.progressed,
                final=outcome.final,
            )
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


def replay_env(events: Sequence[Event]) -> dict[str, str]:
    """The environment a replay of ``events`` renders arguments with: each ``${env.NAME}``
    of the recorded plans (the first and each replan) as its own text, whatever the
    environment holds here (see the module docstring)."""
    names = {
        ref.name
        for event in events
        if isinstance(event, PlanReady | Replanned)
        for step in bound_from_dict(event.bound).steps
        for _, ref in find_refs(step.arguments)
        if isinstance(ref, EnvRef)
    }
    return {name: f"${{env.{name}}}" for name in sorted(names)}
