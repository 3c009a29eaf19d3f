"""What the corpus server does around each call: idempotency and the per-source call log.

Idempotency: a request whose ``_meta`` carries ``io.plansmith/idempotency-key``
gets, for the same tool and key, the result of the first call with that key,
kept in the index database (so a restarted server answers a resumed run the
same way). Calls with one key wait for each other; a failed call keeps nothing.

Call log: one JSON line per answered call, appended to the source's log file,
with the source, tool, arguments, key, whether the result was replayed, the
start and end times (UTC epoch seconds), how many calls of this server were in
flight when it started (itself included), and the outcome. Quotas are checked
from these lines.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["IDEMPOTENCY_META_KEY", "Remembered", "CallLog"]

IDEMPOTENCY_META_KEY = "io.plansmith/idempotency-key"


class Remembered:
    """The stored results of keyed calls, in the index database's ``idempotency`` table."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, slot: tuple[str, str]) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(slot, threading.Lock())

    def run(
        self, tool: str, key: str | None, body: Callable[[], dict[str, Any]]
    ) -> tuple[dict[str, Any], bool]:
        """``body()``, or the stored result of ``(tool, key)``; and whether it was replayed.

        Blocking: call it from a worker thread.
        """
        if not key:
            return body(), False
        with self._lock((tool, key)):
            conn = self._connect()
            try:
                row = conn.execute(
                    "SELECT result FROM idempotency WHERE tool = ? AND key = ?", (tool, key)
                ).fetchone()
                if row is not None:
                    stored: dict[str, Any] = json.loads(row[0])
                    return stored, True
                result = body()
                conn.execute(
                    "INSERT OR REPLACE INTO idempotency VALUES (?, ?, ?)",
                    (tool, key, json.dumps(result, sort_keys=True)),
                )
                return result, False
            finally:
                conn.close()


class CallLog:
    """Appends one JSON line per call to ``path``; counts the calls in flight."""

    def __init__(self, path: Path, source: str) -> None:
        self.path = path
        self.source = source
        self._lock = threading.Lock()
        self.in_flight = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def begin(self) -> tuple[float, int]:
        """Mark a call as started: its start time and the calls in flight, itself included."""
        with self._lock:
            self.in_flight += 1
            return time.time(), self.in_flight

    def end(
        self,
        started: float,
        in_flight: int,
        *,
        tool: str,
        arguments: dict[str, Any],
        key: str | None,
        replayed: bool,
        outcome: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Write the call's line and mark it finished."""
        finished = time.time()
        record = {
            "source": self.source,
            "tool": tool,
            "arguments": arguments,
            "key": key,
            "replayed": replayed,
            "started": round(started, 6),
            "finished": round(finished, 6),
            "duration_ms": round((finished - started) * 1000, 3),
            "in_flight": in_flight,
            "outcome": outcome,
            "pid": os.getpid(),
            **(detail or {}),
        }
        line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            self.in_flight -= 1
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
