"""Run leases: exactly one engine drives a run at a time.

An engine *acquires* a run's lease (owner: its unique engine id, with an expiry),
*renews* it while the run is live and *releases* it when the run ends. Another engine
can take the run over only once the lease has expired; ``expired_unfinished`` lists
those runs. Expiry uses the database's clock (PostgreSQL ``now()``, SQLite's
``julianday('now')``), so engines on different machines agree on it.

Each operation is one atomic statement: an upsert that replaces the row only when it
has expired or is the caller's own. ``SqliteLeases`` and ``MemoryLeases`` are mixed
into the SQLite and in-memory run logs; the PostgreSQL log has its own (``_log_pg``).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from plansmith.execution._events import Event

__all__ = ["Lease", "RunLeases", "SqliteLeases", "MemoryLeases", "new_engine_id", "owner_gone"]


@dataclass(frozen=True, slots=True)
class Lease:
    """Who drives ``run_id``, until when (UTC)."""

    run_id: str
    owner: str
    expires: datetime


@runtime_checkable
class RunLeases(Protocol):
    """The lease operations of a run log (see the module docstring)."""

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        """Take or extend the lease unless another owner holds it unexpired (``replacing``:
        also take it from that owner). Returns the lease in force: the caller has it iff
        its ``owner`` is the caller (None: the holder released it meanwhile; ask again)."""
        ...

    def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        """Push the expiry ``ttl`` seconds past now; False when ``owner`` lost the lease."""
        ...

    def release(self, run_id: str, owner: str) -> None:
        """Drop the lease if ``owner`` holds it."""
        ...

    def holder(self, run_id: str) -> Lease | None: ...

    def expired_unfinished(self) -> list[str]:
        """The runs whose lease has expired and whose log has no ``RunFinished``."""
        ...


def new_engine_id() -> str:
    """``HOST:PID:RANDOM``: unique per engine, and says where its process ran."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_gone(owner: str) -> bool:
    """True when ``owner`` is an engine id of this host whose process no longer exists.

    Only then may a person's explicit ``resume`` take a lease before it expires; the
    automatic take-over always waits for the expiry.
    """
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


_NOW = "((julianday('now') - 2440587.5) * 86400.0)"  # SQLite's clock, in epoch seconds


class SqliteLeases:
    """Leases in the ``leases`` table of a SQLite run log (one statement each)."""

    _db: sqlite3.Connection

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        self._db.execute(
            f"INSERT INTO leases VALUES (?, ?, {_NOW} + ?) ON CONFLICT (run_id) DO UPDATE"
            " SET owner = excluded.owner, expires = excluded.expires"
            f" WHERE leases.expires < {_NOW} OR leases.owner IN (excluded.owner, ?)",
            (run_id, owner, ttl, replacing or owner),
        )
        return self.holder(run_id)

    def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        cursor = self._db.execute(
            f"UPDATE leases SET expires = {_NOW} + ? WHERE run_id = ? AND owner = ?",
            (ttl, run_id, owner),
        )
        return cursor.rowcount == 1

    def release(self, run_id: str, owner: str) -> None:
        self._db.execute("DELETE FROM leases WHERE run_id = ? AND owner = ?", (run_id, owner))

    def holder(self, run_id: str) -> Lease | None:
        row = self._db.execute(
            "SELECT owner, expires FROM leases WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else Lease(run_id, row[0], _utc(row[1]))

    def expired_unfinished(self) -> list[str]:
        rows = self._db.execute(
            "SELECT l.run_id FROM leases l JOIN runs r ON r.id = l.run_id"
            f" WHERE l.expires < {_NOW} AND NOT EXISTS (SELECT 1 FROM events e"
            " WHERE e.run_id = l.run_id AND e.type = 'RunFinished') ORDER BY l.expires"
        ).fetchall()
        return [r[0] for r in rows]


class MemoryLeases:
    """Leases of an in-memory run log (the process's clock)."""

    _events: dict[str, list[Event]]

    @property
    def _leases(self) -> dict[str, Lease]:
        table: dict[str, Lease] = self.__dict__.setdefault("_lease_table", {})
        return table

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        now = time.time()
        held = self._leases.get(run_id)
        if held is None or held.expires < _utc(now) or held.owner in (owner, replacing):
            self._leases[run_id] = Lease(run_id, owner, _utc(now + ttl))
        return self._leases[run_id]

    def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        held = self._leases.get(run_id)
        if held is None or held.owner != owner:
            return False
        self._leases[run_id] = Lease(run_id, owner, _utc(time.time() + ttl))
        return True

    def release(self, run_id: str, owner: str) -> None:
        held = self._leases.get(run_id)
        if held is not None and held.owner == owner:
            del self._leases[run_id]

    def holder(self, run_id: str) -> Lease | None:
        return self._leases.get(run_id)

    def expired_unfinished(self) -> list[str]:
        now = _utc(time.time())
        return [
            lease.run_id
            for lease in sorted(self._leases.values(), key=lambda lease: lease.expires)
            if lease.expires < now
            and lease.run_id in self._events
            and not any(e.type == "RunFinished" for e in self._events[lease.run_id])
        ]
