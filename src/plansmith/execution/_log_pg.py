"""The run log in PostgreSQL, shared by several engines; and ``open_run_log``.

``PostgresRunLog`` has the SQLite log's tables (runs, events) plus ``blobs`` (SQLite
keeps blobs as files) and ``leases``; ``_migrations`` creates and upgrades them.
``append`` buffers; ``flush`` commits the buffered events in one transaction, and
PostgreSQL's commit (``synchronous_commit`` on, the default) makes them durable before
``flush`` returns: the write-ahead guarantee of the SQLite log.

Leases (``_lease``) use the server's ``now()``. A run whose lease this log acquired is
*fenced*: ``flush`` checks, in the same transaction, that the lease still belongs to
its owner (``SELECT ... FOR SHARE``, which also holds off a take-over until the commit),
so an engine that stalled past its expiry cannot write into a run another engine took
over; its flush raises ``RunLeasedError`` instead.

The URL may name a schema with libpq's options, e.g.
``postgresql://u:p@host/db?options=-csearch_path%3Dplansmith``. Passwords never reach a
message: errors show the URL with the password replaced by ``***``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from plansmith.errors import ExecutionError, InputError, Location, RunLeasedError
from plansmith.execution._events import Event
from plansmith.execution._lease import Lease
from plansmith.execution._log import SqliteRunLog, decode_event, run_info
from plansmith.execution._migrations import migrate_postgres
from plansmith.execution._run_log import RunInfo, RunLog, not_found, run_exists
from plansmith.model import JSONValue

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRunLog", "open_run_log", "redact_url", "is_postgres_url"]

_SCHEMES = ("postgresql://", "postgres://")
_INSERT_MAX = 200  # rows per INSERT statement
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def is_postgres_url(spec: str | Path) -> bool:
    return isinstance(spec, str) and spec.startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` with its password (in the authority or a ``password=`` parameter) as ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            auth, _, host = netloc.rpartition("@")
            if ":" in auth:
                netloc = f"{auth.partition(':')[0]}:***@{host}"
        query = parts.query
        if "password" in query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, "***" if k == "password" else v) for k, v in pairs])
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "<a PostgreSQL URL that cannot be parsed>"


def open_run_log(
    spec: str | Path | None, home: Path, *, existing: bool = False, read_only: bool = False
) -> RunLog:
    """The run log ``spec`` names: a ``postgresql://`` (or ``postgres://``) URL, a SQLite
    file path, or (None or empty) ``home/runs.db``. With ``existing`` (for commands that
    continue or read runs), a SQLite file that is not there is an ``InputError``, not a
    new, empty log; with ``read_only`` (commands that only read runs), a SQLite log is
    opened without writing to it, so that a home this process may not write is read."""
    if is_postgres_url(spec or ""):
        return PostgresRunLog(str(spec))
    if isinstance(spec, str) and "://" in spec:
        scheme = spec.partition("://")[0]
        raise InputError(
            f"unknown run log scheme {scheme!r}",
            location=Location(redact_url(spec)),
            hint="give a file path for SQLite or a postgresql://USER:PASSWORD@HOST/DB URL",
        )
    path = Path(spec) if spec else home / "runs.db"
    if existing and not path.is_file():
        raise InputError(
            f"no run log at {path}",
            hint="runs are kept where `plansmith run` kept them: pass its --home"
            " (or PLANSMITH_HOME), or --log",
        )
    return SqliteRunLog(path, read_only=read_only)


def _psycopg() -> Any:
    try:
        import psycopg  # noqa: PLC0415 - an optional extra, imported when used
    except ImportError:
        raise ExecutionError(
            "a PostgreSQL run log needs psycopg, which is not installed",
            hint="pip install 'plansmith[postgres]'",
        ) from None
    return psycopg


@functools.lru_cache(maxsize=_INSERT_MAX)
def _insert_sql(rows: int) -> str:
    return "INSERT INTO events VALUES " + ", ".join(["(%s, %s, %s, %s)"] * rows)


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


class PostgresRunLog:
    """The durable run log in PostgreSQL; see the module docstring."""

    def __init__(self, url: str, *, connect_timeout: int = 10) -> None:
        pg = _psycopg()
        self.url = redact_url(url)
        self._location = Location(self.url)
        self._raw_url = url
        self._password: str | None = None
        try:
            params = pg.conninfo.conninfo_to_dict(url)
            port = str(params.get("port") or "0")
            if not port.replace(",", "").isdigit():
                raise pg.ProgrammingError(f"the port {port!r} is not a number")
        except pg.Error as error:
            raise InputError(
                f"not a valid PostgreSQL URL: {self._scrub(str(error))}",
                location=self._location,
                hint="write it as postgresql://USER:PASSWORD@HOST:PORT/DATABASE",
            ) from None
        self._password = str(params.get("password") or "") or None
        extra: dict[str, object] = {"application_name": "plansmith"}
        if "connect_timeout" not in params:
            extra["connect_timeout"] = connect_timeout
        try:
            self._conn: psycopg.Connection[Any] = pg.connect(url, autocommit=True, **extra)
        except pg.Error as error:
            raise ExecutionError(
                f"cannot connect to the PostgreSQL run log: {self._scrub(str(error))}",
                location=self._location,
                hint="check that the server runs and accepts this user, password and"
                " database (scripts/pg-test-server starts one for the tests)",
            ) from None
        try:
            migrate_postgres(self._conn)
        except pg.Error as error:
            self._conn.close()
            raise self._error("prepare", error) from None
        except BaseException:
            self._conn.close()
            raise
        self._pg = pg
        self._rows: list[tuple[str, int, str, str]] = []
        self._fences: dict[str, str] = {}  # run id -> the owner whose lease guards its writes

    def _scrub(self, text: str) -> str:
        """``text`` (a driver's message) with the URL redacted and no password in it."""
        text = text.strip().replace("\n", " ").replace(self._raw_url, self.url)
        return text.replace(self._password, "***") if self._password else text

    def _error(self, action: str, error: Exception) -> ExecutionError:
        return ExecutionError(
            f"cannot {action} the run log: {self._scrub(str(error))}",
            location=self._location,
            hint="check the PostgreSQL server and its log",
        )

    def _read(self, query: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of ``query`` (a driver's error: "cannot read the run log")."""
        try:
            return self._conn.execute(query, params).fetchall()
        except self._pg.Error as error:
            raise self._error("read", error) from None

    def _write(self, action: str, query: str, params: Sequence[Any]) -> int:
        """How many rows ``query`` changed (a driver's error: "cannot ACTION the run log")."""
        try:
            return self._conn.execute(query, params).rowcount
        except self._pg.Error as error:
            raise self._error(action, error) from None

    # -- the RunLog protocol -------------------------------------------------------------

    def create_run(self, run_id: str, created: str, inputs: dict[str, JSONValue]) -> None:
        made = self._write(
            "write",
            "INSERT INTO runs VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (run_id, created, json.dumps(inputs)),
        )
        if made == 0:  # the run's id is the key: never overwrite a run
            raise run_exists(run_id)

    def append(self, event: Event) -> None:
        self._rows.append((event.run_id, event.seq, event.type, _ENCODE(event.to_dict())))

    def flush(self) -> None:
        """Commit the appended events in one transaction (see the module docstring)."""
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        fenced = sorted({r[0] for r in rows if r[0] in self._fences})
        try:
            if not fenced and len(rows) <= _INSERT_MAX:  # one statement: its own transaction
                self._conn.execute(_insert_sql(len(rows)), [v for row in rows for v in row])
                return
            with self._conn.transaction():
                if fenced:
                    self._check_fences(fenced)
                with self._conn.cursor() as cursor:
                    for start in range(0, len(rows), _INSERT_MAX):
                        chunk = rows[start : start + _INSERT_MAX]
                        cursor.execute(_insert_sql(len(chunk)), [v for r in chunk for v in r])
        except self._pg.Error as error:
            raise self._error("write", error) from None

    def _check_fences(self, run_ids: list[str]) -> None:
        found = dict(
            self._conn.execute(
                "SELECT run_id, owner FROM leases WHERE run_id = ANY(%s) FOR SHARE", (run_ids,)
            ).fetchall()
        )
        for run_id in run_ids:
            if found.get(run_id) != self._fences[run_id]:
                holder = found.get(run_id)
                raise RunLeasedError(
                    f"run {run_id}: engine {self._fences[run_id]} lost its lease"
                    + (f" to engine {holder}" if holder else "")
                    + "; its events were not written",
                    location=self._location,
                    hint="the lease expired before it was renewed; another engine drives"
                    " the run now (raise the lease time if the engine stalls)",
                )

    def events(self, run_id: str) -> list[Event]:
        self.run(run_id)
        self.flush()
        rows = self._read("SELECT seq, body FROM events WHERE run_id = %s ORDER BY seq", (run_id,))
        return [decode_event(run_id, seq, body, self._location) for seq, body in rows]

    def runs(self) -> list[RunInfo]:
        rows = self._read("SELECT id, created, inputs FROM runs ORDER BY created")
        return [run_info(r, self._location) for r in rows]

    def run(self, run_id: str) -> RunInfo:
        rows = self._read("SELECT id, created, inputs FROM runs WHERE id = %s", (run_id,))
        if not rows:
            raise not_found(run_id)
        return run_info(rows[0], self._location)

    def put_blob(self, data: bytes) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        sql = "INSERT INTO blobs VALUES (%s, %s) ON CONFLICT (ref) DO NOTHING"
        self._write("write", sql, (ref, data))
        return ref

    def get_blob(self, ref: str) -> bytes:
        rows = self._read("SELECT data FROM blobs WHERE ref = %s", (ref,))
        if not rows:
            raise ExecutionError(
                f"blob {ref} is missing from the run log",
                location=self._location,
                hint="the blobs table keeps the values too large for an event; restore it"
                " from a backup of the database",
            )
        data = bytes(rows[0][0])
        if "sha256:" + hashlib.sha256(data).hexdigest() != ref:
            raise ExecutionError(
                f"blob {ref} is damaged: its {len(data)} bytes are not the ones stored under"
                " that hash (truncated or changed)",
                location=self._location,
                hint="restore the blobs table from a backup of the database",
            )
        return data

    def close(self) -> None:
        if self._conn.closed:
            return
        try:
            self.flush()
        finally:
            self._conn.close()

    # -- the RunLeases protocol ----------------------------------------------------------

    def acquire(
        self, run_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> Lease | None:
        self._write(
            "lease a run in",
            "INSERT INTO leases VALUES (%s, %s, now() + make_interval(secs => %s))"
            " ON CONFLICT (run_id) DO UPDATE"
            " SET owner = excluded.owner, expires = excluded.expires"
            " WHERE leases.expires < now() OR leases.owner IN (excluded.owner, %s)",
            (run_id, owner, float(ttl), replacing or owner),
        )
        lease = self.holder(run_id)
        if lease is not None and lease.owner == owner:
            self._fences[run_id] = owner
        return lease

    def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        changed = self._write(
            "renew a lease in",
            "UPDATE leases SET expires = now() + make_interval(secs => %s)"
            " WHERE run_id = %s AND owner = %s",
            (float(ttl), run_id, owner),
        )
        return changed == 1

    def release(self, run_id: str, owner: str) -> None:
        if self._fences.get(run_id) == owner:
            del self._fences[run_id]
        sql = "DELETE FROM leases WHERE run_id = %s AND owner = %s"
        self._write("release a lease in", sql, (run_id, owner))

    def holder(self, run_id: str) -> Lease | None:
        rows = self._read("SELECT owner, expires FROM leases WHERE run_id = %s", (run_id,))
        return Lease(run_id, rows[0][0], _utc(rows[0][1])) if rows else None

    def expired_unfinished(self) -> list[str]:
        rows = self._read(
            "SELECT l.run_id FROM leases l JOIN runs r ON r.id = l.run_id"
            " WHERE l.expires < now() AND NOT EXISTS (SELECT 1 FROM events e"
            " WHERE e.run_id = l.run_id AND e.type = 'RunFinished') ORDER BY l.expires"
        )
        return [r[0] for r in rows]
