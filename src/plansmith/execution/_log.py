"""The run log: events appended write-ahead, in SQLite (WAL) or in memory; blobs by hash.

``SqliteRunLog`` keeps one table of runs and one of events, in WAL mode with
``synchronous=NORMAL`` (a commit survives a killed process without an fsync per
commit). ``append`` buffers; ``flush`` makes what was appended durable by writing it
to each run's append-only journal (``_journal``) with one ``os.write``, and the rows
reach SQLite behind it, in batches (see ``SqliteRunLog``). Values over
``inline_limit`` bytes go to the content-addressed blob store and the event holds
``{"$blob": "sha256:..."}``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from plansmith.errors import ExecutionError, Location, RunNotFoundError
from plansmith.execution._event_fast import event_json
from plansmith.execution._events import Event, event_from_dict
from plansmith.execution._journal import (
    JournalRow,
    JournalWriter,
    journal_line,
    journal_path,
    read_journal,
)
from plansmith.execution._lease import Lease, MemoryLeases, SqliteLeases
from plansmith.execution._migrations import migrate_sqlite
from plansmith.model import JSONValue

__all__ = ["RunInfo", "RunLog", "MemoryRunLog", "SqliteRunLog", "BlobStore", "DEFAULT_INLINE_LIMIT"]

DEFAULT_INLINE_LIMIT = 16 * 1024


@dataclass(frozen=True, slots=True)
class RunInfo:
    run_id: str
    created: str
    inputs: dict[str, JSONValue]


class RunLog(Protocol):
    """Where events go; appended events are durable once ``flush`` returns."""

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None: ...
    def append(self, event: Event) -> None: ...
    def flush(self) -> None: ...
    def events(self, run_id: str) -> list[Event]: ...
    def runs(self) -> list[RunInfo]: ...
    def run(self, run_id: str) -> RunInfo: ...
    def put_blob(self, data: bytes) -> str: ...
    def get_blob(self, ref: str) -> bytes: ...
    def close(self) -> None: ...


def _not_found(run_id: str) -> RunNotFoundError:
    return RunNotFoundError(
        f"no run {run_id!r} in the run log", hint="list runs with `plansmith runs`"
    )


class MemoryRunLog(MemoryLeases):
    """A run log that keeps everything in memory (the durable log switched off)."""

    def __init__(self) -> None:
        self._runs: dict[str, RunInfo] = {}
        self._events: dict[str, list[Event]] = {}
        self._blobs: dict[str, bytes] = {}

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        self._runs[run_id] = RunInfo(run_id, created, inputs)
        self._events.setdefault(run_id, [])

    def append(self, event: Event) -> None:
        self._events.setdefault(event.run_id, []).append(event)

    def flush(self) -> None:
        return None

    def events(self, run_id: str) -> list[Event]:
        if run_id not in self._events:
            raise _not_found(run_id)
        return list(self._events[run_id])

    def runs(self) -> list[RunInfo]:
        return list(self._runs.values())

    def run(self, run_id: str) -> RunInfo:
        if run_id not in self._runs:
            raise _not_found(run_id)
        return self._runs[run_id]

    def put_blob(self, data: bytes) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        self._blobs[ref] = data
        return ref

    def get_blob(self, ref: str) -> bytes:
        return self._blobs[ref]

    def close(self) -> None:
        return None


class BlobStore:
    """Content-addressed files: ``ROOT/ab/cdef...`` named by the sha256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / digest[:2] / digest[2:]
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return f"sha256:{digest}"

    def get(self, ref: str) -> bytes:
        digest = ref.removeprefix("sha256:")
        path = self.root / digest[:2] / digest[2:]
        try:
            return path.read_bytes()
        except OSError:
            raise ExecutionError(
                f"blob {ref} is missing from {self.root}",
                location=Location(str(path)),
                hint="the blob store keeps the values too large for an event; restore the"
                " file from a backup of the run log's home",
            ) from None


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # made once, not per event
_INSERT_MAX = 256  # rows per statement (SQLite allows 32766 parameters)
CATCH_UP_ROWS = 1024  # journaled rows that make ``flush`` insert them into SQLite ...
CATCH_UP_SECONDS = 0.25  # ... or the time since the last catch-up that does
ROTATE_BYTES = 256 * 1024  # a catch-up starts a new journal file past this size
_END = "RunFinished"  # a run's terminal event: its rows go to SQLite at once


@functools.lru_cache(maxsize=_INSERT_MAX)
def _insert_sql(rows: int, verb: str = "INSERT") -> str:
    return f"{verb} INTO events VALUES " + ", ".join(["(?, ?, ?, ?)"] * rows)


Row = tuple[str, int, str, str]  # run_id, seq, type, body
#: rows laid end to end, four values a row (run_id, seq, type, body): no tuple a row is
#: kept, and the list is the parameters of the INSERT as it is
Flat = list[Any]


class SqliteRunLog(SqliteLeases):
    """The durable run log: SQLite in WAL mode, a journal per running run in
    ``DIR/journal``, and blobs in ``DIR/blobs``.

    ``flush`` appends the pending events of each run to that run's journal (one
    ``os.write``): that is the write-ahead record. The rows written there are inserted
    into SQLite behind it, in one transaction, when a flush finds at least
    ``CATCH_UP_ROWS`` of them waiting or ``CATCH_UP_SECONDS`` passed since the last
    catch-up, when a run's ``RunFinished`` is flushed, before this log reads events,
    when a run's lease is released, and at ``close``. A journal is removed once every
    row in it is in SQLite and its run has ended (or its lease was released, or the
    log closed); one longer than ``ROTATE_BYTES`` is replaced by an empty file after a
    catch-up (every row in it is in SQLite), so that readers parse little of it.

    ``events`` merges a run's journal with its SQLite rows, so another process sees
    everything that is durable. The journal of an engine that was killed is imported
    into SQLite (and removed) by whoever drives the run next: the log that acquires the
    run's lease (``Engine.resume``, take-over), or the one that writes the run's next
    events; the lease guarantees that the engine which wrote it no longer does.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # fsync the WAL into the database every ~40 MB rather than every ~4 MB
            self._db.execute("PRAGMA wal_autocheckpoint=10000")
            migrate_sqlite(self._db)  # versioned: PRAGMA user_version
        except sqlite3.Error as error:
            raise ExecutionError(
                f"cannot open the run log: {error}", location=Location(str(self.path))
            ) from None
        self.blobs = BlobStore(self.path.parent / "blobs")
        self._rows: Flat = []  # appended, not yet durable
        self._behind: Flat = []  # durable in a journal, not yet in SQLite
        self._ended: set[str] = set()  # runs whose RunFinished is in ``_behind``
        self._journals: dict[str, JournalWriter] = {}  # the runs this log writes
        self._catch_up_at = time.monotonic() + CATCH_UP_SECONDS

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?)", (run_id, created, json.dumps(inputs))
        )

    def append(self, event: Event) -> None:
        # the body is the text of _ENCODE(event.to_dict()), written faster
        self._rows += (event.run_id, event.seq, event.type, event_json(event))

    def journal_path(self, run_id: str) -> Path:
        """Where this log keeps the journal of ``run_id``."""
        return journal_path(self.path, run_id)

    def flush(self) -> None:
        """Make the appended events durable: one append to each run's journal.

        Then insert the journaled rows into SQLite if enough of them wait, or enough
        time passed, or a run ended (checked here: nothing runs in the background).
        An event whose seq is not after its run's last one fails the whole batch.
        """
        rows = self._rows
        if not rows:
            return
        self._rows = []
        run_id = rows[0]
        journal = self._journals.get(run_id) or self._open_journal(run_id)
        if (  # a step's end and the next one's start, which a chain flushes once a step
            len(rows) == 8
            and rows[4] == run_id
            and journal.last < rows[1] < rows[5]
            and rows[2] != _END
            and rows[6] != _END
        ):
            head = journal.head  # journal_line, written out here: this is the hot path
            journal.write(
                f'{head}{rows[1]},"type":"{rows[2]}","body":{rows[3]}}}\n'
                f'{head}{rows[5]},"type":"{rows[6]}","body":{rows[7]}}}\n'.encode()
            )
            journal.last = rows[5]
        else:
            self._write_runs(rows)
        behind = self._behind
        behind += rows
        if len(behind) >= 4 * CATCH_UP_ROWS or self._ended or time.monotonic() >= self._catch_up_at:
            self.catch_up()

    def _write_runs(self, rows: Flat) -> None:
        """Append ``rows`` to their runs' journals, one write to each (all checked
        before any is written)."""
        lines: dict[str, list[str]] = {}
        lasts: dict[str, int] = {}
        ended = []
        values = iter(rows)
        for run_id, seq, kind, body in zip(values, values, values, values, strict=True):
            journal = self._journals.get(run_id) or self._open_journal(run_id)
            last = lasts.get(run_id, journal.last)
            if seq <= last:
                raise self._not_after((run_id, seq, kind, body), last)
            lasts[run_id] = seq
            lines.setdefault(run_id, []).append(journal_line(journal.run_json, seq, kind, body))
            if kind == _END:
                ended.append(run_id)
        for run_id, text in lines.items():
            journal = self._journals[run_id]
            journal.write("".join(text).encode())
            journal.last = lasts[run_id]
        self._ended.update(ended)

    def _not_after(self, row: Row, last: int) -> ExecutionError:
        return ExecutionError(
            f"cannot write the run log: event {row[1]} ({row[2]}) of run {row[0]} is not"
            f" after event {last}; none of its batch was written",
            location=Location(str(self.journal_path(row[0]))),
            hint="two engines may be driving this run; only one may",
        )

    def _open_journal(self, run_id: str) -> JournalWriter:
        """Start writing ``run_id``'s journal: this log drives the run now, so a journal
        left there by an engine that was killed is imported first."""
        self.import_journal(run_id)
        row = self._db.execute("SELECT max(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()
        path = self.journal_path(run_id)
        journal = self._journals[run_id] = JournalWriter(path, run_id, last=row[0] or 0)
        return journal

    def catch_up(self) -> None:
        """Insert every journaled row into SQLite (one transaction), then remove the
        journals of the runs that ended."""
        self._catch_up_at = time.monotonic() + CATCH_UP_SECONDS
        values = self._behind
        if not values:
            return
        self._insert(values, "INSERT")  # not OR IGNORE: two engines on one run must fail
        self._behind = []
        if self._ended:
            ended, self._ended = self._ended, set()
            for run_id in ended:
                journal = self._journals.pop(run_id, None)
                if journal is not None:
                    journal.remove()
        for journal in self._journals.values():
            if journal.size > ROTATE_BYTES:  # all in SQLite: keep what readers parse short
                journal.rotate()

    def _insert(self, values: Flat, verb: str) -> None:
        """Insert the rows of ``values`` (four values a row) in one transaction."""
        most = 4 * _INSERT_MAX
        try:
            if len(values) <= most:
                self._db.execute(_insert_sql(len(values) // 4, verb), values)
            else:
                with self._db:  # one transaction for many statements
                    self._db.execute("BEGIN")
                    for at in range(0, len(values), most):
                        part = values[at : at + most]
                        self._db.execute(_insert_sql(len(part) // 4, verb), part)
        except sqlite3.Error as error:
            raise ExecutionError(
                f"cannot write the run log: {error}", location=Location(str(self.path))
            ) from None

    def import_journal(self, run_id: str) -> int:
        """Insert the rows of a journal that another (killed) engine left for ``run_id``
        and remove it; the number of rows SQLite did not have yet. Only for the log that
        drives the run now (see the class docstring); a journal this log is writing is
        left alone."""
        if run_id in self._journals:
            return 0
        path = self.journal_path(run_id)
        rows = [r for r in read_journal(path) if r.run_id == run_id]
        before = self._db.total_changes
        if rows:
            self._insert([v for row in rows for v in row], "INSERT OR IGNORE")
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise ExecutionError(
                f"cannot remove the run journal: {error.strerror or error}",
                location=Location(str(path)),
            ) from None
        return self._db.total_changes - before

    def events(self, run_id: str) -> list[Event]:
        """The run's events: SQLite's rows, then the journal's rows after them (another
        process may be writing the run). The journal is read first: a writer that
        moves its rows into SQLite and removes the journal meanwhile loses no row."""
        self.run(run_id)
        self.flush()
        self.catch_up()
        journal = [] if run_id in self._journals else read_journal(self.journal_path(run_id))
        rows = self._db.execute(
            "SELECT seq, body FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        bodies = [r[1] for r in rows]
        bodies += _after(journal, run_id, rows[-1][0] if rows else None)
        return [event_from_dict(cast(dict[str, JSONValue], json.loads(b))) for b in bodies]

    def runs(self) -> list[RunInfo]:
        rows = self._db.execute("SELECT id, created, inputs FROM runs ORDER BY created").fetchall()
        return [RunInfo(r[0], r[1], json.loads(r[2])) for r in rows]

    def run(self, run_id: str) -> RunInfo:
        row = self._db.execute(
            "SELECT id, created, inputs FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise _not_found(run_id)
        return RunInfo(row[0], row[1], json.loads(row[2]))

    # -- leases: the log that takes a run imports a killed engine's journal -------------

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        lease = super().acquire(run_id, owner, ttl, replacing=replacing)
        if lease is not None and lease.owner == owner:
            self.import_journal(run_id)
        return lease

    def release(self, run_id: str, owner: str) -> None:
        """Move the run's journaled rows into SQLite and remove its journal, then drop
        the lease."""
        try:
            self.flush()
            self.catch_up()
            journal = self._journals.pop(run_id, None)
            if journal is not None:
                journal.remove()
        finally:
            super().release(run_id, owner)

    def expired_unfinished(self) -> list[str]:
        self.flush()
        self.catch_up()
        return super().expired_unfinished()

    def put_blob(self, data: bytes) -> str:
        return self.blobs.put(data)

    def get_blob(self, ref: str) -> bytes:
        return self.blobs.get(ref)

    def close(self) -> None:
        """Flush, move every journaled row into SQLite, remove this log's journals."""
        try:
            self.flush()
            self.catch_up()
            for journal in self._journals.values():
                journal.remove()  # every row is in SQLite
        finally:
            for journal in self._journals.values():
                journal.close()
            self._journals.clear()
            self._db.close()


def _after(journal: list[JournalRow], run_id: str, last: int | None) -> list[str]:
    """The bodies of the journal rows that follow seq ``last`` without a gap."""
    bodies: list[str] = []
    for row in journal:
        if row.run_id != run_id or (last is not None and row.seq <= last):
            continue
        if last is not None and row.seq != last + 1:
            break
        bodies.append(row.body)
        last = row.seq
    return bodies
