"""Events per second through the run log: append + flush, SQLite vs PostgreSQL, same run.

Usage: .venv/bin/python bench/bench_run_log_pg.py [URL] [N]
URL defaults to $PLANSMITH_TEST_PG_URL or the output of scripts/pg-test-server. Each store
gets N events, flushed one at a time (a chain: one commit per step) and then in batches
of 50; the PostgreSQL tables go to a schema made for the run and dropped after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from plansmith.execution import PlanReady, PostgresRunLog, RunLog, SqliteRunLog


def rate(log: RunLog, run_id: str, n: int, batch: int) -> float:
    log.create_run(run_id, "t", {})
    t0 = time.perf_counter()
    for seq in range(1, n + 1):
        log.append(PlanReady(run_id=run_id, seq=seq, time="t", plan_hash=f"h{seq}"))
        if seq % batch == 0:
            log.flush()
    log.flush()
    return n / (time.perf_counter() - t0)


def main() -> None:
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PLANSMITH_TEST_PG_URL", "")
    if not url:
        script = Path(__file__).parents[1] / "scripts" / "pg-test-server"
        url = subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout
        url = url.strip()
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    schema = "bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = SqliteRunLog(Path(tmp) / "runs.db")
            pg = PostgresRunLog(f"{url}?options=-csearch_path%3D{schema}")
            print(f"{'store':<12}{'batch':>6}{'events/s':>12}")
            for batch in (1, 50):
                for name, log in (("sqlite", sqlite), ("postgresql", pg)):
                    r = rate(log, f"r{batch}", n, batch)
                    print(f"{name:<12}{batch:>6}{r:>12.0f}")
            sqlite.close()
            pg.close()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
