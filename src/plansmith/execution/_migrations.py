"""Versioned schema migrations of the run log, for SQLite and PostgreSQL.

``MIGRATIONS`` is the ordered list of steps; a database records the last one applied
(SQLite: ``PRAGMA user_version``; PostgreSQL: a ``schema_version`` table with one row
per step). Opening a log applies the missing steps in one transaction, so that opening
an up-to-date database changes nothing and two processes opening a fresh one at once
apply each step once. A database newer than this code is refused.

Version 1 is the schema every SQLite log had before versioning (``CREATE ... IF NOT
EXISTS``, so an old file is upgraded in place); version 2 adds the run leases.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plansmith.errors import ExecutionError

if TYPE_CHECKING:
    import psycopg

__all__ = ["Migration", "MIGRATIONS", "SCHEMA_VERSION", "migrate_sqlite", "migrate_postgres"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs, events and blobs",
        (
            "CREATE TABLE IF NOT EXISTS runs"
            " (id TEXT PRIMARY KEY, created TEXT NOT NULL, inputs TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS events (run_id TEXT NOT NULL, seq INTEGER NOT NULL,"
            " type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))",
        ),  # SQLite keeps blobs as files beside the database (BlobStore)
        (
            "CREATE TABLE runs (id TEXT PRIMARY KEY, created TEXT NOT NULL, inputs TEXT NOT NULL)",
            "CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL,"
            " type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))",
            "CREATE TABLE blobs (ref TEXT PRIMARY KEY, data BYTEA NOT NULL)",
        ),
    ),
    Migration(
        2,
        "run leases",
        (
            "CREATE TABLE leases (run_id TEXT PRIMARY KEY, owner TEXT NOT NULL,"
            " expires REAL NOT NULL)",  # seconds since the epoch, from SQLite's clock
        ),
        (
            "CREATE TABLE leases (run_id TEXT PRIMARY KEY, owner TEXT NOT NULL,"
            " expires TIMESTAMPTZ NOT NULL)",
        ),
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version


def _newer(found: int, where: str) -> ExecutionError:
    return ExecutionError(
        f"the run log {where} has schema version {found}; this plansmith knows"
        f" versions up to {SCHEMA_VERSION}",
        hint="upgrade plansmith, or use another run log",
    )


def migrate_sqlite(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring ``db`` (in autocommit mode) to version ``target``; return the version it had."""
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if found >= target:
        if found > SCHEMA_VERSION:
            raise _newer(found, "file")
        return found
    db.execute("BEGIN IMMEDIATE")  # the write lock, then read the version again
    try:
        found = int(db.execute("PRAGMA user_version").fetchone()[0])
        for step in MIGRATIONS:
            if found < step.version <= target:
                for statement in step.sqlite:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {step.version:d}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return found


def migrate_postgres(conn: psycopg.Connection[Any], target: int = SCHEMA_VERSION) -> int:
    """Bring the current schema of ``conn`` (autocommit) to ``target``; return the version
    it had. An advisory lock per schema serialises processes that open it at once."""
    with conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('plansmith.schema.' || current_schema()))"
        )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL, applied TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        found = int(row[0]) if row else 0
        if found > SCHEMA_VERSION:
            raise _newer(found, "database")
        for step in MIGRATIONS:
            if found < step.version <= target:
                for statement in step.postgres:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, name) VALUES (%s, %s)",
                    (step.version, step.name),
                )
    return found
