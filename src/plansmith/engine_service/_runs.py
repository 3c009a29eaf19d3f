"""A run started by the service, and its status from the run log."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from plansmith.errors import RunNotFoundError
from plansmith.execution import RunLog, RunView, StepState
from plansmith.servers import RunStatus

__all__ = ["RunRecord", "run_status", "plan_progress"]


@dataclass(slots=True)
class RunRecord:
    run_id: str
    plan_hash: str
    owner: str
    asked: dict[str, Any] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    error: str | None = None
    cancel_reason: str | None = None  # set when the service cancels the run


def plan_progress(view: RunView) -> tuple[int, int]:
    """The steps that succeeded, and the steps of the run (those a replan dropped aside)."""
    counts = view.counts()
    return counts["succeeded"], counts["total"] - counts["dropped"]


def run_status(record: RunRecord, log: RunLog) -> RunStatus:
    """State, progress, steps in flight, failures and replans, from the log (pure fold).

    State and error are taken together: a run the log has finished ``failed`` or
    ``cancelled`` has the error its task recorded, or, until the task has (its tool
    servers still closing), the reason of the log's ``RunFinished``; never a terminal
    state with no error while the record catches up."""
    try:
        view = RunView.fold(log.events(record.run_id), record.run_id)
    except RunNotFoundError:
        view = None
    task_done = record.task is None or record.task.done()
    if view is None:
        name = "starting"
        if task_done and record.error:
            name = "cancelled" if record.cancel_reason is not None else "failed"
        return RunStatus(record.run_id, record.plan_hash, name, 0, 0, 0.0, error=record.error)
    done, total = plan_progress(view)
    error = record.error
    if view.finished is not None:
        name = view.finished
        if error is None and name in ("failed", "cancelled"):
            error = view.reason
    elif task_done:
        name = "cancelled" if record.cancel_reason is not None else "failed"
    else:
        name = "running"
    return RunStatus(
        record.run_id,
        record.plan_hash,
        name,
        done,
        total,
        round(100.0 * done / total, 1) if total else (100.0 if name == "succeeded" else 0.0),
        in_flight=tuple(s.id for s in view.steps.values() if s.state is StepState.RUNNING),
        failures=tuple(s.id for s in view.steps.values() if s.state is StepState.FAILED),
        replans=len(view.replans),
        error=error,
    )
