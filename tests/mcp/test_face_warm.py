"""``plansmith mcp`` keeps its tool servers warm (``--server-idle``): one start of a server
for every check and run of a face, stopped when the face ends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import _face_helpers as fh
import anyio
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent.parent / "servers"))
from _server_helpers import exited

pytestmark = pytest.mark.anyio

MAIN = "import plansmith.cli._mcp; from plansmith.cli import main; main()"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_plansmith_mcp_starts_a_server_once_for_two_flows_and_stops_it_at_the_end(
    tmp_path: Path,
) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    folder = fh.write_domain(tmp_path / "domains")
    starts = tmp_path / "starts"
    server = {
        "command": sys.executable,
        "args": [str(fh.COUNTER)],
        "env": {"COUNTER_STARTS": str(starts)},
    }
    (folder / "servers.json").write_text(json.dumps({"mcpServers": {"counter": server}}))
    home = tmp_path / "home"
    args = ["-c", MAIN, "mcp", "--domains", str(tmp_path / "domains"), "--home", str(home)]
    env = {"PYTHONPATH": os.pathsep.join(sys.path), "PLANSMITH_LLM_BASE_URL": ""}
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with anyio.fail_after(180), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
            for _ in range(2):
                plan, run_id = await fh.plan_approve_run(c, goal=["indexed(d1)"])
                assert plan["binding"]["ok"], plan["binding"]
                assert (await fh.poll(c, run_id))["state"] == "succeeded"
    pids = [int(line) for line in starts.read_text().split()]
    assert len(pids) == 1  # make_plan's checks and the runs: one start
    await exited(pids[0])  # the face stopped it as it ended
    log = (home / "servers.log").read_text()
    assert "[plansmith] server 'counter' starts, to be kept warm" in log
    assert "[plansmith] server 'counter' stops: plansmith is stopping" in log


def _invoke(*args: str) -> tuple[int, str]:
    import plansmith.cli._mcp  # noqa: F401 - registers the command
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, ["mcp", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("value", ["-1", "true", "soon"])
def test_a_config_server_idle_that_is_not_seconds_is_refused_at_its_line(
    tmp_path: Path, value: str
) -> None:
    config = tmp_path / "plansmith.yaml"
    config.write_text(f"max_runs: 2\nserver_idle: {value}\n")
    code, output = _invoke("--config", str(config), "--home", str(tmp_path / "home"))
    assert code == 2
    assert "plansmith.yaml:2: server_idle must be a number of seconds, 0 or more" in output
    assert not (tmp_path / "home").exists()  # refused before the run log is opened


def test_a_negative_server_idle_option_is_refused() -> None:
    code, output = _invoke("--server-idle", "-1")
    assert code == 2
    assert "--server-idle" in output
