"""Checking an LLM-drafted patch before anyone can approve it: text, sandbox, ``git apply``.

:func:`check_draft` reads the model's answer as a diff (``_draft_diff``), then opens
a scratch session exactly like a server session (a ``git worktree add --detach``
of the repository's ``HEAD``, its own sandbox, the same worktree lock), and runs
the checks the server's ``apply_patch`` runs later: every path git would touch
goes through the sandbox as a write (no ``..``, no ``.git``, no symlink out), and
``git apply --check`` must pass. ``git apply --summary`` must show no mode change,
deletion, rename or symlink. The scratch worktree is removed whatever happens,
and nothing is written anywhere else: storing the patch is the caller's job.

The model's text is data: a checked draft is only a file in the patch folder.
The patch plan made with it needs a person's approval of its hash, and the server
refuses the patch if its bytes change after that.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from plansmith.domains.code._config import ServerConfig
from plansmith.domains.code._draft_diff import read_diff
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._git import git, git_ok
from plansmith.domains.code._patch import touched_files
from plansmith.domains.code._redact import redact
from plansmith.domains.code._sessions import SessionManager

__all__ = ["DraftCheck", "check_draft"]

_SUMMARY_REFUSED = ("mode change", "delete mode", "rename ", "copy ", "create mode 120000")


@dataclass(frozen=True, slots=True)
class DraftCheck:
    """A draft that passed every check: the normalised diff, its digest and what it changes."""

    diff: str
    sha256: str
    files: tuple[str, ...]
    created: tuple[str, ...]
    added: int
    deleted: int

    @property
    def tests(self) -> tuple[str, ...]:
        """The test files it touches (a fix that edits tests deserves a closer look)."""
        return tuple(f for f in self.files if "test" in Path(f).name or "/tests/" in f"/{f}")


def _scratch_config(config: ServerConfig, base: Path) -> ServerConfig:
    return dataclasses.replace(
        config,
        worktree_root=base / "worktrees",
        state_dir=base / "state",
        audit_log=base / "state" / "audit.jsonl",
        read_roots=(),
    )


def _summary_check(worktree: Path, copy: Path) -> None:
    summary = git_ok(worktree, "apply", "--summary", "--", str(copy))
    for line in summary.splitlines():
        if line.strip().startswith(_SUMMARY_REFUSED):
            raise RefusedError(
                "unsupported_change",
                f"git reads the patch as: {line.strip()}",
                fix="a drafted patch may only edit or create regular text files",
            )


def check_draft(config: ServerConfig, answer: str) -> DraftCheck:
    """The checked draft in ``answer``; a ``RefusedError`` (with a code and a fix) if any
    check fails. Works in a scratch worktree of ``config.repo`` that it removes again."""
    diff, files = read_diff(answer)
    base = Path(tempfile.mkdtemp(prefix="plansmith-draft-"))
    manager = SessionManager(_scratch_config(config, base))
    try:
        session = manager.get("draft")
        copy = session.logs / "draft.patch"
        copy.write_text(diff, encoding="utf-8")
        touched, added, deleted = touched_files(session, copy)  # sandbox: as writes
        _summary_check(session.worktree, copy)
        check = git(session.worktree, "apply", "--check", "--", str(copy))
        if check.returncode != 0:
            raise RefusedError(
                "patch_does_not_apply",
                f"the patch does not apply to HEAD: {redact(check.stderr.strip())[-1500:]}",
                fix="copy the context lines exactly from the code shown, with their indentation",
            )
    finally:
        manager.close_all()
        shutil.rmtree(base, ignore_errors=True)
    return DraftCheck(
        diff=diff,
        sha256=hashlib.sha256(diff.encode("utf-8")).hexdigest(),
        files=tuple(touched),
        created=tuple(f.path for f in files if f.created),
        added=added,
        deleted=deleted,
    )
