"""``plansmith mcp --print-config HOST``: the JSON that adds this server to a host.

A desktop host starts the server itself, from a working directory of its choosing and
without the user's shell: the snippet names the installed ``plansmith`` command by its
absolute path and makes every path option absolute.

- Claude Desktop (``claude_desktop_config.json``) and Cursor (``~/.cursor/mcp.json`` or
  a project's ``.cursor/mcp.json``): ``{"mcpServers": {"plansmith": {"command", "args"}}}``.
- VS Code (``.vscode/mcp.json`` or the user profile's ``mcp.json``):
  ``{"servers": {"plansmith": {"type": "stdio", "command", "args"}}}``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plansmith.errors import InputError

__all__ = ["HOSTS", "absolute", "absolute_source", "host_config", "launcher"]

#: the hosts ``--print-config`` knows, and where each keeps the snippet
HOSTS = {
    "claude": "Claude Desktop's claude_desktop_config.json",
    "cursor": "~/.cursor/mcp.json (or a project's .cursor/mcp.json)",
    "vscode": ".vscode/mcp.json (or the user profile's mcp.json)",
}

#: the server's name in the host's config
NAME = "plansmith"


def launcher() -> tuple[str, list[str]]:
    """The command that starts ``plansmith`` as installed with this Python, and the
    arguments before ``mcp``: the console script beside ``sys.executable`` if there is
    one (``bin/plansmith`` in a venv; ``Scripts\\plansmith.exe`` on Windows), else this
    Python with ``-m plansmith``."""
    python = Path(os.path.abspath(sys.executable))  # not resolved: a venv's python is a link
    for name in ("plansmith", "plansmith.exe"):
        script = python.parent / name
        if script.is_file() and os.access(script, os.X_OK):
            return str(script), []
    return str(python), ["-m", "plansmith"]


def absolute(path: str | Path) -> str:
    """``path`` made absolute from the working directory (``~`` expanded)."""
    return os.path.abspath(Path(path).expanduser())


def absolute_source(spec: str) -> str:
    """A ``--research-source`` (``DIR`` or ``NAME=DIR``) with its folder made absolute."""
    name, _, folder = spec.rpartition("=") if "=" in spec else ("", "", spec)
    return f"{name}={absolute(folder)}" if name else absolute(folder)


def host_config(host: str, args: Sequence[str]) -> dict[str, Any]:
    """The snippet for ``host`` that starts ``plansmith ARGS`` (ARGS from ``mcp`` on).

    Raises ``InputError`` for a host not in ``HOSTS``.
    """
    key = host.strip().lower()
    if key not in HOSTS:
        raise InputError(
            f"unknown host {host!r} for --print-config",
            hint="use --print-config claude, vscode or cursor",
        )
    command, before = launcher()
    server: dict[str, Any] = {"command": command, "args": [*before, *args]}
    if key == "vscode":
        return {"servers": {NAME: {"type": "stdio", **server}}}
    return {"mcpServers": {NAME: server}}
