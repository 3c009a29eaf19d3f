"""A run log's SQLite database opened to read only (``SqliteRunLog(read_only=True)``)."""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path

from plansmith.errors import ExecutionError, Location
from plansmith.execution._migrations import migrate_sqlite

__all__ = ["connect_read_only"]


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that only reads ``path``, a run log's database.

    ``mode=ro`` reads a WAL database, the rows of a live writer's WAL included, when its
    ``-shm`` file exists or can be made. In a directory this process may not write,
    with no ``-wal`` file (or an empty one: every row is in the database), the database
    is read as ``immutable=1`` (SQLite then takes no locks and ignores the WAL, which
    holds nothing). A non-empty ``-wal`` without its ``-shm`` in such a directory cannot
    be read without losing its rows: an ``ExecutionError``. A schema newer than this
    code is refused as ``migrate_sqlite`` refuses it; nothing is migrated.
    """
    if not path.is_file():
        raise FileNotFoundError(2, f"no such file: {path}")
    uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?mode=ro"
    try:
        return _checked(uri)
    except sqlite3.OperationalError:  # no -shm, and none can be made here
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise ExecutionError(
                "cannot read the run log read-only: its write-ahead log"
                f" ({wal.name}) has rows, and SQLite cannot make {path.name}-shm here",
                location=Location(str(path)),
                hint="open it once where the directory may be written (any plansmith"
                " command that writes), or copy the directory and read the copy",
            ) from None
    return _checked(uri + "&immutable=1")


def _checked(uri: str) -> sqlite3.Connection:
    """A connection to ``uri`` whose schema version was read (see ``migrate_sqlite``)."""
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        migrate_sqlite(db, target=0)  # reads the version: refuses a newer one, writes nothing
    except BaseException:
        db.close()
        raise
    return db
