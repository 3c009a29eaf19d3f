"""Versioned migrations of the run log (SQLite ``user_version``, PostgreSQL
``schema_version``), ``open_run_log``, and errors that never show a password."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import psycopg
import pytest

from _pg_server import fresh_schema, server_url
from plansmith.errors import ExecutionError, InputError
from plansmith.execution import (
    SCHEMA_VERSION,
    PlanReady,
    PostgresRunLog,
    SqliteRunLog,
    open_run_log,
    redact_url,
)
from plansmith.execution._migrations import migrate_postgres

OLD_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created TEXT NOT NULL, inputs TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
"""  # what every SQLite log had before migrations were versioned


def user_version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()


def pg_versions(url: str) -> list[tuple[int, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, applied::text FROM schema_version ORDER BY 1")
        return [(int(v), str(t)) for v, t in rows.fetchall()]


def test_a_sqlite_log_of_an_older_plansmith_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    db = sqlite3.connect(path)
    db.executescript(OLD_SQLITE_SCHEMA)
    db.execute("INSERT INTO runs VALUES ('old', 't', '{}')")
    db.commit()
    db.close()
    log = SqliteRunLog(path)
    assert [r.run_id for r in log.runs()] == ["old"]
    assert log.acquire("old", "A", 60) is not None  # the leases table came with version 2
    log.close()
    assert user_version(path) == SCHEMA_VERSION == 2
    SqliteRunLog(path).close()  # reopening an up-to-date file changes nothing
    assert user_version(path) == SCHEMA_VERSION


def test_a_sqlite_log_newer_than_this_plansmith_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    SqliteRunLog(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(ExecutionError, match="schema version 3") as caught:
        SqliteRunLog(path)
    assert caught.value.hint == "upgrade plansmith, or use another run log"


def test_postgres_migrations_make_a_fresh_schema_and_reopening_changes_nothing() -> None:
    with fresh_schema() as url:
        PostgresRunLog(url).close()
        first = pg_versions(url)
        assert [v for v, _ in first] == [1, 2]
        PostgresRunLog(url).close()
        assert pg_versions(url) == first


def test_a_postgres_log_at_version_1_is_upgraded_and_keeps_its_runs() -> None:
    with fresh_schema() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            assert migrate_postgres(conn, target=1) == 0
            conn.execute("INSERT INTO runs VALUES ('old', 't', '{}')")
        assert [v for v, _ in pg_versions(url)] == [1]
        log = PostgresRunLog(url)
        assert [r.run_id for r in log.runs()] == ["old"]
        assert log.acquire("old", "A", 60) is not None
        log.close()
        assert [v for v, _ in pg_versions(url)] == [1, 2]


def test_two_engines_opening_a_fresh_postgres_schema_at_once_migrate_it_once() -> None:
    with fresh_schema() as url:
        barrier = threading.Barrier(4)
        errors: list[BaseException] = []

        def open_one() -> None:
            try:
                barrier.wait(timeout=30)
                PostgresRunLog(url).close()
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=open_one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        assert [v for v, _ in pg_versions(url)] == [1, 2]


def test_a_postgres_schema_newer_than_this_plansmith_is_refused() -> None:
    with fresh_schema() as url:
        PostgresRunLog(url).close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_version (version, name) VALUES (99, 'future')")
        with pytest.raises(ExecutionError, match="schema version 99"):
            PostgresRunLog(url)


def test_open_run_log_picks_the_store_from_the_spec(tmp_path: Path) -> None:
    default = open_run_log(None, tmp_path)
    assert isinstance(default, SqliteRunLog)
    assert default.path == tmp_path / "runs.db"
    default.close()
    named = open_run_log(str(tmp_path / "other.db"), tmp_path)
    assert isinstance(named, SqliteRunLog)
    assert named.path == tmp_path / "other.db"
    named.close()
    with fresh_schema() as url:
        for run_id, spec in (("a", url), ("b", url.replace("postgresql://", "postgres://", 1))):
            log = open_run_log(spec, tmp_path)
            assert isinstance(log, PostgresRunLog)
            log.create_run(run_id, "t", {})
            log.append(PlanReady(run_id=run_id, seq=1, time="t", plan_hash="h"))
            log.close()
        both = open_run_log(url, tmp_path)
        assert [r.run_id for r in both.runs()] == ["a", "b"]
        both.close()
    with pytest.raises(InputError, match="unknown run log scheme 'mysql'") as caught:
        open_run_log("mysql://u:hunter2@host/db", tmp_path)
    assert "hunter2" not in str(caught.value)


def test_a_log_to_read_must_be_there_and_is_not_made(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no run log at") as caught:
        open_run_log(None, tmp_path / "home", existing=True)
    assert str(tmp_path / "home" / "runs.db") in str(caught.value)
    assert not (tmp_path / "home").exists()
    with pytest.raises(InputError, match="unknown run log scheme"):  # the spec, first
        open_run_log("mysql://u@host/db", tmp_path, existing=True)
    open_run_log(None, tmp_path).close()  # made by a writer
    found = open_run_log(None, tmp_path, existing=True)
    assert isinstance(found, SqliteRunLog)
    found.close()


def test_a_bad_url_or_an_unreachable_server_is_a_typed_error_without_the_password(
    tmp_path: Path,
) -> None:
    with pytest.raises(InputError) as bad:
        open_run_log("postgresql://plansmith:s3cret-pw@127.0.0.1:notaport/db", tmp_path)
    with pytest.raises(InputError) as bad_host:  # the driver's message quotes the whole URL
        open_run_log("postgresql://plansmith:s3cret-pw@[::1/db", tmp_path)
    with pytest.raises(ExecutionError) as unreachable:  # port 9 (discard): nothing listens
        open_run_log("postgresql://plansmith:s3cret-pw@127.0.0.1:9/db?connect_timeout=5", tmp_path)
    base = server_url()
    wrong = base.replace(":plansmith@", ":s3cret-pw@", 1)
    assert wrong != base
    with pytest.raises(ExecutionError) as refused:  # the server answers: wrong password
        open_run_log(wrong, tmp_path)
    for caught in (bad, bad_host, unreachable, refused):
        text = str(caught.value)
        assert "s3cret-pw" not in text
        assert caught.value.hint
    assert "***" in str(unreachable.value)
    assert "password authentication failed" in str(refused.value)


def test_redact_url_hides_the_password_wherever_it_is() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgresql://u@h/db?password=pw&x=1") == (
        "postgresql://u@h/db?password=%2A%2A%2A&x=1"
    )
    assert redact_url("postgresql://h/db") == "postgresql://h/db"
