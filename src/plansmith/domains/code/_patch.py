"""apply_patch: apply an approved patch file from the server's patch folder (write tier).

The caller names a patch (``fix-frequencies`` -> ``PATCH_DIR/fix-frequencies.patch``)
and gives its SHA-256, which the approved plan holds. The server refuses a patch
whose bytes no longer match (``patch_changed``), so approving a plan approves the
exact change. The bytes are copied into the session's log folder first, so the
file that is checked is the file that is applied. Every path the patch touches
must pass the sandbox as a write (no ``..``, no ``.git``, no symlink out), and
``git apply`` runs without ``--unsafe-paths``, with hooks off, in the worktree.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._git import git, git_ok
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import MAX_PAGE
from plansmith.domains.code._results_plan import PatchResult
from plansmith.domains.code._sessions import Session

__all__ = ["PATCH_NAME", "SHA256", "apply_patch", "touched_files"]

PATCH_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$"
SHA256 = r"^(sha256-)?[0-9a-f]{64}$"
MAX_PATCH = 1024 * 1024


def _patch_bytes(patch_dir: Path | None, name: str) -> bytes:
    if patch_dir is None:
        raise RefusedError(
            "not_configured",
            "the server has no patch folder",
            fix="set patch_dir in the server config (patches are approved files, not arguments)",
        )
    if not re.match(PATCH_NAME, name) or ".." in name:
        raise RefusedError("invalid_patch_name", f"{name!r} is not a patch name", fix="e.g. fix-1")
    path = patch_dir / f"{name}.patch"
    if path.is_symlink() or not path.is_file():
        raise RefusedError(
            "not_found", f"no patch {name}.patch in the patch folder", fix="write the patch first"
        )
    data = path.read_bytes()
    if len(data) > MAX_PATCH:
        raise RefusedError("too_large", f"{name}.patch is over 1 MiB", fix="split the patch")
    return data


def touched_files(session: Session, copy: Path) -> tuple[list[str], int, int]:
    """The files a patch touches (each checked by the sandbox as a write), lines added, deleted."""
    numstat = git_ok(session.worktree, "apply", "--numstat", "-z", "--", str(copy))
    files: list[str] = []
    added = deleted = 0
    fields = numstat.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        plus, minus, rest = fields[i].split("\t", 2)
        if rest:  # a plain path follows on the same record
            names = [rest]
            i += 1
        else:  # a rename: two more NUL-separated paths
            names = [fields[i + 1], fields[i + 2]]
            i += 3
        added += int(plus) if plus.isdigit() else 0
        deleted += int(minus) if minus.isdigit() else 0
        for name in names:
            session.sandbox.resolve(name, write=True)  # refuses .., .git, symlinks out
            files.append(name)
    return list(dict.fromkeys(files)), added, deleted


def apply_patch(
    session: Session, patch_dir: Path | None, name: str, sha256: str, author: tuple[str, str]
) -> PatchResult:
    """Check the patch's hash and paths, then ``git apply`` it to the session's worktree."""
    data = _patch_bytes(patch_dir, name)
    digest = hashlib.sha256(data).hexdigest()
    expected = sha256.removeprefix("sha256-")
    if digest != expected:
        raise RefusedError(
            "patch_changed",
            f"{name}.patch has sha256 {digest}, not the approved {expected}",
            fix="the patch changed after the plan was approved: plan and approve again",
        )
    copy = session.logs / f"patch-{digest[:16]}.patch"
    copy.write_bytes(data)
    files, added, deleted = touched_files(session, copy)
    check = git(session.worktree, "apply", "--check", "--", str(copy), author=author)
    if check.returncode != 0:
        raise RefusedError(
            "patch_does_not_apply",
            f"{name}.patch does not apply: {redact(check.stderr.strip())[-1500:]}",
            fix="rebase the patch on the session's revision (get_diff shows the worktree)",
        )
    git_ok(session.worktree, "apply", "--", str(copy), author=author)
    return PatchResult(
        patch=name, sha256=digest, files=files[:MAX_PAGE], added=added, deleted=deleted
    )
