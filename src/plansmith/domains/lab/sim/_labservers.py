"""The lab server's three role servers for a run, and an observer that reads the run log.

``servers_config(robot)`` writes ``mcpServers`` with absolute paths (the lab venv's
python, the ``server.py`` of the installed package), so a run works from any
directory; every run gets its own robot directory, so its simulator starts from an
empty deck. ``observe(robot)`` keeps one more client
(role ``all``) on the same robot for the whole run, so that the simulator's run
log can be read after the last step (the robot exits when its last client goes).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from plansmith.domains.lab._labenv import (
    LAB_PYTHON_ENV,
    SERVER_SCRIPT,
    checkout_root,
    ensure_lab_python,
    find_lab_python,
)
from plansmith.domains.lab._labenv import lab_venv_problem as _problem
from plansmith.servers import ServerPool, ServersConfig, parse_servers

__all__ = [
    "REPO_ROOT",
    "LAB_PYTHON",
    "LAB_PYTHON_ENV",
    "ROLES",
    "SERVER_SCRIPT",
    "lab_python",
    "lab_venv_problem",
    "require_lab_venv",
    "servers_config",
    "write_servers",
    "observe",
    "simulator_command_count",
    "simulator_run_log",
    "simulator_deck",
]

_LAB_DIR = SERVER_SCRIPT.parent
#: the checkout around the sources (an installed plansmith: where one would be)
REPO_ROOT = checkout_root() or _LAB_DIR.parents[3]
ROLES = ("movement", "liquid", "modules")


def lab_python(python: str | Path | None = None) -> Path:
    """The lab server's python (``python``, ``$PLANSMITH_LAB_PYTHON``, ``.venv-lab`` of a
    checkout, else the user cache directory's), neither checked nor built."""
    return find_lab_python(python)[0]


#: the lab server's python when this module was imported (see ``lab_python``)
LAB_PYTHON = lab_python()


def lab_venv_problem(python: Path | None = None) -> str | None:
    """Why the lab venv (default: ``lab_python()``) cannot run the server, or None."""
    return _problem(python or lab_python())


def require_lab_venv(*, build: bool = False, python: str | Path | None = None) -> Path:
    """The lab server's python once it works; ``build``: build the checkout's
    ``.venv-lab`` or the cache directory's venv first if it is missing or broken.

    Raises ServerStartError (with a hint) if there is none that works.
    """
    return ensure_lab_python(python, build=build)


def _server(role: str, robot: Path, python: Path | None) -> dict[str, object]:
    return {
        "command": str(python or lab_python()),
        "args": [str(SERVER_SCRIPT), "--role", role, "--robot", str(robot)],
        # the lab venv has its own packages (mcp 1.x): a PYTHONPATH meant for plansmith's
        # (mcp 2.x) must not reach it, as the ``plansmith-lab`` launcher ensures too
        "env": {"PYTHONPATH": ""},
    }


def servers_config(robot: Path, python: Path | None = None) -> dict[str, object]:
    """``mcpServers``: the three role servers over the robot in ``robot``, run by
    ``python`` (default: ``lab_python()``) from the installed package's ``server.py``."""
    return {"mcpServers": {role: _server(role, robot, python) for role in ROLES}}


def write_servers(path: Path, robot: Path, python: Path | None = None) -> Path:
    """Write ``servers_config(robot, python)`` to ``path``; ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(servers_config(robot, python), indent=2) + "\n")
    return path


@asynccontextmanager
async def observe(robot: Path, python: Path | None = None) -> AsyncIterator[ServerPool]:
    """A pool with one server, ``observer`` (role ``all``), on the robot in ``robot``."""
    config: ServersConfig = parse_servers(
        json.dumps({"mcpServers": {"observer": _server("all", robot, python)}}),
        source="observer",
    )
    async with ServerPool(config) as pool:
        await pool.start()
        yield pool


async def simulator_command_count(pool: ServerPool) -> int:
    """The simulator's command count, from ``get_run_log``."""
    result = await pool.call("observer", "get_run_log", {"since": 0, "limit": 0})
    data = json.loads(result.text)
    return int(data["count"])


async def simulator_run_log(pool: ServerPool) -> list[str]:
    """The simulator's whole run log (its command texts), from ``get_run_log``."""
    count = await simulator_command_count(pool)
    result = await pool.call("observer", "get_run_log", {"since": 0, "limit": count})
    return [str(c) for c in json.loads(result.text)["commands"]]


async def simulator_deck(pool: ServerPool) -> dict[str, Any]:
    """The simulator's deck, from ``get_deck_state``."""
    result = await pool.call("observer", "get_deck_state", {})
    deck: dict[str, Any] = json.loads(result.text)
    return deck
