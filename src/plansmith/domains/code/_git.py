"""Running git safely: an argv (never a shell), a clean environment, no hooks, no pager.

Repository hooks, fsmonitor commands, the user's and the system's git config and
credential prompts are all switched off, so no git call the server makes can run
a program that a file in the repository names. Pathspecs are literal
(``GIT_LITERAL_PATHSPECS=1``): a path is the one file or folder it names, never a
glob or pathspec magic.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from plansmith.domains.code._errors import UnavailableError
from plansmith.domains.code._redact import redact

__all__ = ["git", "git_ok", "git_env"]

_SAFE = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "credential.helper=",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "tag.gpgsign=false",
    "-c",
    "protocol.ext.allow=never",
)


def git_env(
    author: tuple[str, str] = ("plansmith-code", "plansmith-code@localhost"),
) -> dict[str, str]:
    """The environment of every git call: minimal, with a fixed identity."""
    name, email = author
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        # every path the server passes is a file's name, never a pattern: no pathspec
        # magic (`:(top)*`, `:/`) or glob (`*`) can widen it past what was checked
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def git(
    cwd: Path,
    *args: str,
    timeout: float = 60.0,
    author: tuple[str, str] = ("plansmith-code", "plansmith-code@localhost"),
) -> subprocess.CompletedProcess[str]:
    """``git <safe options> args`` in ``cwd``; the finished process (any exit status)."""
    try:
        return subprocess.run(
            ["git", *_SAFE, *args],
            cwd=cwd,
            env=git_env(author),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UnavailableError(
            "timeout",
            f"git {args[0] if args else ''} took longer than {timeout:g} s",
            fix="retry later",
        ) from None
    except OSError as error:
        raise UnavailableError(
            "git_unavailable", f"cannot run git: {error.strerror}", fix="install git on the server"
        ) from None


def git_ok(
    cwd: Path,
    *args: str,
    timeout: float = 60.0,
    author: tuple[str, str] = ("plansmith-code", "plansmith-code@localhost"),
) -> str:
    """The standard output of a git call that must succeed."""
    done = git(cwd, *args, timeout=timeout, author=author)
    if done.returncode != 0:
        message = redact(done.stderr.strip() or done.stdout.strip())[-2000:]
        raise UnavailableError(
            "git_failed",
            f"git {args[0] if args else ''} failed: {message}",
            fix="check the repository state (get_diff) and the arguments",
            retryable=False,
        )
    return done.stdout
