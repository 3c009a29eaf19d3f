"""The audit log: one JSON line per tool call, appended, never rewritten.

Each record holds the time, the session, the tool, the (redacted, shortened)
arguments, the idempotency key, the outcome (``ok``, ``replayed`` or the error
code) and the duration. Records of one session form a hash chain: each carries
the SHA-256 of the previous record of its session (``prev``) and its own
(``hash``), so a removed or edited line shows. Lines are written with a single
``write`` on a file opened with ``O_APPEND``, so several server processes can
share one log. The log lives in the server's state directory, outside every
worktree, so no tool can read or change it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from plansmith.domains.code._redact import redact_value

__all__ = ["AuditLog", "verify_chain"]

_MAX_STRING = 200


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_STRING:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{value[:_MAX_STRING]}... ({len(value)} chars, sha256 {digest})"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def _digest(record: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


class AuditLog:
    """Appends the calls of one session to a JSONL file."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = path
        self.session = session
        self._lock = threading.Lock()
        self._prev = ""
        self._seq = 0
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Write one record (strings redacted and shortened); returns what was written."""
        with self._lock:
            self._seq += 1
            record: dict[str, Any] = {
                "ts": round(time.time(), 6),
                "session": self.session,
                "pid": os.getpid(),
                "seq": self._seq,
                "event": event,
                **_shorten(redact_value(fields)),
                "prev": self._prev,
            }
            record["hash"] = _digest(record)
            line = (json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n").encode()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            self._prev = record["hash"]
            return record


def verify_chain(lines: list[str]) -> dict[str, int]:
    """Check every session's hash chain in ``lines``; returns records per session.

    Raises ``ValueError`` naming the first record that does not fit its chain.
    """
    last: dict[str, str] = {}
    counts: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        record = json.loads(line)
        claimed = record.pop("hash")
        session = str(record["session"])
        if _digest(record) != claimed or record["prev"] != last.get(session, ""):
            raise ValueError(f"audit line {number} breaks the chain of session {session}")
        last[session] = claimed
        counts[session] = counts.get(session, 0) + 1
    return counts
