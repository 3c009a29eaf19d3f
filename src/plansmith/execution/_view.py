"""The run view: one fold of a run's events into what every face shows.

``RunView.fold(events)`` builds it from a log; ``view.apply(event)`` moves it on by one
event, so a live face (the web's event stream, the CLI's live view) keeps one view up to
date, and learns which steps the event changed. Step states come from ``apply_event`` of
``_states``, the one place where they change; the view keeps beside them what the
faces show: times, attempts, retries, errors, outputs, progress, replans and counts.

Pure: nothing here reads a clock or does I/O. The JSON of ``to_dict`` is documented in
docs/events.md, "The run view".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from plansmith.binding import BoundStep
from plansmith.errors import ExecutionError
from plansmith.execution._events import (
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunStarted,
    StepEvent,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSkipped,
    StepStarted,
    StepSucceeded,
)
from plansmith.execution._states import RunState, StepState, apply_event
from plansmith.model import JSONValue, Step, StepArg

__all__ = ["RUN_STATES", "RunView", "StepView", "RetryView", "ReplanView"]

#: what ``RunView.state`` may be, in the order a run goes through them
RUN_STATES = (
    "created",
    "planned",
    "awaiting approval",
    "approved",
    "running",
    "awaiting answer",
    "succeeded",
    "failed",
    "cancelled",
)

_PENDING = StepState.PENDING
_RUNNING = StepState.RUNNING


@dataclass(frozen=True, slots=True)
class RetryView:
    """A failed attempt that is tried again (its ``StepRetrying``)."""

    seq: int
    time: str
    attempt: int
    error_class: str
    message: str
    delay_s: float

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "seq": self.seq,
            "time": self.time,
            "attempt": self.attempt,
            "error_class": self.error_class,
            "message": self.message,
            "delay_s": self.delay_s,
        }


@dataclass(frozen=True, slots=True)
class ReplanView:
    """A replan (its ``Replanned``): the steps given up, why, and the steps it added."""

    seq: int
    time: str
    failed: tuple[str, ...]
    reason: str
    plan_hash: str
    new_steps: tuple[str, ...]

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "seq": self.seq,
            "time": self.time,
            "failed": list(self.failed),
            "reason": self.reason,
            "plan_hash": self.plan_hash,
            "new_steps": list(self.new_steps),
        }


@dataclass(slots=True)
class StepView:
    """One step of a run: what the plan says of it and what its events did.

    ``attempts`` is the highest attempt its events name; ``retrying`` is true while its
    latest attempt is one that a ``StepRetrying`` announced (a failed attempt is behind
    it) and has not ended (for a step cancelled during such an attempt, it stays true).
    ``started`` is the time of its first start, ``attempt_started`` that of the attempt
    in flight (or the last one): its ``StepStarted``, or the ``StepRetrying`` that
    announced it. ``ended`` is the time of the event that ended it (``StepSucceeded``,
    ``StepFailed``, or the run's ``RunCancelled``), ``ended_seq`` that event's seq.
    ``error_class`` and ``message`` are its ``StepFailed``'s (a skipped step's ``message``
    is its ``StepSkipped``'s reason, with no ``error_class``); ``outputs`` are its
    ``StepSucceeded``'s (``{"$blob": ...}`` where the blob store keeps them).
    """

    id: str
    action: str
    args: tuple[StepArg, ...] = ()
    tier: str = ""
    server: str = ""
    tool: str = ""
    arguments: JSONValue = None
    after: tuple[str, ...] = ()
    state: StepState = StepState.PENDING
    attempts: int = 0
    retrying: bool = False
    retries: list[RetryView] = field(default_factory=list)
    started: str | None = None
    attempt_started: str | None = None
    ended: str | None = None
    ended_seq: int | None = None
    duration_ms: float | None = None
    error_class: str | None = None
    message: str | None = None
    outputs: JSONValue = None
    progress: dict[str, JSONValue] | None = None

    @property
    def call(self) -> str:
        """``action(args)`` as people read it."""
        return str(Step(self.id, self.action, self.args))

    @property
    def error(self) -> str | None:
        """``error_class: message`` of its failure, or None."""
        if self.error_class is None:
            return None
        return f"{self.error_class}: {self.message}"

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "id": self.id,
            "action": self.action,
            "args": list(self.args),
            "tier": self.tier,
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "after": list(self.after),
            "state": self.state.value,
            "retrying": self.retrying,
            "attempts": self.attempts,
            "retries": [r.to_dict() for r in self.retries],
            "started": self.started,
            "attempt_started": self.attempt_started,
            "ended": self.ended,
            "ended_seq": self.ended_seq,
            "duration_ms": self.duration_ms,
            "error_class": self.error_class,
            "message": self.message,
            "outputs": self.outputs,
            "progress": self.progress,
        }


def _bound_step(bound: BoundStep) -> StepView:
    s = bound.step
    return StepView(
        s.id,
        s.action,
        s.args,
        bound.tier.value,
        bound.server,
        bound.tool,
        bound.arguments,
        bound.after,
    )


def reason_problems(reason: str | None) -> list[str]:
    """The problems listed below the first line of a run's reason, each indented by two
    spaces and its own further lines by four (a failed replan's binding problems: see
    ``replan_failure``), without their indent."""
    if not reason:
        return []
    problems: list[str] = []
    for line in reason.split("\n")[1:]:
        if line.startswith("    ") and problems:
            problems[-1] += "\n" + line[2:]
        elif line.startswith("  "):
            problems.append(line[2:])
    return problems


class RunView:
    """A run as its events tell it; see the module docstring.

    ``run`` is the ``RunState`` that ``apply_event`` moves (the plan in force, step
    states, outputs); the rest is what the faces show. A transition the state table does
    not allow (a damaged or edited log) does not stop the view: the step keeps its
    state, the event's other facts are kept, and ``log_errors`` says what was wrong.
    """

    __slots__ = (
        "_counts",
        "_running",
        "approved_by",
        "approver",
        "awaiting",
        "awaiting_tiers",
        "cancelled",
        "created",
        "ended",
        "inputs",
        "log_errors",
        "parts",
        "plan",
        "replans",
        "run",
        "started",
        "steps",
    )

    def __init__(self, run_id: str = "") -> None:
        self.run = RunState(run_id)
        self.created: str | None = None
        self.inputs: dict[str, JSONValue] = {}
        self.plan: dict[str, JSONValue] = {}
        self.awaiting_tiers: tuple[str, ...] = ()
        self.awaiting = False  # an ``AwaitingApproval`` (a held run's names no tiers)
        self.approved_by: str | None = None
        self.approver: str | None = None  # the person a ``PlanApproved`` names
        self.started: str | None = None
        self.ended: str | None = None
        self.parts = 0  # RunStarted events: 1, and one more per resume
        self.cancelled: str | None = None  # the reason of its RunCancelled
        self.steps: dict[str, StepView] = {}
        self.replans: list[ReplanView] = []
        self.log_errors: list[str] = []
        self._counts = dict.fromkeys(StepState, 0)
        self._running: dict[str, None] = {}  # running steps, in the order they started

    @classmethod
    def fold(cls, events: Iterable[Event], run_id: str = "") -> RunView:
        """The view after ``events`` (in seq order)."""
        view = cls(run_id)
        for event in events:
            view.apply(event)
        return view

    # -- what the faces read --------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def plan_hash(self) -> str | None:
        """The hash of the plan the run was made with (what an approval names)."""
        return self.run.plan_hash

    @property
    def approved(self) -> str | None:
        """The hash that was approved."""
        return self.run.approved

    @property
    def finished(self) -> str | None:
        """How the run ended (``succeeded``, ``failed``, ``cancelled``), or None."""
        return self.run.finished

    @property
    def reason(self) -> str | None:
        """Why it failed or was cancelled (its ``RunFinished``'s reason)."""
        return self.run.finished_reason

    @property
    def last_seq(self) -> int:
        return self.run.last_seq

    @property
    def state(self) -> str:
        """Where the run is (one of ``RUN_STATES``). ``running``: started and not
        finished; whether an engine still drives it the events cannot tell."""
        if self.run.finished is not None:
            return self.run.finished
        if self.run.awaiting_answer:
            return "awaiting answer"
        if self.started is not None:
            return "running"
        if self.run.approved is not None:
            return "approved"
        if self.awaiting:
            return "awaiting approval"
        return "planned" if self.run.plan_hash is not None else "created"

    def awaiting_answer(self) -> list[dict[str, JSONValue]]:
        """The ask steps that wait for an answer: ``step``, ``action``, ``question``
        (rendered), ``answer`` (its schema's JSON), ``assumed`` and ``since``."""
        return [
            {
                "step": a.step,
                "action": a.action,
                "question": a.question,
                "answer": a.answer,
                "assumed": a.assumed,
                "since": a.time,
            }
            for a in self.run.awaiting_answer.values()
        ]

    @property
    def in_flight(self) -> tuple[str, ...]:
        """The running steps, in the order they started."""
        return tuple(self._running)

    def counts(self) -> dict[str, int]:
        """How many steps are in each state, and ``total``."""
        counts = {state.value: n for state, n in self._counts.items()}
        counts["total"] = len(self.steps)
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The view's JSON (docs/events.md, "The run view")."""
        return {
            "run_id": self.run_id,
            "state": self.state,
            "created": self.created,
            "inputs": self.inputs,
            "plan_hash": self.plan_hash,
            "awaiting_tiers": list(self.awaiting_tiers),
            "awaiting": self.awaiting,
            "awaiting_answer": self.awaiting_answer(),
            "approved": self.approved,
            "approved_by": self.approved_by,
            "approver": self.approver,
            "started": self.started,
            "ended": self.ended,
            "parts": self.parts,
            "reason": self.reason,
            "replan_problems": reason_problems(self.reason),
            "cancelled": self.cancelled,
            "steps": [s.to_dict() for s in self.steps.values()],
            "counts": self.counts(),
            "replans": [r.to_dict() for r in self.replans],
            "last_seq": self.last_seq,
            "log_errors": list(self.log_errors),
        }

    # -- moving it on ---------------------------------------------------------------------

    def apply(self, event: Event) -> tuple[str, ...]:
        """Move the view on by ``event``; the ids of the steps it changed."""
        run = self.run
        if not run.run_id:
            run.run_id = event.run_id
        try:
            apply_event(run, event)
        except ExecutionError as error:  # the step keeps its state; the rest is kept
            self.log_errors.append(str(error).splitlines()[0])  # located, without the hint
        if isinstance(event, StepEvent):
            return self._step_event(event)
        if isinstance(event, PlanReady):
            self.plan = dict(event.plan)
            self.steps = {}
            self._counts = dict.fromkeys(StepState, 0)
            self._running = {}
            for bound in run.bound.steps if run.bound else ():
                self._add(_bound_step(bound))
            return tuple(self.steps)
        if isinstance(event, Replanned):
            return self._replanned(event)
        if isinstance(event, RunCancelled):
            self.cancelled = event.reason
        elif isinstance(event, RunFinished):
            self.ended = event.time
            # the steps still running have no end recorded: a face may say so now
            return (*self._running, *self._sync_all(event))
        elif isinstance(event, RunStarted):
            self.started = self.started or event.time
            self.parts += 1
        elif isinstance(event, PlanApproved):
            self.approved_by = self.approved_by or event.by
            self.approver = event.approver or self.approver
        elif isinstance(event, AwaitingApproval):
            self.awaiting_tiers = event.tiers
            self.awaiting = True
        elif isinstance(event, RunCreated):
            self.created = self.created or event.time
            self.inputs = dict(event.inputs)
        elif self.run.finished is None and self.ended is not None:  # a finished run goes on
            self.ended = self.cancelled = None
        return self._sync_all(event)

    def _add(self, step: StepView) -> None:
        old = self.steps.get(step.id)
        if old is not None:
            self._counts[old.state] -= 1
            self._running.pop(step.id, None)
        self.steps[step.id] = step
        self._counts[step.state] += 1
        self._sync(step)

    def _sync(self, step: StepView) -> bool:
        """Take the step's state from the run state; whether it changed."""
        now = self.run.states.get(step.id, _PENDING)
        was = step.state
        if now is was:
            return False
        self._counts[was] -= 1
        self._counts[now] += 1
        step.state = now
        if was is _RUNNING:
            del self._running[step.id]
        elif now is _RUNNING:
            self._running[step.id] = None
        if now is _PENDING:  # to be run again (a retried run's): no end of its own yet
            step.ended = step.ended_seq = step.duration_ms = None
            step.error_class = step.message = None
            step.retrying = False
        return True

    def _sync_all(self, event: Event) -> tuple[str, ...]:
        """Take every step's state from the run state (an event other than a step's may
        move many: ``RunCancelled`` those in flight); the ids of those that changed."""
        changed = []
        for step in self.steps.values():
            if self._sync(step):
                changed.append(step.id)
                if step.state is StepState.CANCELLED:
                    step.ended, step.ended_seq = event.time, event.seq
        return tuple(changed)

    def _step_event(self, event: StepEvent) -> tuple[str, ...]:
        step = self.steps.get(event.step)
        if step is None:  # a step the plan does not list: shown anyway
            step = StepView(event.step, event.action, event.args, "", event.server, event.tool)
            self._add(step)
        if isinstance(event, StepProgress):
            step.progress = {
                "progress": event.progress,
                "total": event.total,
                "message": event.message,
            }
            return (step.id,)
        step.attempts = max(step.attempts, event.attempt)
        if isinstance(event, StepStarted):
            step.started = step.started or event.time
            step.attempt_started = event.time
            step.retrying = False
        elif isinstance(event, StepRetrying):
            step.retries.append(
                RetryView(
                    event.seq,
                    event.time,
                    event.attempt,
                    event.error_class,
                    event.message,
                    event.delay_s,
                )
            )
            step.attempt_started = event.time
        elif isinstance(event, StepSucceeded | StepFailed):
            step.ended, step.ended_seq = event.time, event.seq
            step.duration_ms = event.duration_ms
            step.retrying = False
            if isinstance(event, StepSucceeded):
                step.outputs = event.outputs
            else:
                step.error_class, step.message = event.error_class, event.message
        elif isinstance(event, StepSkipped):
            step.ended, step.ended_seq = event.time, event.seq
            step.retrying = False
            step.message = event.reason
        self._sync(step)
        if isinstance(event, StepRetrying):
            step.retrying = step.state is _RUNNING
        return (step.id,)

    def _replanned(self, event: Replanned) -> tuple[str, ...]:
        changed = [s.id for s in self.steps.values() if self._sync(s)]
        count = len(event.bound.get("steps") or [])  # type: ignore[arg-type]
        bound = self.run.bound.steps if self.run.bound else ()
        new = [_bound_step(b) for b in bound[len(bound) - count :]] if count else []
        for step in new:
            self._add(step)
        added = tuple(s.id for s in new)
        self.replans.append(
            ReplanView(event.seq, event.time, event.failed, event.reason, event.plan_hash, added)
        )
        return (*changed, *added)
