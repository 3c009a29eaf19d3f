"""The server's configuration: the repository, the tier, the limits and the project commands.

Two files feed it, both read once at start-up and never again:

* an optional **server config** (``--config FILE``, JSON or TOML) with ``repo``,
  ``tier``, ``worktree_root``, ``state_dir``, ``audit_log``, ``max_concurrent``,
  ``session_ttl_seconds``, ``read_roots``, ``patch_dir``, ``[timeouts]`` (``fast``, ``medium``,
  ``slow``) and ``[commands]``;
* the **project config** ``plansmith-code.toml`` at the repository's root, whose
  ``[commands]`` table names the ``test`` and ``build`` argv lists (and an optional
  ``[commands.env]``). The server config's ``[commands]`` wins over it.

Command lines come only from these files. Nothing a caller sends, and nothing a
session writes into its worktree (a new ``plansmith-code.toml`` included), changes
them while the server runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.domains.code._tiers import Tier, parse_tier
from plansmith.errors import InputError, Location

__all__ = ["PROJECT_FILE", "Commands", "Timeouts", "ServerConfig", "load_config"]

PROJECT_FILE = "plansmith-code.toml"


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds per timeout class: fast (reads), medium (writes, git), slow (tests, builds)."""

    fast: float = 10.0
    medium: float = 120.0
    slow: float = 600.0


@dataclass(frozen=True, slots=True)
class Commands:
    """The only commands the execute tier runs (argv lists), and their extra environment."""

    test: tuple[str, ...] | None = None
    build: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything the server enforces; built once, before the first request."""

    repo: Path
    tier: Tier = Tier.READ
    worktree_root: Path = field(default_factory=Path)
    state_dir: Path = field(default_factory=Path)
    audit_log: Path = field(default_factory=Path)
    max_concurrent: int = 4
    session_ttl: float = 3600.0
    read_roots: tuple[Path, ...] = ()
    patch_dir: Path | None = None  # where apply_patch takes approved patches from
    timeouts: Timeouts = Timeouts()
    commands: Commands = Commands()
    git_author: tuple[str, str] = ("plansmith-code", "plansmith-code@localhost")


def _fail(message: str, where: Path | str | None, hint: str) -> InputError:
    return InputError(message, location=Location(str(where)) if where else None, hint=hint)


def _read_table(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise _fail(f"cannot read {path}: {error.strerror}", path, "check the path") from None
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise _fail(f"{path.name} is not valid: {error}", path, "fix the syntax") from None
    if not isinstance(data, dict):
        raise _fail(f"{path.name} must hold a table/object", path, "write key = value pairs")
    return data


def _argv(value: Any, where: Path, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise _fail(
            f"commands.{name} must be a non-empty list of strings (an argv, not a shell line)",
            where,
            f'e.g. {name} = ["python", "-m", "pytest", "-q"]',
        )
    return tuple(value)


def _commands(table: Any, where: Path, base: Commands) -> Commands:
    if table is None:
        return base
    if not isinstance(table, dict):
        raise _fail("[commands] must be a table", where, "write [commands] test = [...]")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _fail("commands.env must map names to strings", where, 'e.g. LANG = "C.UTF-8"')
    return Commands(
        test=_argv(table.get("test"), where, "test") or base.test,
        build=_argv(table.get("build"), where, "build") or base.build,
        env=tuple(sorted({**dict(base.env), **env}.items())),
    )


def _number(data: Mapping[str, Any], key: str, default: float, where: Path | None) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _fail(f"{key} must be a positive number", where, f"e.g. {key} = {default}")
    return float(value)


def _tier(value: Any, where: Path | None) -> Tier:
    """The tier, or its error at ``where`` (the config file, when the tier comes from it)."""
    try:
        return parse_tier(str(value))
    except InputError as error:
        raise error.located(str(where) if where else None) from None


def load_config(
    repo: str | Path | None = None,
    *,
    tier: str | None = None,
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ServerConfig:
    """The configuration from the server config file, the project file and the arguments.

    Arguments win over the server config file, which wins over the project file.
    """
    data: dict[str, Any] = {}
    where: Path | None = None
    if config_file is not None:
        where = Path(config_file).resolve()
        data = _read_table(where)
    # the tier's place: the config file, unless an argument gives it
    tier_where = where if tier is None and (overrides or {}).get("tier") is None else None
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if repo is not None:
        data["repo"] = str(repo)
    if tier is not None:
        data["tier"] = tier
    if "repo" not in data:
        raise _fail("no repository configured", where, "pass --repo PATH or set repo in the config")
    root = Path(str(data["repo"])).expanduser().resolve()
    if not (root / ".git").exists():
        raise _fail(f"{root} is not a git repository", root, "run `git init` there, or pick a repo")
    project = root / PROJECT_FILE
    commands = Commands()
    if project.is_file():
        commands = _commands(_read_table(project).get("commands"), project, commands)
    commands = _commands(data.get("commands"), where or root, commands)
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    base = Path(tempfile.gettempdir())
    state = Path(data.get("state_dir") or base / f"plansmith-code-state-{digest}").resolve()
    times = data.get("timeouts", {})
    if not isinstance(times, dict):
        raise _fail("[timeouts] must be a table", where, "write [timeouts] fast = 10")
    config = ServerConfig(
        repo=root,
        tier=_tier(data.get("tier", "read"), tier_where),
        worktree_root=Path(
            data.get("worktree_root") or base / f"plansmith-code-worktrees-{digest}"
        ).resolve(),
        state_dir=state,
        audit_log=Path(data.get("audit_log") or state / "audit.jsonl").resolve(),
        max_concurrent=int(_number(data, "max_concurrent", 2 * (os.cpu_count() or 1), where)),
        session_ttl=_number(data, "session_ttl_seconds", 3600.0, where),
        read_roots=tuple(Path(str(p)).resolve() for p in data.get("read_roots", [])),
        patch_dir=Path(str(data["patch_dir"])).resolve() if data.get("patch_dir") else None,
        timeouts=Timeouts(
            fast=_number(times, "fast", 10.0, where),
            medium=_number(times, "medium", 120.0, where),
            slow=_number(times, "slow", 600.0, where),
        ),
        commands=commands,
    )
    _check_layout(config)
    return config


def _check_layout(config: ServerConfig) -> None:
    """Worktrees and server state must lie outside the repository (and vice versa)."""
    for name, path in (("worktree_root", config.worktree_root), ("state_dir", config.state_dir)):
        if path.is_relative_to(config.repo) or config.repo.is_relative_to(path):
            raise _fail(
                f"{name} {path} overlaps the repository {config.repo}",
                path,
                f"put {name} outside the repository",
            )
