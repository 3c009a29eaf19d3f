"""Problems and server configs for the code domain (stdlib only).

``diagnose_problem`` and ``patch_problem`` write the two HTN problems. The patch
problem names the patch's SHA-256 as an object (``sha256-<hex>``) of a
``patch_file`` fact, so it is an argument of the ``apply_patch`` step and part of
the plan's hash: approving the plan approves those exact bytes, and the server
refuses the patch if they changed. ``server_files`` writes the server config and
the ``servers.json`` that starts ``plansmith-code`` with it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

from plansmith.errors import ProblemError

__all__ = [
    "DOMAIN_DIR",
    "patch_digest",
    "diagnose_problem",
    "patch_problem",
    "server_files",
]

DOMAIN_DIR = Path(__file__).resolve().parent
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]{0,63}$")


def _name(value: str, what: str) -> str:
    if not _NAME.match(value):
        raise ProblemError(
            f"{what} {value!r} is not a plain name", hint="use letters, digits, '-' and '_'"
        )
    return value


def patch_digest(patch: Path) -> str:
    """The object that names a patch's bytes: ``sha256-<hex>``."""
    return "sha256-" + hashlib.sha256(patch.read_bytes()).hexdigest()


def diagnose_problem(suite: str = "suite") -> str:
    """The problem ``diagnose(suite)``."""
    s = _name(suite, "suite")
    return (
        f"problem: diagnose-{s}\ndomain: code\nobjects: {{{s}: suite}}\n"
        f"init: [configured({s})]\ntasks: [diagnose({s})]\n"
    )


def patch_problem(patch: Path, branch: str, suite: str = "suite") -> str:
    """The problem ``apply_and_prove(patch, branch, suite)`` for the patch file ``patch``.

    The patch's name is its file name without ``.patch``; the server takes it from
    its ``patch_dir``, which must be the folder of ``patch``.
    """
    if patch.suffix != ".patch":
        raise ProblemError(f"{patch} is not a .patch file", hint="name it NAME.patch")
    p, b, s = _name(patch.stem, "patch"), _name(branch, "branch"), _name(suite, "suite")
    if len({p, b, s}) < 3:
        raise ProblemError(
            f"the patch, branch and suite need three different names, not {p}, {b}, {s}",
            hint="e.g. patch fix-1.patch on branch fix-1-branch",
        )
    h = patch_digest(patch)
    return (
        f"problem: patch-{p}\ndomain: code\n"
        f"objects: {{{p}: patch, {h}: digest, {b}: branch, {s}: suite}}\n"
        f"init: [configured({s}), new_branch({b}), patch_file({p}, {h})]\n"
        f"tasks: [apply_and_prove({p}, {b}, {s})]\n"
    )


def server_files(
    folder: Path,
    repo: Path,
    *,
    tier: str = "execute",
    patch_dir: Path | None = None,
    python: str = sys.executable,
) -> Path:
    """Write ``code-server.json`` and ``servers.json`` into ``folder``; the latter's path.

    The server's worktrees and state go under ``folder``, which must lie outside ``repo``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    config: dict[str, object] = {
        "repo": str(repo),
        "tier": tier,
        "worktree_root": str(folder / "worktrees"),
        "state_dir": str(folder / "state"),
    }
    if patch_dir is not None:
        config["patch_dir"] = str(patch_dir)
    server_config = folder / "code-server.json"
    server_config.write_text(json.dumps(config, indent=2) + "\n")
    args = ["-m", "plansmith.domains.code.server", "--config", str(server_config)]
    servers = {"mcpServers": {"code": {"command": python, "args": args}}}
    path = folder / "servers.json"
    path.write_text(json.dumps(servers, indent=2) + "\n")
    return path
