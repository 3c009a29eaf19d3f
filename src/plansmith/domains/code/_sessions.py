"""Sessions: each client session works in its own git worktree of the configured repository.

A session starts on its first call: ``git worktree add --detach`` of the
repository's ``HEAD`` into ``worktree_root/<random id>``, with a marker file
naming the owning process. Its sandbox is that worktree (plus any read-only
roots), so what one session writes, another never sees. A session ends when
its client goes away (:meth:`SessionManager.close_all`, run when the server
stops) or when it has been idle longer than ``session_ttl``
(:meth:`SessionManager.expire_idle`); either way its worktree and logs are
removed. Later calls of an expired session are refused (``session_expired``).
:meth:`SessionManager.sweep_stale` removes worktrees whose owning process died
without cleaning up.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from plansmith.domains.code._audit import AuditLog
from plansmith.domains.code._config import ServerConfig
from plansmith.domains.code._errors import RefusedError, UnavailableError
from plansmith.domains.code._git import git, git_ok
from plansmith.domains.code._idempotency import Once
from plansmith.domains.code._paths import Sandbox

__all__ = ["Session", "SessionManager"]


@dataclass(slots=True)
class Session:
    """One client's worktree, sandbox, idempotency store, audit chain and logs."""

    id: str
    worktree: Path
    logs: Path
    sandbox: Sandbox
    audit: AuditLog
    once: Once = field(default_factory=Once)
    last_used: float = 0.0
    log_ids: list[str] = field(default_factory=list)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SessionManager:
    """Opens, finds, expires and removes the sessions of one server process."""

    def __init__(
        self, config: ServerConfig, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._expired: set[str] = set()
        self.opened = 0
        self.removed = 0

    def has(self, key: str = "stdio") -> bool:
        """Whether ``key`` has an open session (no worktree is created)."""
        return key in self._sessions

    def get(self, key: str = "stdio") -> Session:
        """The session for ``key``, opened on first use; refused once it expired."""
        if key in self._expired:
            raise RefusedError(
                "session_expired",
                f"the session was idle longer than {self.config.session_ttl:g} s and was removed",
                fix="reconnect to start a new session (its worktree starts from HEAD again)",
            )
        session = self._sessions.get(key)
        if session is None:
            session = self._open()
            self._sessions[key] = session
        session.last_used = self._clock()
        return session

    def _open(self) -> Session:
        config = self.config
        sid = secrets.token_hex(8)
        config.worktree_root.mkdir(parents=True, exist_ok=True, mode=0o700)
        worktree = config.worktree_root / sid
        marker = config.worktree_root / f"{sid}.json"
        marker.write_text(
            json.dumps({"pid": os.getpid(), "repo": str(config.repo)}), encoding="utf-8"
        )
        with self._git_lock():
            done = git(config.repo, "worktree", "add", "--detach", str(worktree), "HEAD")
        if done.returncode != 0:
            marker.unlink(missing_ok=True)
            raise UnavailableError(
                "worktree_failed",
                f"cannot create the session's worktree: {done.stderr.strip()[-500:]}",
                fix="check that the repository has a commit and the worktree root is writable",
                retryable=False,
            )
        logs = config.state_dir / "sessions" / sid
        logs.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.opened += 1
        return Session(
            id=sid,
            worktree=worktree,
            logs=logs,
            sandbox=Sandbox(worktree, config.read_roots),
            audit=AuditLog(config.audit_log, sid),
        )

    def expire_idle(self) -> list[str]:
        """Remove the sessions idle longer than the TTL; returns their ids."""
        now = self._clock()
        gone = []
        for key, session in list(self._sessions.items()):
            if now - session.last_used > self.config.session_ttl:
                self._remove(key)
                self._expired.add(key)
                gone.append(session.id)
        return gone

    def close_all(self) -> None:
        """Remove every session (the server is stopping)."""
        for key in list(self._sessions):
            self._remove(key)

    def _remove(self, key: str) -> None:
        session = self._sessions.pop(key, None)
        if session is None:  # already removed (a signal handler and the lifespan both close)
            return
        session.audit.append("session_end", worktree_removed=True)
        self._remove_worktree(session.id)
        shutil.rmtree(session.logs, ignore_errors=True)
        self.removed += 1

    def _remove_worktree(self, sid: str) -> None:
        root = self.config.worktree_root
        worktree = root / sid
        with self._git_lock():
            git(self.config.repo, "worktree", "remove", "--force", "--force", str(worktree))
            if worktree.exists():
                shutil.rmtree(worktree, ignore_errors=True)
                git(self.config.repo, "worktree", "prune")
        (root / f"{sid}.json").unlink(missing_ok=True)

    def sweep_stale(self) -> int:
        """Remove the worktrees of dead server processes; returns how many."""
        root = self.config.worktree_root
        if not root.is_dir():
            return 0
        swept = 0
        for marker in root.glob("*.json"):
            try:
                owner = json.loads(marker.read_text(encoding="utf-8"))
                pid = int(owner["pid"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if pid != os.getpid() and not _alive(pid):
                self._remove_worktree(marker.stem)
                shutil.rmtree(self.config.state_dir / "sessions" / marker.stem, ignore_errors=True)
                swept += 1
        if swept:
            with self._git_lock():
                git_ok(self.config.repo, "worktree", "prune")
        return swept

    @contextmanager
    def _git_lock(self) -> Iterator[None]:
        """Serialise worktree changes across server processes (``git worktree add`` races:
        one process can read another's half-written ``.git/worktrees/<id>``)."""
        git_dir = self.config.repo / ".git"
        folder = git_dir if git_dir.is_dir() else self.config.worktree_root
        fd = os.open(folder / "plansmith-code-worktrees.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
