"""A damaged run log: rows, journal lines and blobs that cannot be read are typed,
located errors with a hint; a blob store that cannot be written fails a run without a
gap in its seq; a read-only log reads a home it may not write."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import _exec_helpers as h
import anyio
import pytest

import plansmith.execution._log as log_module
from plansmith.errors import ExecutionError, PlansmithError
from plansmith.execution import (
    Emitter,
    Event,
    FakeInvoker,
    MemoryRunLog,
    PlanReady,
    RunFinished,
    Runner,
    SqliteRunLog,
    StepStarted,
    StepState,
    ToolCall,
    ToolResult,
    fold,
)
from plansmith.execution._emit import unpack
from plansmith.execution._events import EVENT_TYPES
from plansmith.execution._events import _checks as event_checks
from plansmith.execution._journal import read_journal

ROOT = os.geteuid() == 0
#: what a child of root runs without: the capabilities that let root ignore file modes
_BOUNDING = "--bounding-set=-dac_override,-dac_read_search,-fowner"
_CHILD = "PLANSMITH_TEST_FILE_MODES_BIND"


def _file_modes_bind(request: pytest.FixtureRequest) -> bool:
    """True where this process obeys file modes. As root (which writes into a read-only
    folder), the test runs again in a child that has lost those capabilities (util-linux
    ``setpriv``): it must pass there, and this returns False."""
    if not ROOT or os.environ.get(_CHILD):
        return True
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is missing: as root, file modes cannot be made to bind")
    done = subprocess.run(
        [*("setpriv", _BOUNDING, sys.executable, "-m", "pytest", "-q", "--no-cov"),
         *("-p", "no:cacheprovider", request.node.nodeid)],
        cwd=request.config.rootpath,
        env={**os.environ, _CHILD: "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    return False


PLANSMITH = Path(sys.executable).parent / "plansmith"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _log_with_run(db: Path, n: int = 6) -> SqliteRunLog:
    """A SQLite log holding run ``r`` with ``n`` PlanReady events, all in SQLite."""
    log = SqliteRunLog(db)
    log.create_run("r", "2026-01-01T00:00:00.000Z", {})
    emitter = Emitter(log, "r")
    for k in range(n):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
    log.catch_up()
    return log


def _set_body(db: Path, seq: int, body: object) -> None:
    with sqlite3.connect(db) as db_:
        db_.execute("UPDATE events SET body = ? WHERE run_id = 'r' AND seq = ?", (body, seq))
    db_.close()


# -- damaged rows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("{bad", "its body is not JSON"),
        ('{"type":"Bogus"}', "unknown event type 'Bogus'"),
        ('{"type":"StepStarted"}', "no action, run_id, step"),
        ('{"type":"PlanReady","run_id":"r","seq":"5","plan_hash":"h"}', "seq is a str"),
        ('{"type":"PlanReady","run_id":"r","seq":9,"plan_hash":"h"}', "holds event 9"),
        ("[1, 2]", "an event is a JSON object, not list"),
        (b"\x80{}", "its body is not text"),
    ],
    ids=["bad-json", "unknown-type", "missing-fields", "wrong-type", "wrong-seq", "array", "bytes"],
)
def test_a_damaged_event_row_is_an_execution_error_at_the_log_naming_run_and_seq(
    tmp_path: Path, body: object, why: str
) -> None:
    db = tmp_path / "runs.db"
    log = _log_with_run(db)
    _set_body(db, 5, body)
    with pytest.raises(ExecutionError) as caught:
        log.events("r")
    error = caught.value
    assert error.location is not None
    assert error.location.file == str(db)
    assert error.message.startswith("event 5 of run r cannot be read: ")
    assert why in error.message
    assert error.hint is not None
    assert "damaged" in error.hint
    assert "backup" in error.hint
    log.close()


def test_every_event_field_has_a_json_type_the_reader_checks() -> None:
    for cls in EVENT_TYPES.values():
        assert set(event_checks(cls)) == {f.name for f in fields(cls)}


def test_a_damaged_body_in_a_live_runs_journal_is_located_at_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CATCH_UP_SECONDS", 1e9)  # event 3 stays in the journal
    db = tmp_path / "runs.db"
    writer = _log_with_run(db, 2)
    emitter = Emitter(writer, "r", last_seq=2)
    emitter.emit(PlanReady(run_id="r", plan_hash="h2"))  # in the journal only
    path = writer.journal_path("r")
    text = path.read_text()
    path.write_text(text.replace('"plan_hash":"h2"', '"plan_hash":2'))
    reader = SqliteRunLog(db)
    with pytest.raises(ExecutionError) as caught:
        reader.events("r")
    assert caught.value.location is not None
    assert caught.value.location.file == str(path)
    assert caught.value.message.startswith("event 3 of run r cannot be read: ")
    assert "plan_hash is a int" in caught.value.message
    reader.close()
    writer.close()


def test_a_run_whose_inputs_are_damaged_is_an_execution_error_at_the_log(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    log = _log_with_run(db, 1)
    with sqlite3.connect(db) as db_:
        db_.execute("UPDATE runs SET inputs = '{' WHERE id = 'r'")
    db_.close()
    with pytest.raises(ExecutionError, match="run r cannot be read") as caught:
        log.run("r")
    assert caught.value.location is not None
    assert caught.value.location.file == str(db)
    log.close()


def test_runs_lists_a_run_with_a_damaged_row_as_unreadable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _log_with_run(home / "runs.db").close()
    _set_body(home / "runs.db", 5, '{"type":"StepStarted"}')
    with pytest.raises(PlansmithError):  # what ``plansmith runs`` catches
        fold("r", SqliteRunLog(home / "runs.db").events("r"))
    done = subprocess.run(
        [str(PLANSMITH), "runs", "--home", str(home), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["state"] == "unreadable"
    assert "event 5 of run r cannot be read" in row["error"]
    assert "Traceback" not in done.stderr


# -- blobs -------------------------------------------------------------------------------


def _blob(tmp_path: Path) -> tuple[SqliteRunLog, str, Path]:
    log = SqliteRunLog(tmp_path / "runs.db")
    ref = log.put_blob(json.dumps({"value": "x" * 100}).encode())
    digest = ref.removeprefix("sha256:")
    return log, ref, tmp_path / "blobs" / digest[:2] / digest[2:]


def test_a_truncated_blob_is_an_execution_error_at_its_file(tmp_path: Path) -> None:
    log, ref, path = _blob(tmp_path)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ExecutionError, match="is damaged") as caught:
        unpack(log, {"$blob": ref})
    assert caught.value.location is not None
    assert caught.value.location.file == str(path)
    assert caught.value.hint is not None
    assert "backup" in caught.value.hint
    log.close()


def test_a_tampered_blob_of_the_same_size_is_not_returned(tmp_path: Path) -> None:
    log, ref, path = _blob(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"x", b"y"))
    with pytest.raises(ExecutionError, match="is damaged"):
        log.get_blob(ref)
    log.close()


def test_a_reference_that_is_not_a_hash_is_an_execution_error(tmp_path: Path) -> None:
    log, _, _ = _blob(tmp_path)
    for ref in ("sha256:../../runs.db", "md5:00", "sha256:" + "A" * 64):
        with pytest.raises(ExecutionError, match="not a blob reference"):
            log.get_blob(ref)
    log.close()


def test_a_blob_that_is_not_json_is_an_execution_error_when_unpacked() -> None:
    log = MemoryRunLog()
    ref = log.put_blob(b"\xff{not json")
    with pytest.raises(ExecutionError, match=f"blob {ref} does not hold a JSON value"):
        unpack(log, {"$blob": ref})
    with pytest.raises(ExecutionError, match="not in the in-memory run log"):
        unpack(log, {"$blob": "sha256:" + "0" * 64})


def test_a_damaged_blob_is_written_again_by_a_put_of_its_value(tmp_path: Path) -> None:
    log, ref, path = _blob(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[:5])
    assert log.put_blob(whole) == ref
    assert log.get_blob(ref) == whole
    log.close()


def test_a_blob_put_where_blobs_is_a_file_is_an_execution_error_at_the_blob_path(
    tmp_path: Path,
) -> None:
    log = SqliteRunLog(tmp_path / "runs.db")
    (tmp_path / "blobs").write_text("not a directory")
    with pytest.raises(ExecutionError, match="cannot write blob sha256:") as caught:
        log.put_blob(b"data")
    assert caught.value.location is not None
    assert caught.value.location.file is not None
    assert caught.value.location.file.startswith(str(tmp_path / "blobs") + "/")
    assert caught.value.hint is not None
    assert "permissions" in caught.value.hint
    log.close()


def test_a_blob_put_into_a_read_only_blobs_directory_is_an_execution_error(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not _file_modes_bind(request):
        return
    log = SqliteRunLog(tmp_path / "runs.db")
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs").chmod(0o500)
    try:
        with pytest.raises(ExecutionError, match="cannot write blob"):
            log.put_blob(b"data")
    finally:
        (tmp_path / "blobs").chmod(0o700)
        log.close()


def test_a_blob_put_uses_a_temp_file_of_its_own_and_removes_it_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = log_module.BlobStore(tmp_path / "blobs")
    data = b"payload"
    ref = "sha256:" + __import__("hashlib").sha256(data).hexdigest()
    path = store.path(ref)
    path.parent.mkdir(parents=True)
    path.with_suffix(".tmp").mkdir()  # the name every writer used to share, held
    assert store.put(data) == ref
    assert path.read_bytes() == data
    path.unlink()

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(ExecutionError, match="No space left on device"):
        store.put(data)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.with_suffix(".tmp").name]


# -- a blob store that fails during a run ---------------------------------------------


class FakeFullBlobLog(MemoryRunLog):
    """A memory log whose blob store cannot be written."""

    def put_blob(self, data: bytes) -> str:
        raise ExecutionError(
            "cannot write blob sha256:00 to the blob store: No space left on device",
            hint="check the free space",
        )


async def big(call: ToolCall) -> ToolResult:
    return ToolResult({"done": "x" * 40_000, "key": call.key}, "")


async def _fails_writing_a_blob(runner: Runner) -> None:
    """Run ``runner``: it raises the blob store's error itself (not the task group's group
    of it), so that the engine and the CLI report it as what it is."""
    with anyio.fail_after(10), pytest.raises(ExecutionError, match="cannot write blob"):
        await runner.run()


def _assert_no_gap_and_failed(events: list[Event]) -> RunFinished:
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    last = events[-1]
    assert isinstance(last, RunFinished)
    assert last.state == "failed"
    return last


@pytest.mark.anyio
async def test_a_run_whose_blob_store_cannot_be_written_ends_with_no_gap_in_seq() -> None:
    log, state = h.start_run(h.bound(h.chain(3)), FakeFullBlobLog())
    await _fails_writing_a_blob(Runner(FakeInvoker(big), log, state))
    events = log.events("run-1")
    _assert_no_gap_and_failed(events)
    # the call was made and its outcome could not be recorded: its start stays without an
    # end, as after a crash (a StepFailed would say the tool failed; it did not)
    assert [e.step for e in events if isinstance(e, StepStarted)] == ["s0"]
    assert fold("run-1", events).states["s0"] is StepState.RUNNING


@pytest.mark.anyio
async def test_a_run_whose_blob_store_cannot_be_written_names_the_problem_in_its_reason() -> None:
    log, state = h.start_run(h.bound(h.chain(3)), FakeFullBlobLog())
    await _fails_writing_a_blob(Runner(FakeInvoker(big), log, state))
    last = _assert_no_gap_and_failed(log.events("run-1"))
    assert last.reason is not None
    assert "cannot write blob" in last.reason


@pytest.mark.anyio
async def test_a_real_run_whose_blobs_path_is_a_file_ends_with_no_gap_in_seq(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    (tmp_path / "blobs").write_text("not a directory")  # mkdir fails, as root too
    log, state = h.start_run(h.bound(h.chain(3)), SqliteRunLog(db))
    await _fails_writing_a_blob(Runner(FakeInvoker(big), log, state))
    log.close()
    reader = SqliteRunLog(db)
    _assert_no_gap_and_failed(reader.events("run-1"))
    reader.close()


@pytest.mark.anyio
async def test_a_real_run_whose_blobs_directory_is_read_only_ends_with_no_gap_in_seq(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not _file_modes_bind(request):
        return
    db = tmp_path / "runs.db"
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs").chmod(0o500)
    try:
        log, state = h.start_run(h.bound(h.chain(3)), SqliteRunLog(db))
        await _fails_writing_a_blob(Runner(FakeInvoker(big), log, state))
        log.close()
    finally:
        (tmp_path / "blobs").chmod(0o700)
    reader = SqliteRunLog(db)
    _assert_no_gap_and_failed(reader.events("run-1"))
    reader.close()


# -- damaged journal lines --------------------------------------------------------------


def _journaled(db: Path) -> tuple[SqliteRunLog, Path, bytes]:
    """A writer whose run ``r`` has three events in its journal (none in SQLite)."""
    log = SqliteRunLog(db)
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    for k in range(3):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
    path = log.journal_path("r")
    return log, path, path.read_bytes()


def test_a_complete_unreadable_journal_line_is_an_error_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CATCH_UP_SECONDS", 1e9)
    db = tmp_path / "runs.db"
    writer, path, whole = _journaled(db)
    lines = whole.split(b"\n")
    path.write_bytes(lines[0] + b"\n" + lines[1][:-5] + b"\n" + lines[2] + b"\n")
    with pytest.raises(ExecutionError, match="line 2 of the run journal") as caught:
        read_journal(path)
    assert caught.value.location is not None
    assert str(caught.value.location) == f"{path}:2"
    assert caught.value.hint is not None
    assert "damaged" in caught.value.hint
    with pytest.raises(ExecutionError, match="line 2 of the run journal"):
        SqliteRunLog(db).events("r")
    path.write_bytes(whole + b'{"run_id":"r","seq":4,"type":"Pla')  # torn: still ignored
    assert [r.seq for r in read_journal(path)] == [1, 2, 3]
    for journal in writer._journals.values():
        journal.close()


def test_taking_over_a_run_with_a_damaged_journal_keeps_the_journal_and_imports_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_module, "CATCH_UP_SECONDS", 1e9)
    db = tmp_path / "runs.db"
    writer, path, whole = _journaled(db)  # "killed": never closed
    lines = whole.split(b"\n")
    damaged = lines[0] + b"\n\x00\x00\n" + lines[2] + b"\n"
    path.write_bytes(damaged)
    taker = SqliteRunLog(db)
    with pytest.raises(ExecutionError, match="line 2 of the run journal"):
        taker.acquire("r", "me", 60.0)
    with pytest.raises(ExecutionError, match="line 2 of the run journal"):
        taker.import_journal("r")
    new = Emitter(taker, "r", last_seq=3)
    with pytest.raises(ExecutionError, match="line 2 of the run journal"):
        new.emit(RunFinished(run_id="r", state="failed"))
    assert path.read_bytes() == damaged  # nothing lost
    with sqlite3.connect(db) as db_:
        assert db_.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    db_.close()
    path.write_bytes(whole)  # restored from a backup: the run goes on, with no gap
    new.flush()
    assert [e.seq for e in taker.events("r")] == [1, 2, 3, 4]
    taker.close()
    for journal in writer._journals.values():
        journal.close()


# -- read-only -----------------------------------------------------------------------------


def _finished_run(home: Path) -> None:
    log = SqliteRunLog(home / "runs.db")
    log.create_run("r", "2026-01-01T00:00:00.000Z", {"k": 1})
    emitter = Emitter(log, "r")
    ref = log.put_blob(json.dumps("x" * 100).encode())
    emitter.emit(PlanReady(run_id="r", plan_hash=ref))
    emitter.emit(RunFinished(run_id="r"))
    log.close()


def test_a_read_only_log_reads_without_writing_and_refuses_every_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _finished_run(home)
    db = home / "runs.db"
    before = db.read_bytes()
    log = SqliteRunLog(db, read_only=True)
    assert [r.run_id for r in log.runs()] == ["r"]
    events = log.events("r")
    assert [e.type for e in events] == ["PlanReady", "RunFinished"]
    assert unpack(log, {"$blob": events[0].plan_hash}) == "x" * 100  # type: ignore[attr-defined]
    for write in (
        lambda: log.create_run("s", "", {}),
        lambda: log.append(RunFinished(run_id="r", seq=3)),
        log.flush,
        lambda: log.put_blob(b"x"),
        lambda: log.acquire("r", "me", 60.0),
        lambda: log.renew("r", "me", 60.0),
        lambda: log.release("r", "me"),
        lambda: log.import_journal("r"),
    ):
        with pytest.raises(ExecutionError, match="the run log is open read-only"):
            write()
    log.close()
    assert db.read_bytes() == before


def test_a_read_only_log_sees_a_live_runs_journal(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    writer, _, _ = _journaled(db)
    reader = SqliteRunLog(db, read_only=True)
    assert [e.seq for e in reader.events("r")] == [1, 2, 3]
    Emitter(writer, "r", last_seq=3).emit(RunFinished(run_id="r"))
    assert [e.seq for e in reader.events("r")] == [1, 2, 3, 4]
    reader.close()
    writer.close()


def test_a_read_only_log_refuses_a_newer_schema_and_migrates_no_older_one(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _finished_run(tmp_path)
    with sqlite3.connect(db) as db_:
        db_.execute("PRAGMA user_version = 99")
    db_.close()
    with pytest.raises(ExecutionError, match="has schema version 99"):
        SqliteRunLog(db, read_only=True)
    with sqlite3.connect(db) as db_:
        db_.execute("PRAGMA user_version = 1")
    db_.close()
    log = SqliteRunLog(db, read_only=True)
    assert [e.type for e in log.events("r")] == ["PlanReady", "RunFinished"]
    log.close()
    with sqlite3.connect(db) as db_:
        assert db_.execute("PRAGMA user_version").fetchone()[0] == 1
    db_.close()
    with pytest.raises(ExecutionError, match="cannot open the run log"):
        SqliteRunLog(tmp_path / "none" / "runs.db", read_only=True)
    assert not (tmp_path / "none").exists()


_READ_AS_OTHER = """
import sys
from plansmith.execution import SqliteRunLog
log = SqliteRunLog(sys.argv[1], read_only=True)
print(",".join(e.type for e in log.events("r")), [r.run_id for r in log.runs()])
log.close()
"""


#: runs a command without the capabilities that let root ignore file permissions
AS_NON_ROOT = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


@pytest.mark.skipif(
    ROOT and not Path("/usr/bin/setpriv").exists(), reason="root ignores file permissions"
)
@pytest.mark.parametrize("wal_left", [False, True], ids=["closed", "wal-and-shm-left"])
def test_a_read_only_log_reads_a_home_its_process_may_not_write(
    tmp_path: Path, wal_left: bool
) -> None:
    home = tmp_path / "home"
    _finished_run(home)
    db = home / "runs.db"
    keep = None
    if wal_left:  # a writer still has it open: -wal and -shm are there
        keep = sqlite3.connect(db, isolation_level=None)
        keep.execute("PRAGMA journal_mode=WAL")
        keep.execute("INSERT INTO runs VALUES ('s', '2026-01-02', '{}')")
        assert db.with_name("runs.db-wal").stat().st_size > 0
    paths = [home, *home.rglob("*")]
    for p in paths:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        done = subprocess.run(
            [*(AS_NON_ROOT if ROOT else []), sys.executable, "-c", _READ_AS_OTHER, str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        for p in paths:
            p.chmod(0o755 if p.is_dir() else 0o644)
        if keep is not None:
            keep.close()
    assert done.returncode == 0, done.stderr
    expected = "['r', 's']" if wal_left else "['r']"
    assert done.stdout.strip() == f"PlanReady,RunFinished {expected}"


# -- PostgreSQL: the same checks on the other durable store ----------------------------


def test_a_damaged_postgres_row_or_blob_is_an_execution_error_at_the_database() -> None:
    import psycopg

    from _pg_server import fresh_schema
    from plansmith.execution import PostgresRunLog

    with fresh_schema() as url:
        log = PostgresRunLog(url)
        try:
            log.create_run("r", "2026-01-01T00:00:00.000Z", {})
            emitter = Emitter(log, "r")
            for k in range(3):
                emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"))
            ref = log.put_blob(b'{"big": 1}')
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("UPDATE events SET body = '{bad' WHERE run_id = 'r' AND seq = 2")
                conn.execute("UPDATE blobs SET data = %s WHERE ref = %s", (b'{"big": 2}', ref))
            with pytest.raises(ExecutionError) as row:
                log.events("r")
            assert row.value.message.startswith("event 2 of run r cannot be read: its body")
            assert row.value.hint is not None
            with pytest.raises(ExecutionError, match="is damaged") as blob:
                log.get_blob(ref)
            assert blob.value.hint is not None
        finally:
            log.close()
