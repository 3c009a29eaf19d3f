"""Run notes for the report, read from the engine's run log (stdlib only).

The engine appends every event of a run to its log (``HOME/runs.db``, SQLite,
table ``events(run_id, seq, type, body)`` whose ``body`` is the event's JSON
line as in formats.md, Events) before it acts on it. So when ``write_report``
is called, the failures, retries and replans of the run so far are in the log.
The report states them, and the steps that had succeeded before each replan
(those a replan keeps).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["read_run_events", "notes_from_events", "run_notes"]

_TYPES = ("StepSucceeded", "StepFailed", "StepRetrying", "Replanned")


def read_run_events(log: Path, run_id: str) -> list[dict[str, Any]]:
    """The events of ``run_id`` in ``log`` that notes use, in order (read-only)."""
    uri = f"{log.resolve().as_uri()}?mode=ro"
    marks = ", ".join("?" for _ in _TYPES)
    db = sqlite3.connect(uri, uri=True)
    try:
        rows = db.execute(
            f"SELECT body FROM events WHERE run_id = ? AND type IN ({marks}) ORDER BY seq",
            (run_id, *_TYPES),
        ).fetchall()
    finally:
        db.close()
    return [json.loads(row[0]) for row in rows]


def _one_line(value: Any) -> str:
    return " ".join(str(value).split())


def _call(event: dict[str, Any]) -> str:
    return f"{event.get('step')} {event.get('action')}({', '.join(event.get('args') or [])})"


def _new_steps(event: dict[str, Any]) -> str:
    steps = (event.get("bound") or {}).get("steps") or []
    return ", ".join(f"{s['id']} {s['action']}({', '.join(s.get('args') or [])})" for s in steps)


def notes_from_events(events: list[dict[str, Any]]) -> list[str]:
    """One note per failure, retry and replan; a replan also lists the steps it keeps."""
    notes: list[str] = []
    succeeded: list[str] = []
    replans = 0
    for e in events:
        kind = e.get("type")
        if kind == "StepSucceeded":
            succeeded.append(_call(e))
        elif kind == "StepRetrying":
            notes.append(
                f"Attempt {e.get('attempt')} of {_call(e)} failed ({e.get('error_class')}): "
                f"{_one_line(e.get('message'))}; tried again."
            )
        elif kind == "StepFailed":
            notes.append(
                f"Step {_call(e)} failed after attempt {e.get('attempt')} "
                f"({e.get('error_class')}): {_one_line(e.get('message'))}"
            )
        elif kind == "Replanned":
            replans += 1
            failed = ", ".join(e.get("failed") or [])
            kept = "; ".join(succeeded) or "none"
            notes.append(
                f"Replanned (replan {replans}, {e.get('reason') or 'a step failed'}): gave up "
                f"{failed}; planned again from the current state without the failed action. "
                f"Kept, not run again: {kept}. New steps: {_new_steps(e) or 'none'}."
            )
    return notes


def run_notes(log: Path, run_id: str) -> list[str]:
    """The notes of ``run_id`` from the run log ``log``; a note saying so if it is unreadable."""
    try:
        events = read_run_events(log, run_id)
    except (sqlite3.Error, OSError, ValueError) as error:
        return [f"The run log {log.name} could not be read ({error}); no run notes."]
    notes = notes_from_events(events)
    if not notes:
        return [f"Run {run_id}: no step failed and the plan was not changed."]
    return [f"Run {run_id}, from the run log `{log.name}`:", *notes]
