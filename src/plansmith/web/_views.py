"""What the pages and the API show of a run: its run view (``plansmith.execution.RunView``,
the one fold of the events) as the web's JSON.

A step's ``state`` is the run view's: ``pending``, ``running``, ``succeeded``, ``failed``,
``skipped`` (ended without a call: a value it reads is absent; ``message`` says which),
``dropped`` (given up when a replan replaced the rest of the plan) or ``cancelled`` (in
flight when the run was cancelled); ``retrying`` is true while it runs again after a
failed attempt. The run's ``status`` adds what only this server knows: whether one of
its tasks drives the run (``running``) or none does (``interrupted``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from plansmith.engine import after_of, inherited_reads
from plansmith.execution import Event, RunView, StepState, StepView

__all__ = [
    "RunDetail",
    "awaiting_answer_json",
    "fold_view",
    "step_json",
    "step_error",
    "web_status",
]

_ENDED = ("succeeded", "failed", "cancelled")


def web_status(view: RunView, live: bool) -> str:
    """``awaiting approval``, ``awaiting answer``, ``running``, ``succeeded``, ``failed``,
    ``cancelled``, ``created`` (no plan approved or awaiting approval yet) or
    ``interrupted`` (approved, not finished, and no task of this server drives it)."""
    state = view.state
    if state in _ENDED:
        return state
    if live:
        return "running"
    if state in ("created", "planned"):
        return "created"
    return state if state in ("awaiting approval", "awaiting answer") else "interrupted"


def awaiting_answer_json(view: RunView) -> list[dict[str, Any]]:
    """The ask steps of the run that wait for an answer: ``step``, ``action``,
    ``question`` (rendered), ``answer`` (its schema's JSON: ``type`` and ``choices``,
    ``minimum``/``maximum``/``integer``, ``min_length``/``max_length``/``pattern``,
    ``default``), ``assumed`` (what the plan assumed) and ``since``; none once the run
    finished (a run cancelled while it waited)."""
    return [] if view.finished is not None else view.awaiting_answer()


def step_error(step: StepView, view: RunView) -> str | None:
    """What went wrong with the step last: its failure, its cancel, a failed attempt."""
    if step.state is StepState.CANCELLED:
        return f"cancelled with the run ({view.cancelled or 'cancelled'})"
    if step.error_class is not None:
        return step.error
    if step.state is StepState.RUNNING and view.finished is not None:
        return f"no end recorded (the run ended {view.finished})"
    if step.retries:
        last = step.retries[-1]
        return f"{last.error_class}: {last.message}"
    return None


def step_json(step: StepView, view: RunView) -> dict[str, Any]:
    """One step as the pages draw it (its outputs left out)."""
    return {
        "id": step.id,
        "action": step.action,
        "args": list(step.args),
        "tier": step.tier,
        "server": step.server,
        "tool": step.tool,
        "arguments": step.arguments,
        "after": list(step.after),
        "state": step.state.value,
        "retrying": step.retrying,
        "attempts": step.attempts,
        "retries": len(step.retries),
        "started": step.started,
        "ended": step.ended,
        "duration_ms": step.duration_ms,
        "error": step_error(step, view),
        "message": step.message if step.state is StepState.SKIPPED else None,
    }


@dataclass(slots=True)
class RunDetail:
    """A run's view with what this server adds: ``live`` (a task of its own drives the
    run), and the run's creation time and inputs as the log lists them."""

    view: RunView
    live: bool = False
    created: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return web_status(self.view, self.live)

    def to_dict(self) -> dict[str, Any]:
        view = self.view
        return {
            "run_id": view.run_id,
            "created": self.created,
            "inputs": self.inputs,
            # a follow-up run: the run it follows up, and the steps of earlier runs whose
            # outputs its steps read (``RUN/STEP``; not called again)
            "after": after_of(self.inputs),
            "inherited": [
                {"producer": p, "read_by": readers}
                for p, readers in inherited_reads(view.run.bound).items()
            ],
            "status": self.status,
            "reason": view.reason,
            "live": self.live,
            "plan_hash": view.plan_hash,
            "approved": view.approved,
            "approved_by": view.approved_by,
            "awaiting_tiers": list(view.awaiting_tiers),
            # the ask steps that wait for a person's answer (POST /api/runs/{id}/answers)
            "awaiting_answer": awaiting_answer_json(view),
            "plan": {k: v for k, v in view.plan.items() if k != "steps"},
            "steps": [step_json(s, view) for s in view.steps.values()],
            "counts": view.counts(),
            "replans": [r.to_dict() for r in view.replans],
            "started": view.started,
            "ended": view.ended,
            "last_seq": view.last_seq,
        }


def fold_view(run_id: str, events: Iterable[Event], *, live: bool = False) -> RunDetail:
    """The detail of a run after ``events`` (in seq order)."""
    view = RunView.fold(events, run_id)
    return RunDetail(view, live, view.created or "", dict(view.inputs))
