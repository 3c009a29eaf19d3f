"""A run's report from its events: JSON, and Markdown made from the JSON.

Every quoted output value names the step and the output it came from
(``s3.summary``), so a reader can trace each value back to one tool call.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from plansmith.engine._follow_up import after_of, inherited_reads
from plansmith.errors import PlansmithError
from plansmith.execution import Event, RunLog, RunState, RunView, StepState, StepView, fold, unpack

__all__ = ["build_report", "report_markdown", "plan_progress"]


def _outcome(step: StepView, view: RunView) -> str:
    """The step's state; a step still running when the run ended has no end recorded."""
    if step.state is StepState.RUNNING and view.finished is not None:
        return "no end recorded"
    return step.state.value


def _step_row(step: StepView, view: RunView, log: RunLog) -> dict[str, Any]:
    outputs = unpack(log, step.outputs)
    pairs = outputs.items() if isinstance(outputs, dict) else []
    return {
        "step": step.id,
        "action": step.action,
        "args": list(step.args),
        "server": step.server,
        "tool": step.tool,
        "attempts": step.attempts,
        "retries": len(step.retries),
        "outcome": _outcome(step, view),
        "duration_ms": None if step.duration_ms is None else round(step.duration_ms, 3),
        "outputs": [{"from": f"{step.id}.{k}", "value": v} for k, v in pairs],
        "error": step.error,
        # why it ended without a call (``StepSkipped``: a value it reads is absent)
        "skipped": step.message if step.state is StepState.SKIPPED else None,
    }


def build_report(
    run_id: str, events: Sequence[Event], log: RunLog, asked: Mapping[str, Any]
) -> dict[str, Any]:
    """The JSON report; ``asked`` is what the client asked for (request, goal, translation)."""
    view = RunView.fold(events, run_id)
    # the steps that ran (a step the run never started is not in the report), in plan order
    steps = [_step_row(s, view, log) for s in view.steps.values() if s.attempts]
    replans = [
        {
            "failed": list(r.failed),
            "reason": r.reason,
            "plan_hash": r.plan_hash,
            "new_steps": [_call(view.steps[i]) for i in r.new_steps],
        }
        for r in view.replans
    ]
    return {
        "run_id": run_id,
        # a follow-up run: the run it follows up, and the outputs of earlier runs it read
        "after": after_of(view.inputs),
        "inherited": _inherited_rows(view, log),
        "asked": dict(asked),
        "plan": {
            "hash": view.plan_hash,
            "approved_by": asked.get("approved_by") or view.approved_by,
            "approval_event": view.approved_by,
        },
        "state": view.finished or "running",
        "reason": view.reason,
        "llm_calls": int(asked.get("llm_calls", 0)),
        "steps": steps,
        "outputs": [o for s in steps for o in s["outputs"]],
        "failures": [{"step": s["step"], "error": s["error"]} for s in steps if s["error"]],
        "skipped": [{"step": s["step"], "reason": s["skipped"]} for s in steps if s["skipped"]],
        "retries": sum(s["retries"] for s in steps),
        "replans": replans,
        # the steps that called each server (a skipped step called none)
        "servers": dict(sorted(Counter(s["server"] for s in steps if not s["skipped"]).items())),
    }


def _inherited_rows(view: RunView, log: RunLog) -> list[dict[str, Any]]:
    """The steps of earlier runs whose outputs a follow-up's steps read (not called
    again): each as its producer id (``RUN/STEP``), its run and step, its call, the
    steps that read it, and its outputs (``RUN/STEP.output``)."""
    runs: dict[str, RunState | None] = {}
    rows = []
    for producer, readers in inherited_reads(view.run.bound).items():
        run, step = producer.split("/", 1)
        if run not in runs:
            try:
                runs[run] = fold(run, log.events(run))
            except PlansmithError:  # a parent no longer in the log: named, not shown
                runs[run] = None
        state = runs[run]
        bound = {s.id: s.step for s in state.bound.steps} if state and state.bound else {}
        found = bound.get(step)
        outputs = unpack(log, state.outputs.get(step)) if state is not None else None
        pairs = outputs.items() if isinstance(outputs, dict) else []
        rows.append(
            {
                "producer": producer,
                "run": run,
                "step": step,
                "action": found.action if found else None,
                "args": list(found.args) if found else [],
                "read_by": list(readers),
                "outputs": [{"from": f"{producer}.{k}", "value": v} for k, v in pairs],
            }
        )
    return rows


def _call(step: StepView) -> str:
    """A step a replan put in force, as ``ID action(args)``."""
    return f"{step.id} {step.action}({', '.join(map(str, step.args))})"


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
    if report.get("after"):
        lines.append(f"- Follows up run {report['after']}: planned from its final state")
    lines += [
        "",
        "## Steps",
        "",
        "| step | action | tool | server | ms | outcome | tries |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for s in report["steps"]:
        call = f"{s['action']}({', '.join(map(str, s['args']))})"
        lines.append(
            f"| {s['step']} | {call} | {s['tool']} | {s['server']} | {s['duration_ms']} "
            f"| {s['outcome']} | {s['attempts']} |"
        )
    if report.get("inherited"):
        lines += ["", "## Inherited from earlier runs (not called again)", ""]
        for i in report["inherited"]:
            call = f"{i['action']}({', '.join(map(str, i['args']))})"
            lines.append(f"- `{i['producer']}` {call}, read by {', '.join(i['read_by'])}")
    lines += ["", "## Outputs", ""]
    lines += [f"- `{o['from']}` = {_value(o['value'])}" for o in report["outputs"]] or ["- none"]
    lines += ["", "## Failures, skipped steps, retries and replans", ""]
    lines += [f"- {f['step']}: {f['error']}" for f in report["failures"]]
    lines += [f"- {k['step']}: skipped, {k['reason']}" for k in report.get("skipped", ())]
    lines.append(f"- retries: {report['retries']}; replans: {len(report['replans'])}")
    for r in report["replans"]:
        lines.append(f"  - replan after {', '.join(r['failed'])}: {r['reason']}")
        lines.append(f"    new plan `{r['plan_hash']}`: {'; '.join(r['new_steps']) or 'no steps'}")
    lines += ["", "## Servers", ""]
    lines += [f"- {name}: {n} step(s)" for name, n in report["servers"].items()] or ["- none"]
    return "\n".join(lines) + "\n"


def plan_progress(view: RunView) -> tuple[int, int]:
    """The steps done (succeeded, or skipped: a value they read was absent), and the steps
    of the run (those a replan dropped aside)."""
    counts = view.counts()
    return counts["succeeded"] + counts["skipped"], counts["total"] - counts["dropped"]
