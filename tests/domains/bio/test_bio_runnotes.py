"""Run notes read from the engine's run log (a real SqliteRunLog written through the
Emitter), as write_report puts them in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plansmith.domains.bio._runnotes import notes_from_events, read_run_events, run_notes
from plansmith.execution import (
    Emitter,
    Replanned,
    SqliteRunLog,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
)
from plansmith.model import JSONValue


def _log_with_a_replan(path: Path, run_id: str) -> SqliteRunLog:
    log = SqliteRunLog(path)
    log.create_run(run_id, "2026-01-01T00:00:00.000Z", {})
    emit = Emitter(log, run_id)
    emit.emit(StepStarted(run_id=run_id, step="s1", action="load_sequences", args=("gene",)))
    emit.emit(StepSucceeded(run_id=run_id, step="s1", action="load_sequences", args=("gene",)))
    emit.emit(StepRetrying(run_id=run_id, step="s5", action="make_blast_db", message="boom\n  x"))
    emit.emit(
        StepFailed(
            run_id=run_id,
            step="s5",
            action="make_blast_db",
            args=("family",),
            attempt=2,
            error_class="tool_error",
            message="makeblastdb is not installed\n  hint: install it",
        ),
        defer=True,  # as the runner does: committed with the next event
    )
    new: dict[str, JSONValue] = {
        "steps": [{"id": "r1.s1", "action": "search_biopython", "args": ["gene", "family"]}]
    }
    emit.emit(Replanned(run_id=run_id, failed=("s5",), reason="retries ran out for s5", bound=new))
    emit.emit(StepSucceeded(run_id=run_id, step="r1.s1", action="search_biopython"))
    return log


def test_notes_state_the_failure_the_replan_and_the_kept_steps(tmp_path: Path) -> None:
    log = _log_with_a_replan(tmp_path / "runs.db", "r-1")
    try:  # the writer still holds the log open, as the engine does during the run
        notes = run_notes(tmp_path / "runs.db", "r-1")
    finally:
        log.close()
    assert notes[0] == "Run r-1, from the run log `runs.db`:"
    assert notes[1] == "Attempt 1 of s5 make_blast_db() failed (): boom x; tried again."
    assert notes[2] == (
        "Step s5 make_blast_db(family) failed after attempt 2 (tool_error): "
        "makeblastdb is not installed hint: install it"
    )
    assert notes[3].startswith("Replanned (replan 1, retries ran out for s5): gave up s5;")
    assert "Kept, not run again: s1 load_sequences(gene)." in notes[3]
    assert notes[3].endswith("New steps: r1.s1 search_biopython(gene, family).")
    assert len(notes) == 4  # the step after the replan is no note


def test_only_the_named_run_is_read(tmp_path: Path) -> None:
    _log_with_a_replan(tmp_path / "runs.db", "r-1").close()
    log = SqliteRunLog(tmp_path / "runs.db")
    log.create_run("r-2", "2026-01-01T00:00:01.000Z", {})
    Emitter(log, "r-2").emit(StepSucceeded(run_id="r-2", step="s1", action="gc_content"))
    log.close()
    assert [e["run_id"] for e in read_run_events(tmp_path / "runs.db", "r-2")] == ["r-2"]
    assert run_notes(tmp_path / "runs.db", "r-2") == [
        "Run r-2: no step failed and the plan was not changed."
    ]


def test_a_missing_log_gives_a_note_not_an_error(tmp_path: Path) -> None:
    (note,) = run_notes(tmp_path / "nowhere.db", "r-1")
    assert note.startswith("The run log nowhere.db could not be read (")
    assert not (tmp_path / "nowhere.db").exists()  # read-only: nothing created


def test_two_replans_are_numbered_and_each_keeps_what_succeeded_before_it() -> None:
    events: list[dict[str, Any]] = [
        {"type": "StepSucceeded", "step": "s1", "action": "a", "args": []},
        {"type": "Replanned", "failed": ["s2"], "bound": {"steps": []}},
        {"type": "StepSucceeded", "step": "r1.s1", "action": "b", "args": ["x"]},
        {"type": "Replanned", "failed": ["r1.s2"], "reason": "r", "bound": {}},
    ]
    first, second = notes_from_events(events)
    assert "(replan 1, a step failed)" in first
    assert "Kept, not run again: s1 a(). New steps: none." in first
    assert "(replan 2, r): gave up r1.s2" in second
    assert "Kept, not run again: s1 a(); r1.s1 b(x)." in second
