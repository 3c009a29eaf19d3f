"""Run notes for the report, read from the engine's run log (stdlib only).

The engine appends every event of a run to its log before it acts on it: first to the
run's journal (``HOME/journal/RUN_ID.jsonl``, one JSON line per event whose ``body`` is
the event's JSON line as in formats.md, Events), and in batches behind it to
``HOME/runs.db`` (SQLite, table ``events(run_id, seq, type, body)``, the same bodies).
The notes read both, the journal first (a writer that moves its rows into SQLite and
removes the journal meanwhile loses none), so when ``write_report`` is called, the
failures, retries and replans of the run so far are in them.
The report states them, and the steps that had succeeded before each replan
(those a replan keeps).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["read_run_events", "notes_from_events", "run_notes", "journal_file"]

_TYPES = ("StepSucceeded", "StepFailed", "StepRetrying", "Replanned")


def journal_file(log: Path, run_id: str) -> Path:
    """The journal of ``run_id`` beside ``log``, named as the engine names it
    (``plansmith.execution._journal.journal_name``; not imported, to stay stdlib only)."""
    name = run_id + ".jsonl"
    if not (re.fullmatch(r"[A-Za-z0-9_-]+", run_id) and len(run_id) <= 200):
        raw = run_id.encode("utf-8", "surrogatepass")
        safe = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
        escaped = "".join(chr(b) if b in safe else f"%{b:02X}" for b in raw)
        name = escaped + ".jsonl"
        if len(escaped) > 200:
            name = hashlib.sha256(raw).hexdigest() + ".sha256.jsonl"
    return log.parent / "journal" / name


def _journal_rows(path: Path, run_id: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(seq, type, event) of the journal's whole lines, up to the first torn one."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    rows: list[tuple[int, str, dict[str, Any]]] = []
    for line in data.split(b"\n")[:-1]:  # the last piece has no newline
        try:
            row = json.loads(line)
            seq, kind, body = row["seq"], row["type"], row["body"]
        except (ValueError, TypeError, KeyError):
            break
        if row.get("run_id") != run_id or type(seq) is not int or not isinstance(body, dict):
            break
        rows.append((seq, kind, body))
    return rows


def read_run_events(log: Path, run_id: str) -> list[dict[str, Any]]:
    """The events of ``run_id`` in ``log`` and its journal that notes use, in order
    (read-only)."""
    journal = _journal_rows(journal_file(log, run_id), run_id)  # before SQLite: see above
    uri = f"{log.resolve().as_uri()}?mode=ro"
    marks = ", ".join("?" for _ in _TYPES)
    db = sqlite3.connect(uri, uri=True)
    try:
        rows = db.execute(
            f"SELECT seq, CASE WHEN type IN ({marks}) THEN body END FROM events"
            " WHERE run_id = ? ORDER BY seq",
            (*_TYPES, run_id),
        ).fetchall()
    finally:
        db.close()
    events = [json.loads(body) for _, body in rows if body is not None]
    last = rows[-1][0] if rows else None
    for seq, kind, body in journal:  # the rows SQLite has not got yet, without a gap
        if last is not None and seq <= last:
            continue
        if last is not None and seq != last + 1:
            break
        last = seq
        if kind in _TYPES:
            events.append(body)
    return events


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
