"""Git tools: the diff (read tier), a branch and a commit (write tier), in the session's worktree.

Revisions and branch names are checked against strict patterns and by git
itself (``check-ref-format``, ``rev-parse --verify --end-of-options``) before use,
and always passed as single argv elements, so none can become an option.
External diff drivers and text conversions are switched off.
"""

from __future__ import annotations

import re

from plansmith.domains.code._beneath import stat_beneath
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._git import git, git_ok
from plansmith.domains.code._paths import Sandbox
from plansmith.domains.code._redact import redact
from plansmith.domains.code._results import MAX_PAGE, BranchResult, CommitResult, DiffResult, page

__all__ = ["get_diff", "create_branch", "commit_changes", "REVISION", "BRANCH"]

REVISION = r"^[A-Za-z0-9_][A-Za-z0-9_./\-]{0,199}(?:[~^][0-9]{0,3}){0,8}$"
BRANCH = r"^[A-Za-z0-9_][A-Za-z0-9_./\-]{0,199}$"


def _revision(box: Sandbox, revision: str) -> str:
    if not re.match(REVISION, revision) or ".." in revision:
        raise RefusedError(
            "invalid_revision",
            f"{revision!r} is not a plain revision",
            fix="use a branch name, a tag, a commit id or HEAD~N",
        )
    done = git(
        box.worktree,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{revision}^{{commit}}",
    )
    if done.returncode != 0:
        raise RefusedError(
            "unknown_revision", f"{revision!r} names no commit", fix="check the branch or commit id"
        )
    return done.stdout.strip()


def _relative_paths(box: Sandbox, paths: list[str] | None) -> list[str]:
    relative = []
    for given in paths or []:
        target = box.resolve(given)
        if target.root != box.worktree:
            raise RefusedError(
                "outside_worktree",
                f"{given} is not in the repository worktree",
                fix="name files of the repository",
                path=given,
            )
        if (
            stat_beneath(target) is None
            and git(box.worktree, "ls-files", "--error-unmatch", "--", target.relative).returncode
            != 0
        ):
            raise RefusedError(
                "not_found",
                f"{given} is neither in the worktree nor tracked by git",
                fix="list_directory shows what exists",
                path=given,
            )
        relative.append(target.relative)
    return relative


def get_diff(
    box: Sandbox, base: str | None, paths: list[str] | None, offset: int, limit: int
) -> DiffResult:
    base_id = _revision(box, base or "HEAD")
    files = _relative_paths(box, paths)
    options = ("--no-ext-diff", "--no-textconv", "--no-color")
    diff = git_ok(box.worktree, "diff", *options, base_id, "--", *files)
    status = git_ok(box.worktree, "diff", "--name-status", *options, base_id, "--", *files)
    untracked = git_ok(
        box.worktree, "ls-files", "--others", "--exclude-standard", "-z", "--", *files
    )
    lines = redact(diff).splitlines()
    chunk, following = page(lines, offset, limit)
    return DiffResult(
        base=base or "HEAD",
        offset=offset,
        next_offset=following,
        lines=chunk,
        total_lines=len(lines),
        files=[redact(s) for s in status.splitlines()][:MAX_PAGE],
        untracked=[redact(u) for u in untracked.split("\0") if u][:MAX_PAGE],
    )


def create_branch(box: Sandbox, name: str, start_point: str) -> BranchResult:
    valid = re.match(BRANCH, name) and ".." not in name and not name.endswith((".lock", "/", "."))
    if not valid or git(box.worktree, "check-ref-format", "--branch", name).returncode != 0:
        raise RefusedError(
            "invalid_branch_name",
            f"{name!r} is not a valid branch name",
            fix="use letters, digits, '-', '_', '.' and '/', e.g. fix/frequencies",
        )
    start = _revision(box, start_point)
    if git(box.worktree, "show-ref", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0:
        raise RefusedError(
            "branch_exists", f"the branch {name!r} already exists", fix="pick another branch name"
        )
    git_ok(box.worktree, "switch", "--quiet", "-c", name, start)
    commit = git_ok(box.worktree, "rev-parse", "HEAD").strip()
    return BranchResult(branch=name, commit=commit, start_point=start_point)


def commit_changes(
    box: Sandbox, message: str, paths: list[str] | None, author: tuple[str, str]
) -> CommitResult:
    if not message.strip():
        raise RefusedError(
            "empty_message", "the commit message is empty", fix="describe the change"
        )
    files = _relative_paths(box, paths) or ["."]
    git_ok(box.worktree, "add", "--all", "--", *files)
    if git(box.worktree, "diff", "--cached", "--quiet").returncode == 0:
        raise RefusedError(
            "nothing_to_commit", "there are no changes to commit", fix="write or edit files first"
        )
    git_ok(box.worktree, "commit", "--quiet", "--no-verify", "-m", message, author=author)
    commit = git_ok(box.worktree, "rev-parse", "HEAD").strip()
    branch = git(box.worktree, "symbolic-ref", "--short", "-q", "HEAD").stdout.strip() or None
    changed = git_ok(
        box.worktree, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "HEAD"
    )
    return CommitResult(
        commit=commit, branch=branch, message=message, files=changed.splitlines()[:MAX_PAGE]
    )
