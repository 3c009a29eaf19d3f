"""The run log: events appended write-ahead, in SQLite (WAL) or in memory; blobs by hash.

``SqliteRunLog`` keeps one table of runs and one of events, in WAL mode with
``synchronous=NORMAL`` (a commit survives a killed process without an fsync per
commit). ``append`` buffers; ``flush`` makes what was appended durable by writing it
to each run's append-only journal (``_journal``: one copy into its mapped file), and the
rows reach SQLite behind it, in batches (see ``SqliteRunLog``). Values over
``inline_limit`` bytes go to the content-addressed blob store and the event holds
``{"$blob": "sha256:..."}``.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from plansmith.errors import ExecutionError, Location
from plansmith.execution._blobs import BlobStore, read_only_error
from plansmith.execution._event_fast import event_json
from plansmith.execution._events import Event, event_from_dict
from plansmith.execution._journal import (
    JournalRow,
    JournalWriter,
    journal_line,
    journal_path,
    read_journal,
)
from plansmith.execution._lease import Lease, SqliteLeases
from plansmith.execution._migrations import migrate_sqlite
from plansmith.execution._run_log import MemoryRunLog, RunInfo, RunLog, not_found, run_exists
from plansmith.execution._sqlite_ro import connect_read_only
from plansmith.model import JSONValue

__all__ = ["RunInfo", "RunLog", "MemoryRunLog", "SqliteRunLog", "BlobStore", "DEFAULT_INLINE_LIMIT"]

DEFAULT_INLINE_LIMIT = 16 * 1024


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

    ``flush`` appends the pending events of each run to that run's journal (one copy
    into the file mapped in memory, see ``_journal``): that is the write-ahead record.
    The rows written there are inserted into SQLite behind it, in one transaction, when
    a flush finds at least ``CATCH_UP_ROWS`` of them waiting or ``CATCH_UP_SECONDS``
    passed since the last catch-up, when a run's ``RunFinished`` is flushed, before this
    log reads events, when a run's lease is released, and at ``close``. A journal is
    removed once every row in it is in SQLite and its run has ended (or its lease was
    released, or the log closed); one longer than ``ROTATE_BYTES`` is replaced by an
    empty file after a catch-up (every row in it is in SQLite), so that readers parse
    little of it.

    ``events`` merges a run's journal with its SQLite rows, so another process sees
    everything that is durable. The journal of an engine that was killed is imported
    into SQLite (and removed) by whoever drives the run next: the log that acquires the
    run's lease (``Engine.resume``, take-over), or the one that writes the run's next
    events; the lease guarantees that the engine which wrote it no longer does.

    With ``read_only`` the log only reads (``runs``, ``run``, ``events``, blobs, lease
    holders), a live run's journal included: the database is opened with SQLite's
    ``mode=ro`` (no migration, no PRAGMA that writes), and everything that would write
    (``create_run``, ``append``, ``flush``, ``put_blob``, leases, ``import_journal``)
    raises ``ExecutionError``. See ``connect_read_only`` (``_sqlite_ro``) for a directory
    that may not be written.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        try:
            if read_only:
                self._db = connect_read_only(self.path)
                # refused without a check on the hot path of a writing log
                self.append = self._refuse_append  # type: ignore[method-assign]
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                # fsync the WAL into the database every ~40 MB rather than every ~4 MB
                self._db.execute("PRAGMA wal_autocheckpoint=10000")
                migrate_sqlite(self._db)  # versioned: PRAGMA user_version
        except (sqlite3.Error, OSError) as error:
            raise ExecutionError(
                f"cannot open the run log: {_why(error)}", location=Location(str(self.path))
            ) from None
        self.blobs = BlobStore(self.path.parent / "blobs", read_only=read_only)
        self._rows: Flat = []  # appended, not yet durable
        self._behind: Flat = []  # durable in a journal, not yet in SQLite
        self._ended: set[str] = set()  # runs whose RunFinished is in ``_behind``
        self._journals: dict[str, JournalWriter] = {}  # the runs this log writes
        self._catch_up_at = time.monotonic() + CATCH_UP_SECONDS

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        self._writable()
        try:
            self._db.execute(
                "INSERT INTO runs VALUES (?, ?, ?)", (run_id, created, json.dumps(inputs))
            )
        except sqlite3.IntegrityError:  # the run's id is the key: never overwrite a run
            raise run_exists(run_id) from None

    def append(self, event: Event) -> None:
        # the body is the text of _ENCODE(event.to_dict()), written faster
        self._rows += (event.run_id, event.seq, event.type, event_json(event))

    def _refuse_append(self, event: Event) -> None:
        self._writable()

    def _writable(self) -> None:
        """Raise ``ExecutionError`` when this log is open read-only."""
        if self.read_only:
            raise read_only_error(self.path)

    def journal_path(self, run_id: str) -> Path:
        """Where this log keeps the journal of ``run_id``."""
        return journal_path(self.path, run_id)

    def flush(self) -> None:
        """Make the appended events durable: one append to each run's journal.

        Then insert the journaled rows into SQLite if enough of them wait, or enough
        time passed, or a run ended (checked here: nothing runs in the background).
        An event whose seq is not after its run's last one fails the whole batch. The
        rows of a journal that cannot be opened or written stay appended (a later flush
        writes them: a run's seq has no gap).
        """
        rows = self._rows
        if not rows:
            self._writable()
            return
        self._rows = []
        run_id = rows[0]
        try:
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
        except _UnwrittenError as unwritten:
            self._rows = unwritten.rows + self._rows
            raise unwritten.error from None
        except _NotAfterError as refused:
            raise refused.error from None  # the batch is dropped
        except BaseException:
            self._rows = rows + self._rows
            raise
        behind = self._behind
        behind += rows
        if len(behind) >= 4 * CATCH_UP_ROWS or self._ended or time.monotonic() >= self._catch_up_at:
            self.catch_up()

    def _write_runs(self, rows: Flat) -> None:
        """Append ``rows`` to their runs' journals, one write to each (all checked
        before any is written). A failed write raises ``_UnwrittenError`` with the rows
        of that run and of the runs after it; the runs before it are written, and their
        rows go to ``_behind`` here."""
        lines: dict[str, list[str]] = {}
        flats: dict[str, Flat] = {}
        lasts: dict[str, int] = {}
        values = iter(rows)
        for run_id, seq, kind, body in zip(values, values, values, values, strict=True):
            journal = self._journals.get(run_id) or self._open_journal(run_id)
            last = lasts.get(run_id, journal.last)
            if seq <= last:
                raise _NotAfterError(self._not_after((run_id, seq, kind, body), last))
            lasts[run_id] = seq
            lines.setdefault(run_id, []).append(journal_line(journal.run_json, seq, kind, body))
            flats.setdefault(run_id, []).extend((run_id, seq, kind, body))
        done: list[str] = []
        for run_id, text in lines.items():
            journal = self._journals[run_id]
            try:
                journal.write("".join(text).encode())
            except ExecutionError as error:
                for written in done:
                    self._behind += flats[written]
                self._ended.update(r for r in done if _END in flats[r][2::4])
                rest = [v for r in flats if r not in done for v in flats[r]]
                raise _UnwrittenError(error, rest) from None
            journal.last = lasts[run_id]
            done.append(run_id)
        self._ended.update(r for r in done if _END in flats[r][2::4])

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
        self._writable()
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
        moves its rows into SQLite and removes the journal meanwhile loses no row.

        A row that is not an event of this run at its seq (damaged JSON, an unknown
        type, a field missing or of the wrong type) is an ``ExecutionError`` located at
        the database or the journal it was read from; so is an unreadable journal line
        (see ``read_journal``)."""
        self.run(run_id)
        if not self.read_only:
            self.flush()
            self.catch_up()
        path = self.journal_path(run_id)
        journal = [] if run_id in self._journals else read_journal(path)
        rows = self._read("SELECT seq, body FROM events WHERE run_id = ? ORDER BY seq", (run_id,))
        later = _after(journal, run_id, rows[-1][0] if rows else None)
        events: list[Event] = []
        where = Location(str(self.path))
        for seq, body in rows if not later else [*rows, *((r.seq, r.body) for r in later)]:
            if len(events) == len(rows):
                where = Location(str(path))  # the rows after SQLite's are the journal's
            events.append(decode_event(run_id, seq, body, where))
        return events

    def runs(self) -> list[RunInfo]:
        rows = self._read("SELECT id, created, inputs FROM runs ORDER BY created")
        return [self._info(r) for r in rows]

    def run(self, run_id: str) -> RunInfo:
        rows = self._read("SELECT id, created, inputs FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise not_found(run_id)
        return self._info(rows[0])

    def _info(self, row: tuple[Any, ...]) -> RunInfo:
        return run_info(row, Location(str(self.path)))

    def _read(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of ``query``; an SQLite error is "cannot read the run log"."""
        try:
            return self._db.execute(query, params).fetchall()
        except sqlite3.Error as error:
            raise ExecutionError(
                f"cannot read the run log: {error}",
                location=Location(str(self.path)),
                hint="the file may be damaged, or written by another program; restore it from"
                " a backup",
            ) from None

    # -- leases: the log that takes a run imports a killed engine's journal -------------

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        self._writable()
        lease = super().acquire(run_id, owner, ttl, replacing=replacing)
        if lease is not None and lease.owner == owner:
            self.import_journal(run_id)
        return lease

    def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        self._writable()
        return super().renew(run_id, owner, ttl)

    def release(self, run_id: str, owner: str) -> None:
        """Move the run's journaled rows into SQLite and remove its journal, then drop
        the lease."""
        self._writable()
        try:
            self.flush()
            self.catch_up()
            journal = self._journals.pop(run_id, None)
            if journal is not None:
                journal.remove()
        finally:
            super().release(run_id, owner)

    def expired_unfinished(self) -> list[str]:
        if not self.read_only:
            self.flush()
            self.catch_up()
        return super().expired_unfinished()

    def put_blob(self, data: bytes) -> str:
        return self.blobs.put(data)  # refused by a read-only store

    def get_blob(self, ref: str) -> bytes:
        return self.blobs.get(ref)

    def close(self) -> None:
        """Flush, move every journaled row into SQLite, remove this log's journals."""
        try:
            if not self.read_only:
                self.flush()
                self.catch_up()
            for journal in self._journals.values():
                journal.remove()  # every row is in SQLite
        finally:
            for journal in self._journals.values():
                journal.close()
            self._journals.clear()
            self._db.close()


def _after(journal: list[JournalRow], run_id: str, last: int | None) -> list[JournalRow]:
    """The journal rows that follow seq ``last`` without a gap."""
    rows: list[JournalRow] = []
    for row in journal:
        if row.run_id != run_id or (last is not None and row.seq <= last):
            continue
        if last is not None and row.seq != last + 1:
            break
        rows.append(row)
        last = row.seq
    return rows


_DAMAGED = (
    "the run log is damaged: restore it (runs.db, journal/ and blobs/) from a backup;"
    " until then this run cannot be shown, replayed or resumed"
)


def decode_event(run_id: str, seq: int, body: Any, where: Location) -> Event:
    """The event a row of run ``run_id`` at ``seq`` holds; an ``ExecutionError`` located
    at ``where`` when it is not one (damaged JSON, an unknown type, a field missing or
    of the wrong type, another run's or seq's event)."""
    try:
        event = event_from_dict(json.loads(body))
        if event.seq != seq or event.run_id != run_id:
            raise ValueError(f"it holds event {event.seq} of run {event.run_id}")
    except (ValueError, TypeError, ExecutionError) as error:
        raise _damaged(run_id, seq, where, error) from None
    return event


def run_info(row: tuple[Any, ...], where: Location) -> RunInfo:
    """A run's row (id, created, inputs as JSON text); damaged inputs are an error."""
    try:
        inputs = json.loads(row[2])
        if not isinstance(inputs, dict):
            raise ValueError(f"its inputs are not a JSON object but {type(inputs).__name__}")
    except (ValueError, TypeError) as error:
        raise ExecutionError(
            f"run {row[0]} cannot be read: {error}", location=where, hint=_DAMAGED
        ) from None
    return RunInfo(row[0], row[1], inputs)


def _damaged(run_id: str, seq: int, where: Location, error: Exception) -> ExecutionError:
    why = error.message if isinstance(error, ExecutionError) else str(error)
    if isinstance(error, json.JSONDecodeError):
        why = f"its body is not JSON ({error.msg} at character {error.pos})"
    elif isinstance(error, UnicodeDecodeError | TypeError):
        why = f"its body is not text ({error})"
    return ExecutionError(
        f"event {seq} of run {run_id} cannot be read: {why}", location=where, hint=_DAMAGED
    )


def _why(error: BaseException) -> str:
    return (error.strerror or str(error)) if isinstance(error, OSError) else str(error)


class _NotAfterError(Exception):
    """``flush``: a batch refused for its order (dropped), with the error to raise."""

    def __init__(self, error: ExecutionError) -> None:
        self.error = error


class _UnwrittenError(Exception):
    """``flush``: a journal write failed; ``rows`` were not written."""

    def __init__(self, error: ExecutionError, rows: Flat) -> None:
        self.error = error
        self.rows = rows
