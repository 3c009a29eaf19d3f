"""The report of a run: outcome, wall time, per-tool totals, failures, retries, replans."""

from __future__ import annotations

from typing import Any

from plansmith.engine import ASKED_KEY, after_of, inherited_reads
from plansmith.execution import StepState, elapsed_ms
from plansmith.web._views import RunDetail, step_error

__all__ = ["run_report"]


def run_report(detail: RunDetail) -> dict[str, Any]:
    """A JSON report of a run: what ran where, how long it took, and what went wrong."""
    view = detail.view
    tools: dict[tuple[str, str], dict[str, Any]] = {}
    for step in view.steps.values():
        if step.duration_ms is None:
            continue
        row = tools.setdefault(
            (step.server, step.tool),
            {"server": step.server, "tool": step.tool, "calls": 0, "total_ms": 0.0, "max_ms": 0.0},
        )
        row["calls"] += 1
        row["total_ms"] = round(row["total_ms"] + step.duration_ms, 3)
        row["max_ms"] = max(row["max_ms"], step.duration_ms)
    ran = sorted(
        (s for s in view.steps.values() if s.started), key=lambda s: (s.started or "", s.id)
    )
    asked = view.inputs.get(ASKED_KEY)
    return {
        "run_id": view.run_id,
        # what was asked (the web's form, an MCP request): {} for a run made otherwise
        "asked": asked if isinstance(asked, dict) else {},
        # a follow-up run: the run it follows up, and the outputs of earlier runs it read
        "after": after_of(view.inputs),
        "inherited": [
            {"producer": p, "read_by": readers}
            for p, readers in inherited_reads(view.run.bound).items()
        ],
        "status": detail.status,
        "reason": view.reason,
        "plan_hash": view.plan_hash,
        "approved_by": view.approved_by,
        "started": view.started,
        "ended": view.ended,
        "wall_ms": elapsed_ms(view.started, view.ended),
        "counts": view.counts(),
        "busy_ms": round(sum(s.duration_ms or 0.0 for s in view.steps.values()), 3),
        "by_tool": sorted(tools.values(), key=lambda r: (-r["total_ms"], r["server"], r["tool"])),
        "failures": [
            {"step": s.id, "action": s.action, "error": step_error(s, view)}
            for s in view.steps.values()
            if s.state is StepState.FAILED
        ],
        "skipped": [
            {"step": s.id, "action": s.action, "reason": s.message}
            for s in view.steps.values()
            if s.state is StepState.SKIPPED
        ],
        "retried": [
            {"step": s.id, "retries": len(s.retries), "error": step_error(s, view)}
            for s in view.steps.values()
            if s.retries
        ],
        "replans": [r.to_dict() for r in view.replans],
        "steps": [
            {
                "id": s.id,
                "action": s.action,
                "args": s.args,
                "server": s.server,
                "tool": s.tool,
                "state": s.state.value,
                "attempts": s.attempts,
                "started": s.started,
                "offset_ms": elapsed_ms(view.started, s.started),
                "duration_ms": s.duration_ms,
            }
            for s in ran
        ],
    }
