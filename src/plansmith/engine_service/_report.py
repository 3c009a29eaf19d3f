"""A run's report from its events: JSON, and Markdown made from the JSON.

Every quoted output value names the step and the output it came from
(``s3.summary``), so a reader can trace each value back to one tool call.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from plansmith.execution import (
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunFinished,
    RunLog,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
    unpack,
)

__all__ = ["build_report", "report_markdown"]


def _step_rows(events: Sequence[Event], log: RunLog) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for e in events:
        if isinstance(e, StepStarted | StepSucceeded | StepFailed | StepRetrying):
            row = rows.setdefault(
                e.step,
                {
                    "step": e.step,
                    "action": e.action,
                    "args": list(e.args),
                    "server": e.server,
                    "tool": e.tool,
                    "attempts": 0,
                    "retries": 0,
                    "outcome": "running",
                    "duration_ms": None,
                    "outputs": [],
                    "error": None,
                },
            )
            row["attempts"] = max(row["attempts"], e.attempt)
        if isinstance(e, StepRetrying):
            rows[e.step]["retries"] += 1
        elif isinstance(e, StepSucceeded):
            outputs = unpack(log, e.outputs)
            pairs = outputs.items() if isinstance(outputs, dict) else []
            rows[e.step].update(
                outcome="succeeded",
                duration_ms=round(e.duration_ms, 3),
                outputs=[{"from": f"{e.step}.{k}", "value": v} for k, v in pairs],
            )
        elif isinstance(e, StepFailed):
            rows[e.step].update(
                outcome="failed",
                duration_ms=round(e.duration_ms, 3),
                error=f"{e.error_class}: {e.message}",
            )
    return list(rows.values())


def _new_steps(bound: Mapping[str, Any]) -> list[str]:
    """The steps a replan put in force, as ``ID action(args)``."""
    steps = bound.get("steps")
    if not isinstance(steps, list):
        return []
    return [
        f"{s.get('id')} {s.get('action')}({', '.join(map(str, s.get('args') or []))})"
        for s in steps
        if isinstance(s, dict)
    ]


def build_report(
    run_id: str, events: Sequence[Event], log: RunLog, asked: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON report; ``asked`` is what the client asked for (request, goal, translation)."""
    plan_hash = next((e.plan_hash for e in events if isinstance(e, PlanReady)), None)
    approvals = [e.by for e in events if isinstance(e, PlanApproved)]
    finished = next((e for e in events if isinstance(e, RunFinished)), None)
    steps = _step_rows(events, log)
    if finished is not None:  # what was in flight when the run ended ended with it
        ended = "cancelled" if finished.state == "cancelled" else "no end recorded"
        for row in steps:
            if row["outcome"] == "running":
                row["outcome"] = ended
    replans = [
        {
            "failed": list(e.failed),
            "reason": e.reason,
            "plan_hash": e.plan_hash,
            "new_steps": _new_steps(e.bound),
        }
        for e in events
        if isinstance(e, Replanned)
    ]
    return {
        "run_id": run_id,
        "asked": dict(asked),
        "plan": {
            "hash": plan_hash,
            "approved_by": asked.get("approved_by") or (approvals[0] if approvals else None),
            "approval_event": approvals[0] if approvals else None,
        },
        "state": finished.state if finished else "running",
        "reason": finished.reason if finished else None,
        "llm_calls": int(asked.get("llm_calls", 0)),
        "steps": steps,
        "outputs": [o for s in steps for o in s["outputs"]],
        "failures": [{"step": s["step"], "error": s["error"]} for s in steps if s["error"]],
        "retries": sum(s["retries"] for s in steps),
        "replans": replans,
        "servers": dict(sorted(Counter(s["server"] for s in steps).items())),
    }


def _value(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def report_markdown(report: Mapping[str, Any]) -> str:
    asked, plan = report["asked"], report["plan"]
    what = asked.get("request") or ", ".join(asked.get("goal") or asked.get("tasks") or [])
    lines = [
        f"# Run {report['run_id']}: {report['state']}",
        "",
        f"- Asked: {what}",
        f"- Domain: {asked.get('domain')}; goal: {', '.join(asked.get('goal') or []) or '-'}"
        f"; tasks: {', '.join(asked.get('tasks') or []) or '-'}",
        f"- Translation: {asked.get('source', 'structured')}; LLM calls: {report['llm_calls']}",
        f"- Plan: `{plan['hash']}`, approved by {plan['approved_by'] or '-'}",
    ]
    if report["reason"]:
        lines.append(f"- Reason: {report['reason']}")
    lines += [
        "",
        "## Steps",
        "",
        "| step | action | tool | server | ms | outcome | tries |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for s in report["steps"]:
        call = f"{s['action']}({', '.join(s['args'])})"
        lines.append(
            f"| {s['step']} | {call} | {s['tool']} | {s['server']} | {s['duration_ms']} "
            f"| {s['outcome']} | {s['attempts']} |"
        )
    lines += ["", "## Outputs", ""]
    lines += [f"- `{o['from']}` = {_value(o['value'])}" for o in report["outputs"]] or ["- none"]
    lines += ["", "## Failures, retries and replans", ""]
    lines += [f"- {f['step']}: {f['error']}" for f in report["failures"]]
    lines.append(f"- retries: {report['retries']}; replans: {len(report['replans'])}")
    for r in report["replans"]:
        lines.append(f"  - replan after {', '.join(r['failed'])}: {r['reason']}")
        lines.append(f"    new plan `{r['plan_hash']}`: {'; '.join(r['new_steps']) or 'no steps'}")
    lines += ["", "## Servers", ""]
    lines += [f"- {name}: {n} step(s)" for name, n in report["servers"].items()] or ["- none"]
    return "\n".join(lines) + "\n"
