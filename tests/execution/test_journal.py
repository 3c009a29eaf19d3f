"""The run journal: a flush is durable in the run's append-only journal, the rows reach
SQLite behind it, readers merge both, and whoever drives a run next imports the journal
a killed engine left (real processes killed with SIGKILL, real SQLite files)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _exec_helpers as h
import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plansmith.execution._journal as journal_module
import plansmith.execution._log as log_module
from _shared_servers import (
    INDEX,
    INDEX_BINDING,
    SUMMARISE,
    SUMMARISE_BINDING,
    docs_domain,
    problem_text,
    servers_json,
)
from plansmith.domains.bio._runnotes import journal_file
from plansmith.engine import Engine, RunInputs
from plansmith.errors import ExecutionError
from plansmith.execution import (
    Emitter,
    FakeInvoker,
    PlanReady,
    RunFinished,
    Runner,
    SqliteRunLog,
    StepStarted,
    StepSucceeded,
    ToolCall,
    ToolResult,
)
from plansmith.execution._event_fast import event_json
from plansmith.execution._journal import (
    RESERVE_BYTES,
    JournalWriter,
    journal_line,
    journal_name,
    journal_path,
    read_journal,
)

CHILD = Path(__file__).parent / "_journal_child.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _sqlite_seqs(db: Path, run_id: str) -> list[int]:
    """The seqs of ``run_id`` in the events table itself (a read-only connection)."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT seq FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def _seqs(db: Path, run_id: str) -> list[int]:
    """The seqs of ``run_id`` as a new ``SqliteRunLog`` (another process) sees them."""
    log = SqliteRunLog(db)
    try:
        return [e.seq for e in log.events(run_id)]
    finally:
        log.close()


def _lines(path: Path) -> bytes:
    """The lines of a journal a writer holds open: its file without the zeros reserved
    after them."""
    data = path.read_bytes()
    zero = data.find(0)
    assert zero < 0 or not data[zero:].strip(b"\0"), "zeros between lines"
    return data if zero < 0 else data[:zero]


@contextmanager
def _child(*args: str) -> Iterator[subprocess.Popen[str]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # the child this test started
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def _read_until(proc: subprocess.Popen[str], last: str) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == last:
            return
    raise AssertionError(f"the child ended before printing {last!r}")


@pytest.fixture
def never_caught_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Journaled rows reach SQLite only at a run's end, a read, a release or close."""
    monkeypatch.setattr(log_module, "CATCH_UP_ROWS", 10**9)
    monkeypatch.setattr(log_module, "CATCH_UP_SECONDS", 1e9)


def test_a_killed_writers_flushed_events_are_seen_by_a_fresh_log_and_imported_on_taking_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    with _child("log", str(db), "r-k", "20", "engine-a") as proc:
        _read_until(proc, "flushed 20")
        assert _sqlite_seqs(db, "r-k") == []  # nothing caught up: all in the journal
        assert _seqs(db, "r-k") == list(range(1, 21))  # the merged view, writer alive
        other = SqliteRunLog(db)
        lease = other.acquire("r-k", "engine-b", 60.0)
        assert lease is not None
        assert lease.owner == "engine-a"
        assert journal_path(db, "r-k").exists()  # so its journal is not imported
        os.kill(proc.pid, signal.SIGKILL)  # the child this test started
        proc.wait(timeout=30)
    left = journal_path(db, "r-k").read_bytes()
    assert left.endswith(b"\0")  # the killed writer's reserve stays after its lines
    assert _seqs(db, "r-k") == list(range(1, 21))  # a fresh log, after the kill
    assert _sqlite_seqs(db, "r-k") == []
    lease = other.acquire("r-k", "engine-b", 60.0, replacing="engine-a")
    assert lease is not None
    assert lease.owner == "engine-b"
    assert _sqlite_seqs(db, "r-k") == list(range(1, 21))  # imported on taking the run
    assert not journal_path(db, "r-k").exists()
    events = other.events("r-k")
    assert [e.type for e in events] == ["PlanReady"] + ["StepSucceeded"] * 19
    other.close()


def _engine_inputs(tmp: Path, n: int, **env: str) -> RunInputs:
    (tmp / "domain.yaml").write_text(docs_domain(SUMMARISE, INDEX))
    (tmp / "problem.yaml").write_text(problem_text(n))
    (tmp / "bindings.yaml").write_text(
        "bindings:\n" + SUMMARISE_BINDING + "    idempotent: true\n" + INDEX_BINDING
    )
    (tmp / "servers.json").write_text(servers_json(env=env))
    return RunInputs(
        tmp / "domain.yaml", tmp / "problem.yaml", tmp / "servers.json", tmp / "bindings.yaml"
    )


@pytest.mark.anyio
async def test_engine_resume_imports_the_journal_of_a_killed_engine_first(
    tmp_path: Path,
) -> None:
    call_log = tmp_path / "calls.jsonl"
    held = tmp_path / "held"  # the killed engine's server holds its 4th call of work: that
    inputs = _engine_inputs(  # run cannot finish before the kill; the resumed one's holds none
        tmp_path, 4, COUNTER_LOG=str(call_log), COUNTER_HOLD_AFTER="3", COUNTER_HOLD_ONCE=str(held)
    )
    home = tmp_path / "home"
    files = [str(f) for f in inputs.to_dict().values()]
    with _child("engine", str(home), "r-e", *files) as proc:
        assert proc.stdout is not None
        succeeded = 0
        for line in proc.stdout:
            if json.loads(line)["type"] == "StepSucceeded":
                succeeded += 1
                if succeeded == 3:
                    break
        with anyio.fail_after(120):
            while not held.exists():  # another process's file, polled with a deadline
                await anyio.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)  # the child this test started
        proc.wait(timeout=30)
    db = home / "runs.db"
    journal = journal_path(db, "r-e")
    assert journal.exists()
    ends = [r for r in read_journal(journal) if r.type == "StepSucceeded"]
    assert len(ends) >= 3  # durable before the views heard of them
    assert max(_sqlite_seqs(db, "r-e")) < ends[0].seq  # not caught up: only in the journal
    keys_done = {f"r-e/{json.loads(r.body)['step']}" for r in ends}
    calls_before = len(call_log.read_text().splitlines())
    engine = Engine(home)
    try:
        with anyio.fail_after(120):
            outcome = await engine.resume("r-e")
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason
    later = [json.loads(line) for line in call_log.read_text().splitlines()[calls_before:]]
    assert later, "the resumed run made no calls"
    assert not {c["key"] for c in later} & keys_done  # no finished step called again
    assert not journal.exists()
    seqs = _sqlite_seqs(db, "r-e")
    assert seqs == list(range(1, len(seqs) + 1))  # the killed engine's rows, then the new
    reader = SqliteRunLog(db)
    assert [e.type for e in reader.events("r-e")][-1] == "RunFinished"
    reader.close()


def test_a_torn_last_line_is_ignored_and_a_complete_bad_line_is_an_error(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    for k in range(3):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
    path = log.journal_path("r")
    whole = _lines(path)
    with path.open("ab") as f:  # after the zeros the writer reserves
        f.write(b'{"run_id":"r","seq":4,"type":"PlanReady","body":{"type":"Pla')
    assert [r.seq for r in read_journal(path)] == [1, 2, 3]
    assert _seqs(db, "r") == [1, 2, 3]
    path.write_bytes(whole[:-1])  # the last newline lost: that line is torn too
    assert _seqs(db, "r") == [1, 2]
    lines = whole.split(b"\n")
    path.write_bytes(lines[0] + b"\n\x00\x00\x00\n" + lines[2] + b"\n")  # garbage between
    with pytest.raises(ExecutionError, match="line 2 of the run journal cannot be read"):
        _seqs(db, "r")  # damage, not a crash: no event after it is silently dropped
    path.write_bytes(whole)
    assert _seqs(db, "r") == [1, 2, 3]
    log.close()  # all rows into SQLite, journal removed
    assert _sqlite_seqs(db, "r") == [1, 2, 3]
    assert not path.exists()


def test_importing_a_journal_with_a_torn_line_takes_the_whole_lines(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    writer = SqliteRunLog(db)
    writer.create_run("r", "", {})
    emitter = Emitter(writer, "r")
    for k in range(3):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
    path = writer.journal_path("r")
    with path.open("ab") as f:
        f.write(b'{"run_id":"r","seq":4,"ty')
    taker = SqliteRunLog(db)  # the writer is "killed": never closed
    assert taker.import_journal("r") == 3
    assert not path.exists()
    assert _sqlite_seqs(db, "r") == [1, 2, 3]
    new = Emitter(taker, "r", last_seq=3)
    new.emit(RunFinished(run_id="r", state="succeeded"))
    assert [e.seq for e in taker.events("r")] == [1, 2, 3, 4]
    taker.close()


@pytest.mark.anyio
async def test_a_steps_end_is_in_the_journal_during_the_run_and_the_journal_goes_at_its_end(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    bound = h.bound(h.chain(5))
    log, state = h.start_run(bound, SqliteRunLog(db))
    path = journal_path(db, state.run_id)
    seen: list[tuple[bool, int, int]] = []

    async def handler(call: ToolCall) -> ToolResult:
        merged = _seqs(db, state.run_id)
        seen.append((path.exists(), len(merged), len(_sqlite_seqs(db, state.run_id))))
        return ToolResult({"done": f"{call.arguments['name']}!", "key": call.key}, "")

    with anyio.fail_after(20):
        outcome = await Runner(FakeInvoker(handler), log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    assert all(exists for exists, _, _ in seen)
    assert seen[-1][1] > seen[-1][2]  # the merged view had rows that SQLite had not
    assert not path.exists()  # removed at RunFinished, before close
    seqs = _sqlite_seqs(db, state.run_id)
    assert seqs == list(range(1, len(seqs) + 1))
    log.close()


def test_a_long_journal_is_renewed_after_a_catch_up_and_readers_still_see_every_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CATCH_UP_ROWS", 10)
    monkeypatch.setattr(log_module, "CATCH_UP_SECONDS", 1e9)
    monkeypatch.setattr(log_module, "ROTATE_BYTES", 1000)
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    path = log.journal_path("r")
    sizes = []
    for k in range(1, 36):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
        sizes.append(len(_lines(path)))
        assert _seqs(db, "r") == list(range(1, k + 1))
    assert max(sizes) < 12 * 200  # renewed: never all 35 lines
    journal = read_journal(path)
    assert journal[0].seq > 1  # the rows before are in SQLite only
    assert _sqlite_seqs(db, "r") == list(range(1, journal[0].seq))
    assert not (tmp_path / "journal" / "r.jsonl.new").exists()
    log.close()
    assert _sqlite_seqs(db, "r") == list(range(1, 36))


def test_releasing_a_lease_moves_the_rows_into_sqlite_and_removes_the_journal(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    assert log.acquire("r", "me", 60.0) is not None
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    emitter.emit(PlanReady(run_id="r", plan_hash="h"))
    assert log.journal_path("r").exists()
    assert _sqlite_seqs(db, "r") == []
    log.release("r", "me")
    assert _sqlite_seqs(db, "r") == [1]
    assert not log.journal_path("r").exists()
    assert log.holder("r") is None
    emitter.emit(PlanReady(run_id="r", plan_hash="h2"))  # written again: a new journal
    assert [e.seq for e in log.events("r")] == [1, 2]
    log.close()


def test_a_reader_sees_a_contiguous_prefix_while_a_writer_catches_up_and_removes_journals(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    SqliteRunLog(db).close()  # the schema, before the two processes use it
    runs, per_run = 6, 300
    reader = SqliteRunLog(db)
    seen: dict[str, int] = {}
    journal_only = 0

    def read(run_id: str) -> list[int]:
        seqs = [e.seq for e in reader.events(run_id)]
        assert seqs == list(range(1, len(seqs) + 1)), seqs
        assert len(seqs) >= seen.get(run_id, 0)  # never fewer than a read before
        seen[run_id] = len(seqs)
        return seqs

    # caught up every 7 rows, the journal renewed past 3000 bytes, a pause every 20 events
    with _child("churn", str(db), str(runs), str(per_run), "7", "3000", "20") as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "done":
                break
            _, run_id, flushed = line.split()
            paused = read(run_id)  # the writer waits: everything it flushed is there
            assert len(paused) == int(flushed)
            journal_only += len(paused) > len(_sqlite_seqs(db, run_id))
            proc.stdin.write("\n")
            proc.stdin.flush()
            read(run_id)  # while the writer goes on: appends, catches up, renews, ends
        else:
            raise AssertionError("the writer ended before printing 'done'")
    assert sorted(seen) == [f"c-{r}" for r in range(runs)]
    for r in range(runs):
        assert read(f"c-{r}")[-1] == per_run
    reader.close()
    assert journal_only > runs  # most pauses found rows that SQLite had not got yet
    assert not any((tmp_path / "journal").iterdir())


def test_a_journal_that_cannot_be_written_raises_an_execution_error_with_its_path(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    (tmp_path / "journal").write_text("a file where the journal folder goes")
    log.create_run("r", "", {})
    log.append(PlanReady(run_id="r", seq=1, time="t", plan_hash="h"))
    with pytest.raises(ExecutionError) as caught:
        log.flush()
    assert str(tmp_path / "journal" / "r.jsonl") in str(caught.value)
    (tmp_path / "journal").unlink()  # the obstacle gone, the kept rows are written
    log.close()
    assert _sqlite_seqs(db, "r") == [1]


@given(st.text(min_size=1, max_size=300))
def test_journal_names_are_safe_file_names_and_the_bio_notes_find_the_same_file(
    run_id: str,
) -> None:
    name = journal_name(run_id)
    assert "/" not in name
    assert "\x00" not in name
    assert not name.startswith(".")
    assert len(name.encode()) <= 255
    assert name.endswith(".jsonl")
    db = Path("/home/x/runs.db")
    assert journal_file(db, run_id) == journal_path(db, run_id)


@given(st.lists(st.text(min_size=1, max_size=220), min_size=2, max_size=6, unique=True))
def test_two_run_ids_never_share_a_journal(run_ids: list[str]) -> None:
    assert len({journal_name(r) for r in run_ids}) == len(run_ids)


def test_a_run_id_that_is_no_file_name_still_gets_its_journal(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    for run_id in ("../x", "a/b", "..", "ü ñ"):
        log.create_run(run_id, "", {})
        Emitter(log, run_id).emit(PlanReady(run_id=run_id, plan_hash="h"))
        path = log.journal_path(run_id)
        assert path.parent == tmp_path / "journal"
        assert path.exists()
        assert _seqs(db, run_id) == [1]
    log.close()
    assert not any((tmp_path / "journal").iterdir())


def test_events_of_two_runs_in_one_flush_go_to_their_own_journals(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    for run_id in ("a", "b"):
        log.create_run(run_id, "", {})
    log.append(PlanReady(run_id="a", seq=1, time="t", plan_hash="h"))
    log.append(PlanReady(run_id="b", seq=1, time="t", plan_hash="h"))
    log.append(StepSucceeded(run_id="a", seq=2, time="t", step="s", action="work"))
    log.flush()
    assert [r.seq for r in read_journal(log.journal_path("a"))] == [1, 2]
    assert [r.seq for r in read_journal(log.journal_path("b"))] == [1]
    assert (_seqs(db, "a"), _seqs(db, "b")) == ([1, 2], [1])
    log.append(StepSucceeded(run_id="a", seq=3, time="t", step="t", action="work"))
    log.append(StepSucceeded(run_id="b", seq=1, time="t", step="t", action="work"))  # seq 1 again
    with pytest.raises(ExecutionError):
        log.flush()
    assert _seqs(db, "a") == [1, 2]  # none of the batch was written
    log.close()


def test_a_steps_end_and_the_next_start_are_journaled_as_journal_line_writes_them(
    tmp_path: Path, never_caught_up: None
) -> None:
    log = SqliteRunLog(tmp_path / "runs.db")
    log.create_run("r", "", {})
    events = [
        PlanReady(run_id="r", seq=1, time="t", plan_hash="h"),
        StepSucceeded(run_id="r", seq=2, time="t", step="s1", action="a", outputs={"v": 1}),
        StepStarted(run_id="r", seq=3, time="t", step="s2", action="a", key="r/s2"),
    ]
    log.append(events[0])
    log.flush()
    log.append(events[1])
    log.append(events[2])
    log.flush()  # a step's end and the next step's start: the chain's flush
    expected = "".join(journal_line('"r"', e.seq, e.type, event_json(e)) for e in events)
    assert _lines(log.journal_path("r")).decode() == expected
    assert _seqs(tmp_path / "runs.db", "r") == [1, 2, 3]
    log.close()


def test_a_run_that_ends_in_a_flush_of_two_events_is_moved_into_sqlite_at_once(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    log.append(PlanReady(run_id="r", seq=1, time="t", plan_hash="h"))
    log.flush()
    log.append(StepSucceeded(run_id="r", seq=2, time="t", step="s", action="a"))
    log.append(RunFinished(run_id="r", seq=3, time="t", state="succeeded"))
    log.flush()
    assert not log.journal_path("r").exists()
    assert _sqlite_seqs(db, "r") == [1, 2, 3]
    log.close()


def test_a_flush_of_two_events_not_in_order_fails_and_writes_neither(
    tmp_path: Path, never_caught_up: None
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    log.append(PlanReady(run_id="r", seq=1, time="t", plan_hash="h"))
    log.flush()
    log.append(StepSucceeded(run_id="r", seq=3, time="t", step="s", action="a"))
    log.append(StepStarted(run_id="r", seq=3, time="t", step="t", action="a"))  # 3 again
    with pytest.raises(ExecutionError):
        log.flush()
    assert [r.seq for r in read_journal(log.journal_path("r"))] == [1]
    log.close()
    assert _seqs(db, "r") == [1]


# -- the space a writer reserves ----------------------------------------------------------


def _line(seq: int, run_id: str = "r") -> bytes:
    event = PlanReady(run_id=run_id, seq=seq, time="t", plan_hash=f"h{seq}")
    return journal_line(json.dumps(run_id), seq, event.type, event_json(event)).encode()


def test_a_live_journal_holds_its_lines_then_zeros_and_is_cut_back_to_them_when_closed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal" / "r.jsonl"
    writer = JournalWriter(path, "r")
    lines = b"".join(_line(k) for k in range(1, 4))
    writer.write(lines[: len(_line(1))])
    writer.write(lines[len(_line(1)) :])
    data = path.read_bytes()
    assert len(data) == RESERVE_BYTES  # the lines, then the zeros reserved after them
    assert data[: len(lines)] == lines
    assert not data[len(lines) :].strip(b"\0")
    assert [r.seq for r in read_journal(path)] == [1, 2, 3]
    writer.close()
    assert path.read_bytes() == lines  # cut back: no zeros left in a closed journal


def test_lines_past_one_reserve_are_all_read_and_the_file_grows_by_whole_reserves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal" / "r.jsonl"
    writer = JournalWriter(path, "r")
    count = 3 * RESERVE_BYTES // len(_line(999)) + 7
    written = b""
    for seq in range(1, count + 1):
        writer.write(_line(seq))
        written += _line(seq)
        assert path.stat().st_size % RESERVE_BYTES == 0
    assert len(written) > 3 * RESERVE_BYTES
    assert [r.seq for r in read_journal(path)] == list(range(1, count + 1))
    writer.close()
    assert path.read_bytes() == written


def test_a_line_being_copied_and_the_zeros_after_it_are_not_read_but_a_line_after_zeros_is_damage(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    whole = _line(1) + _line(2)
    third = _line(3)
    half = third[: len(third) // 2]
    # a writer killed while copying a line: part of it, then its reserve
    path.write_bytes(whole + half + bytes(500))
    assert [r.seq for r in read_journal(path)] == [1, 2]
    # a line another process sees while it is copied: its newline before all its bytes
    path.write_bytes(whole + half + bytes(len(third) - len(half) - 1) + b"\n" + bytes(500))
    assert [r.seq for r in read_journal(path)] == [1, 2]
    # zeros, then a complete line: damage (no writer leaves lines after its reserve)
    path.write_bytes(whole + bytes(40) + b"\n" + third + bytes(100))
    with pytest.raises(ExecutionError, match="line 3 of the run journal cannot be read"):
        read_journal(path)


@given(
    st.integers(min_value=0, max_value=6),
    st.integers(min_value=0, max_value=400),
    st.integers(min_value=0, max_value=2000),
)
def test_a_journal_cut_anywhere_and_followed_by_zeros_reads_as_its_whole_lines(
    lines: int, cut: int, zeros: int
) -> None:
    """What a killed writer can leave: whole lines, part of the next, then its reserve."""
    data = b"".join(_line(k) for k in range(1, lines + 2))
    keep = sum(len(_line(k)) for k in range(1, lines + 1))
    cut = min(cut, len(_line(lines + 1)) - 1)  # the next line never whole
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        path.write_bytes(data[: keep + cut] + bytes(zeros))
        assert [r.seq for r in read_journal(path)] == list(range(1, lines + 1))


def test_a_journal_that_cannot_be_mapped_is_written_with_one_pwrite_a_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, never_caught_up: None
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(19, "No such device")  # what a filesystem without mmap says

    monkeypatch.setattr(journal_module.mmap, "mmap", refuse)
    log = SqliteRunLog(tmp_path / "runs.db")
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    for k in range(3):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
    path = log.journal_path("r")
    assert b"\0" not in path.read_bytes()  # no reserve left behind
    assert [r.seq for r in read_journal(path)] == [1, 2, 3]
    assert _seqs(tmp_path / "runs.db", "r") == [1, 2, 3]
    log.close()
    assert _sqlite_seqs(tmp_path / "runs.db", "r") == [1, 2, 3]


@pytest.mark.parametrize("how", ["refused", "short"])
def test_a_reserve_the_disk_cannot_hold_is_an_error_with_the_path_and_its_rows_stay_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, never_caught_up: None, how: str
) -> None:
    db = tmp_path / "runs.db"
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    log.append(PlanReady(run_id="r", seq=1, time="t", plan_hash="h"))
    real_pwrite = os.pwrite

    def full(fd: int, data: bytes, offset: int) -> int:
        if how == "short":  # the disk fills up part of the way
            return real_pwrite(fd, data[: len(data) // 3], offset)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal_module.os, "pwrite", full)
    with pytest.raises(ExecutionError, match="No space left on device") as caught:
        log.flush()
    assert str(log.journal_path("r")) in str(caught.value)
    assert log.journal_path("r").stat().st_size == 0  # cut back: no reserve, no line
    monkeypatch.setattr(journal_module.os, "pwrite", real_pwrite)
    log.append(PlanReady(run_id="r", seq=2, time="t", plan_hash="h2"))
    log.flush()  # the kept row first, then the new one
    assert [r.seq for r in read_journal(log.journal_path("r"))] == [1, 2]
    assert log.journal_path("r").stat().st_size == RESERVE_BYTES  # mapped again, as before
    log.close()
    assert _sqlite_seqs(db, "r") == [1, 2]
