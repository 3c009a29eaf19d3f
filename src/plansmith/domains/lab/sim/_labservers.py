"""The lab server's three role servers for a run, and an observer that reads the run log.

``servers_config(robot)`` writes ``mcpServers`` with absolute paths, so a run
works from any directory; every run gets its own robot directory, so its
simulator starts from an empty deck. ``observe(robot)`` keeps one more client
(role ``all``) on the same robot for the whole run, so that the simulator's run
log can be read after the last step (the robot exits when its last client goes).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from plansmith.errors import ServerStartError
from plansmith.servers import ServerPool, ServersConfig, parse_servers

__all__ = [
    "REPO_ROOT",
    "LAB_PYTHON",
    "LAB_PYTHON_ENV",
    "ROLES",
    "lab_venv_problem",
    "require_lab_venv",
    "servers_config",
    "write_servers",
    "observe",
    "simulator_command_count",
]

_LAB_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = _LAB_DIR.parents[3]
#: names the lab venv's python where there is no ``.venv-lab`` beside the sources (an
#: installed plansmith: its package directory is not the source tree)
LAB_PYTHON_ENV = "PLANSMITH_LAB_PYTHON"
LAB_PYTHON = Path(os.environ.get(LAB_PYTHON_ENV) or REPO_ROOT / ".venv-lab" / "bin" / "python")
SERVER_SCRIPT = _LAB_DIR / "server.py"
ROLES = ("movement", "liquid", "modules")


def lab_venv_problem(python: Path = LAB_PYTHON) -> str | None:
    """Why the lab venv cannot run the server, or None if it can."""
    if not python.exists():
        return f"{python} is missing"
    probe = (
        "import importlib.util as u, sys; "
        "sys.exit(0 if u.find_spec('opentrons') and u.find_spec('mcp') else 1)"
    )
    done = subprocess.run([str(python), "-c", probe], capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        return f"{python} cannot import opentrons and mcp"
    return None


def require_lab_venv(*, build: bool = False) -> None:
    """Raise ServerStartError unless the lab venv works; ``build``: run `make lab-venv` first."""
    problem = lab_venv_problem()
    if problem is not None and build and (REPO_ROOT / "Makefile").is_file():
        subprocess.run(["make", "-C", str(REPO_ROOT), "lab-venv"], check=False)
        problem = lab_venv_problem()
    if problem is not None:
        raise ServerStartError(
            f"the lab server's virtual environment is not usable: {problem}",
            hint=f"build it with `make -C {REPO_ROOT} lab-venv` (python3.11 -m venv .venv-lab; "
            "pip install opentrons==9.1.2 mcp==1.9.4 'pydantic<2.12'), or name its python"
            f" in ${LAB_PYTHON_ENV}; see docs/lab.md",
        )


def _server(role: str, robot: Path) -> dict[str, object]:
    return {
        "command": str(LAB_PYTHON),
        "args": [str(SERVER_SCRIPT), "--role", role, "--robot", str(robot)],
        "cwd": str(REPO_ROOT),
    }


def servers_config(robot: Path) -> dict[str, object]:
    """``mcpServers``: the three role servers over the robot in ``robot``."""
    return {"mcpServers": {role: _server(role, robot) for role in ROLES}}


def write_servers(path: Path, robot: Path) -> Path:
    """Write ``servers_config(robot)`` to ``path``; ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(servers_config(robot), indent=2) + "\n")
    return path


@asynccontextmanager
async def observe(robot: Path) -> AsyncIterator[ServerPool]:
    """A pool with one server, ``observer`` (role ``all``), on the robot in ``robot``."""
    config: ServersConfig = parse_servers(
        json.dumps({"mcpServers": {"observer": _server("all", robot)}}), source="observer"
    )
    async with ServerPool(config) as pool:
        await pool.start()
        yield pool


async def simulator_command_count(pool: ServerPool) -> int:
    """The simulator's command count, from ``get_run_log``."""
    result = await pool.call("observer", "get_run_log", {"since": 0, "limit": 0})
    data = json.loads(result.text)
    return int(data["count"])
