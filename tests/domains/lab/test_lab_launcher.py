"""``plansmith-lab`` (the shipped pcr/servers.json's command): found beside plansmith's
python when it is not on PATH, it finds the lab venv and runs the package's server.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _labclient import SKIP_REASON

from plansmith.domains.lab import PCR_SERVERS
from plansmith.servers import ServerPool, parse_servers

LAUNCHER = Path(sys.executable).parent / "plansmith-lab"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))
async def test_the_shipped_servers_start_through_the_launcher_off_path(tmp_path: Path) -> None:
    shipped = json.loads(PCR_SERVERS.read_text(encoding="utf-8"))["mcpServers"]["liquid"]
    entry = {
        **shipped,
        "cwd": str(tmp_path),  # the shipped robot folder (.plansmith/lab-robot) goes here
        "env": {"PATH": "/usr/bin:/bin"},  # no venv on PATH: found beside sys.executable
    }
    config = parse_servers(json.dumps({"mcpServers": {"liquid": entry}}), source="test")
    async with ServerPool(config) as pool:
        catalog = await pool.start()
        assert {"aspirate", "dispense", "mix", "blow_out"} <= set(catalog.tool_names("liquid"))
    assert (tmp_path / ".plansmith" / "lab-robot").is_dir()


def test_a_launcher_without_a_usable_lab_python_says_why(tmp_path: Path) -> None:
    env = {**os.environ, "PLANSMITH_LAB_PYTHON": str(tmp_path / "none")}
    done = subprocess.run(
        [str(LAUNCHER), "--role", "liquid"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 5
    assert done.stdout == ""  # stdout is the MCP channel: nothing but messages there
    assert done.stderr.startswith("plansmith-lab: the lab server's python ($PLANSMITH_LAB_PYTHON)")
    assert "hint:" in done.stderr
