"""Opening the same run log again and again, on each store the log tests run on
(memory, SQLite, PostgreSQL): the body of the ``open_log`` fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from _pg_server import fresh_schema
from plansmith.execution import MemoryRunLog, PostgresRunLog, RunLog, SqliteRunLog

OpenLog = Callable[[], RunLog]


@contextmanager
def log_opener(store: str, tmp_path: Path) -> Iterator[OpenLog]:
    """Each call of the opener opens another connection to the same store ("memory": the
    same object; "sqlite": a file in ``tmp_path``; "postgres": a fresh schema of the test
    server); every log it opened is closed on exit."""
    if store == "memory":
        memory = MemoryRunLog()
        yield lambda: memory
        return
    opened: list[RunLog] = []
    try:
        if store == "sqlite":
            yield lambda: _kept(opened, SqliteRunLog(tmp_path / "runs.db"))
            return
        assert store == "postgres", store
        with fresh_schema() as url:
            yield lambda: _kept(opened, PostgresRunLog(url))
    finally:
        for log in opened:
            log.close()


def _kept(opened: list[RunLog], log: RunLog) -> RunLog:
    opened.append(log)
    return log
