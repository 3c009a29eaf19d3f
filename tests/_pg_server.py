"""A real PostgreSQL server for the tests, and a fresh schema per test.

The server's URL comes from ``PLANSMITH_TEST_PG_URL``, or else from running
``scripts/pg-test-server`` (Debian's postgresql on 127.0.0.1; it needs root). When
neither gives a server that answers, the tests that need one fail under CI (``CI`` is
set) and are skipped elsewhere, with the reason: they never pass silently.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "pg-test-server"

_found: list[str | Exception] = []


def _find_server() -> str:
    url = os.environ.get("PLANSMITH_TEST_PG_URL")
    if not url:
        try:
            done = subprocess.run(
                [str(SCRIPT)], capture_output=True, text=True, timeout=300, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise RuntimeError(f"{SCRIPT.name} could not run: {error}") from None
        if done.returncode != 0:
            raise RuntimeError(f"{SCRIPT.name} failed: {done.stderr.strip()[-500:]}")
        urls = [line for line in done.stdout.split() if line.startswith("postgresql://")]
        if not urls:
            raise RuntimeError(f"{SCRIPT.name} printed no URL: {done.stdout[-500:]!r}")
        url = urls[-1]
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        conn.execute("SELECT 1")
    return url


def server_url() -> str:
    """The test server's URL (found once per session); fail under CI, else skip."""
    if not _found:
        try:
            _found.append(_find_server())
        except Exception as error:  # any reason the server is not there
            _found.append(error)
    found = _found[0]
    if isinstance(found, Exception):
        reason = f"no PostgreSQL server for the tests: {found}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A URL whose tables go to a new schema of the test database, dropped afterwards."""
    import psycopg

    url = server_url()
    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_schema(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
