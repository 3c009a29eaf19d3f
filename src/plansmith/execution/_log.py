"""The run log: events appended write-ahead, in SQLite (WAL) or in memory; blobs by hash.

``SqliteRunLog`` keeps one table of runs and one of events. WAL mode with
``synchronous=NORMAL`` makes each commit survive a killed process (kill -9)
without an fsync per commit (the WAL is synced into the database at
checkpoints). ``append`` buffers; ``flush`` commits what was appended in one
transaction. Values over ``inline_limit`` bytes go to the
content-addressed blob store and the event holds ``{"$blob": "sha256:..."}``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from plansmith.errors import ExecutionError, Location, RunNotFoundError
from plansmith.execution._event_fast import event_json
from plansmith.execution._events import Event, event_from_dict
from plansmith.execution._lease import MemoryLeases, SqliteLeases
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
        try:
            return (self.root / digest[:2] / digest[2:]).read_bytes()
        except OSError:
            raise ExecutionError(f"blob {ref} is missing from {self.root}") from None


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # made once, not per event
_INSERT_MAX = 200  # rows per statement (SQLite allows 32766 parameters)


@functools.lru_cache(maxsize=_INSERT_MAX)
def _insert_sql(rows: int) -> str:
    return "INSERT INTO events VALUES " + ", ".join(["(?, ?, ?, ?)"] * rows)


class SqliteRunLog(SqliteLeases):
    """The durable run log: SQLite in WAL mode, with blobs in ``DIR/blobs``."""

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
        self._rows: list[tuple[str, int, str, str]] = []

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?)", (run_id, created, json.dumps(inputs))
        )

    def append(self, event: Event) -> None:
        body = event_json(event)  # the text of _ENCODE(event.to_dict()), written faster
        self._rows.append((event.run_id, event.seq, event.type, body))

    def flush(self) -> None:
        """Write the appended events in one transaction (one commit per step in a chain).

        One INSERT statement of all the rows, in autocommit mode: SQLite makes a
        single statement its own transaction, so there is no BEGIN and COMMIT to run.
        """
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        try:
            if len(rows) <= _INSERT_MAX:
                self._db.execute(_insert_sql(len(rows)), [v for row in rows for v in row])
            else:
                with self._db:  # one transaction for many statements
                    self._db.execute("BEGIN")
                    self._db.executemany(_insert_sql(1), rows)
        except sqlite3.Error as error:
            raise ExecutionError(
                f"cannot write the run log: {error}", location=Location(str(self.path))
            ) from None

    def events(self, run_id: str) -> list[Event]:
        self.run(run_id)
        self.flush()
        rows = self._db.execute(
            "SELECT body FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        return [event_from_dict(cast(dict[str, JSONValue], json.loads(r[0]))) for r in rows]

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

    def put_blob(self, data: bytes) -> str:
        return self.blobs.put(data)

    def get_blob(self, ref: str) -> bytes:
        return self.blobs.get(ref)

    def close(self) -> None:
        self.flush()
        self._db.close()
