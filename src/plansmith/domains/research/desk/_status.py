"""A research run's status (from its desk and the run log) and its stored report."""

from __future__ import annotations

import json
from pathlib import Path

from plansmith.domains.research.desk._desk import ResearchDesk
from plansmith.domains.research.desk._types import ResearchReport, ResearchStatus
from plansmith.engine import plan_progress
from plansmith.errors import InputError, Location, RunNotFoundError
from plansmith.execution import RunLog, RunView

__all__ = ["research_status", "read_report"]


def research_status(
    desk: ResearchDesk, log: RunLog, *, task_done: bool, error: str | None
) -> ResearchStatus:
    """State and plan steps from the log; searches, seconds and coverage from the desk."""
    budget = desk.problem.budget
    usage = desk.trace().usage
    try:
        view = RunView.fold(log.events(desk.run_id), desk.run_id)
    except RunNotFoundError:
        view = None
    done = total = 0
    if view is None:
        name = "starting" if not task_done else ("cancelled" if error == "cancelled" else "failed")
    else:
        done, total = plan_progress(view)
        if view.finished is not None:
            name = view.finished
        elif task_done:
            name = "cancelled" if error == "cancelled" else "failed"
        else:
            name = "running"
    percent = round(100.0 * done / total, 1) if total else 0.0
    return ResearchStatus(
        desk.run_id,
        name,
        done,
        total,
        percent,
        desk.searches,
        budget.max_searches,
        round(desk.elapsed(), 3),
        budget.max_seconds,
        sum(len(v) for v in desk.evidence.values()),
        usage.limited,
        usage.reasons,
        error,
    )


def read_report(
    run_dir: Path, run_id: str, state: str, trace: bool, *, error: str | None = None
) -> ResearchReport:
    """The report kept in ``run_dir`` (``report.md`` and ``research.json``)."""
    stored = run_dir / "research.json"
    if not stored.is_file():
        if state in ("starting", "running"):
            return ResearchReport(run_id, state, "", False, 0)
        if error is None and state == "succeeded":  # asked by id, never ran here
            raise RunNotFoundError(
                f"no research report for run {run_id!r}",
                location=Location(str(stored)),
                hint="research runs keep research.json in home/runs/RUN_ID",
            )
        text = f"# Research {run_id}: {state}\n\n- Reason: {error or 'no report was written'}\n"
        return ResearchReport(run_id, state, text, False, 0)
    try:
        document = json.loads(stored.read_text(encoding="utf-8"))
        markdown = (run_dir / "report.md").read_text(encoding="utf-8")
        report = document["report"]
        return ResearchReport(
            run_id,
            state,
            markdown,
            bool(report["coverage_limited"]),
            len(report["citations"]),
            document["trace"] if trace else {},
            int(report.get("llm_calls", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError) as problem:
        raise InputError(
            f"the stored research report is unreadable: {problem}",
            location=Location(str(stored)),
            hint="the run folder was edited or cut short; run the research again",
        ) from None
