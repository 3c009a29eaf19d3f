"""What the pages and the API show of a run, folded from its events (pure).

A step's display state is one of ``pending``, ``running``, ``retried`` (running
again after a failed attempt), ``done``, ``failed``, ``replanned`` (given up
when a replan replaced the rest of the plan) and ``cancelled`` (in flight when the run
ended: it was cancelled with the run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from plansmith.execution import (
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunFinished,
    RunStarted,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
)

__all__ = ["RunView", "StepView", "fold_view", "STEP_STATES"]

STEP_STATES = ("pending", "running", "retried", "done", "failed", "replanned", "cancelled")


@dataclass(slots=True)
class StepView:
    """One step of a run as the pages draw it."""

    id: str
    action: str
    args: list[Any]
    tier: str
    server: str
    tool: str
    arguments: Any
    after: list[str]
    state: str = "pending"
    attempts: int = 0
    retries: int = 0
    started: str | None = None
    ended: str | None = None
    duration_ms: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class RunView:
    """A run folded from its events; ``live`` is set by the caller (a task is running it)."""

    run_id: str
    created: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)
    plan_hash: str | None = None
    approved: str | None = None
    approved_by: str | None = None
    awaiting: tuple[str, ...] = ()
    steps: dict[str, StepView] = field(default_factory=dict)
    replans: list[dict[str, Any]] = field(default_factory=list)
    started: str | None = None
    ended: str | None = None
    finished: str | None = None
    reason: str | None = None
    cancelled: str | None = None
    last_seq: int = 0
    live: bool = False

    @property
    def status(self) -> str:
        if self.finished is not None:
            return self.finished
        if self.live:
            return "running"
        if self.approved is None:
            return "awaiting approval" if self.awaiting else "created"
        return "interrupted"

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STEP_STATES, 0)
        for step in self.steps.values():
            counts[step.state] += 1
        counts["total"] = len(self.steps)
        return counts

    def to_dict(self) -> dict[str, Any]:
        plan = {k: v for k, v in self.plan.items() if k != "steps"}
        return {
            "run_id": self.run_id,
            "created": self.created,
            "inputs": self.inputs,
            "status": self.status,
            "reason": self.reason,
            "live": self.live,
            "plan_hash": self.plan_hash,
            "approved": self.approved,
            "approved_by": self.approved_by,
            "awaiting_tiers": list(self.awaiting),
            "plan": plan,
            "steps": [s.to_dict() for s in self.steps.values()],
            "counts": self.counts(),
            "replans": self.replans,
            "started": self.started,
            "ended": self.ended,
            "last_seq": self.last_seq,
        }


def _add_steps(view: RunView, bound: dict[str, Any]) -> list[str]:
    added: list[str] = []
    for raw in cast(list[dict[str, Any]], bound.get("steps") or []):
        sid = str(raw["id"])
        view.steps[sid] = StepView(
            id=sid,
            action=str(raw.get("action", "")),
            args=list(raw.get("args") or []),
            tier=str(raw.get("tier", "")),
            server=str(raw.get("server", "")),
            tool=str(raw.get("tool", "")),
            arguments=raw.get("arguments"),
            after=[str(a) for a in raw.get("after") or []],
        )
        added.append(sid)
    return added


def _step(view: RunView, event: StepStarted | StepRetrying | StepSucceeded | StepFailed) -> None:
    row = view.steps.get(event.step)
    if row is None:  # a step the plan did not list: show it anyway
        row = view.steps[event.step] = StepView(
            event.step, event.action, list(event.args), "", event.server, event.tool, None, []
        )
    row.attempts = max(row.attempts, event.attempt)
    if isinstance(event, StepStarted):
        row.state = "retried" if row.retries else "running"
        row.started = row.started or event.time
    elif isinstance(event, StepRetrying):
        row.state = "retried"
        row.retries += 1
        row.error = f"{event.error_class}: {event.message}"
    else:
        row.state = "done" if isinstance(event, StepSucceeded) else "failed"
        row.ended = event.time
        row.duration_ms = event.duration_ms
        if isinstance(event, StepFailed):
            row.error = f"{event.error_class}: {event.message}"


def _end_in_flight(view: RunView, end: RunFinished) -> None:
    """The steps still in flight when the run ended were cancelled with it."""
    why = f"cancelled with the run ({end.reason or end.state})"
    for row in view.steps.values():
        if row.state in ("running", "retried"):
            row.state, row.ended, row.error = "cancelled", end.time, why


def fold_view(run_id: str, events: Iterable[Event], *, live: bool = False) -> RunView:
    """The view of a run after ``events`` (in seq order)."""
    view = RunView(run_id, live=live)
    for event in events:
        view.last_seq = max(view.last_seq, event.seq)
        if isinstance(event, PlanReady):
            view.plan = dict(event.plan)
            view.plan_hash = event.plan_hash
            view.steps = {}
            _add_steps(view, dict(event.bound))
        elif isinstance(event, AwaitingApproval):
            view.awaiting = event.tiers
        elif isinstance(event, PlanApproved):
            view.approved, view.approved_by = event.plan_hash, event.by
        elif isinstance(event, RunStarted):
            view.started = view.started or event.time
        elif isinstance(event, StepStarted | StepRetrying | StepSucceeded | StepFailed):
            _step(view, event)
        elif isinstance(event, Replanned):
            for row in view.steps.values():
                if row.state == "pending":
                    row.state = "replanned"
            added = _add_steps(view, dict(event.bound))
            view.replans.append(
                {
                    "time": event.time,
                    "failed": list(event.failed),
                    "reason": event.reason,
                    "plan_hash": event.plan_hash,
                    "new_steps": added,
                }
            )
        elif isinstance(event, RunCancelled):
            view.cancelled = event.reason
        elif isinstance(event, RunFinished):
            view.finished, view.reason, view.ended = event.state, event.reason, event.time
            _end_in_flight(view, event)
    return view
