"""``plansmith mcp`` end to end with the SDK ``Client``: over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest

pytestmark = pytest.mark.anyio

# ``plansmith mcp`` (the lead registers the module in ``cli._register``; import it here).
MAIN = "import plansmith.cli._mcp; from plansmith.cli import main; main()"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _args(tmp: Path, *extra: str) -> list[str]:
    fh.write_domain(tmp / "domains")
    return ["-c", MAIN, "mcp", "--domains", str(tmp / "domains"), "--home", str(tmp / "home"),
            *extra]  # fmt: skip


async def _whole_flow(client: Any) -> None:
    domains = await fh.call(client, "list_domains")
    assert [d["name"] for d in domains["domains"]] == ["docs"]
    structured = await fh.call(client, "make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
    assert structured["status"] == "planned"
    assert structured["binding"]["ok"] is True
    plan, run_id = await fh.plan_approve_run(client, request="make d1 and d2 searchable")
    assert plan["translation"]["goal"] == ["indexed(d1)", "indexed(d2)"]
    status = await fh.poll(client, run_id)
    assert (status["state"], status["done"], status["total"]) == ("succeeded", 4, 4)
    report = await fh.call(client, "get_run_report", {"run_id": run_id})
    assert report["report"]["plan"]["hash"] == plan["plan_hash"]
    assert "## Outputs" in report["markdown"]
    runs = await fh.call(client, "list_runs")  # newest first: and the first plan's run, held
    assert [(r["run_id"], r["state"]) for r in runs["runs"]] == [
        (run_id, "succeeded"),
        (structured["run_id"], "awaiting approval"),
    ]


async def test_stdio_client_plans_approves_runs_and_reports(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    env = {"PYTHONPATH": os.pathsep.join(sys.path), "PLANSMITH_LLM_BASE_URL": ""}
    params = StdioServerParameters(command=sys.executable, args=_args(tmp_path), env=env)
    # the server's stderr goes to a file (the SDK's default is the sys.stderr of import time)
    with anyio.fail_after(180), (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            await client.list_tools()
            await _whole_flow(client)


async def _start_http(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """``plansmith mcp ARGS --transport http --port 0`` and the URL it says it serves on
    (printed once its socket listens)."""
    proc = subprocess.Popen(
        [sys.executable, *args, "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    with anyio.fail_after(60):
        line = await anyio.to_thread.run_sync(proc.stderr.readline, abandon_on_cancel=True)
    match = re.fullmatch(r"plansmith mcp: (http://127\.0\.0\.1:\d+/mcp) \(.*\n", line)
    assert match, (line, proc.poll())
    stream = proc.stderr

    def drain() -> None:  # keep the pipe drained, and close it at its end
        with stream:
            stream.read()

    threading.Thread(target=drain, daemon=True).start()
    return proc, match.group(1)


async def test_http_client_plans_approves_runs_and_reports(tmp_path: Path) -> None:
    from mcp import Client

    fh.write_domain(tmp_path / "domains")
    config = tmp_path / "plansmith.yaml"
    config.write_text(f"domains: [domains]\nhome: {tmp_path / 'home'}\nmax_runs: 4\n")
    proc, url = await _start_http(["-c", MAIN, "mcp", "--config", str(config)])
    try:
        with anyio.fail_after(180):
            async with fh.http_client(url, session=True) as client:  # a session of its own
                await client.list_tools()
                await _whole_flow(client)
            async with Client(url, read_timeout_seconds=120) as client:  # no header: no runs
                assert "needs an owner" in await fh.error_text(client, "list_runs", {})
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_http_clients_without_headers_share_runs_with_share_runs(tmp_path: Path) -> None:
    from mcp import Client

    proc, url = await _start_http([*_args(tmp_path, "--share-runs")])
    try:
        with anyio.fail_after(180):
            async with Client(url, read_timeout_seconds=120) as a:
                _, run_id = await fh.plan_approve_run(a, goal=["summarised(d1)"])
            async with Client(url, read_timeout_seconds=120) as b:
                assert (await fh.poll(b, run_id))["state"] == "succeeded"
                assert [r["run_id"] for r in (await fh.call(b, "list_runs"))["runs"]] == [run_id]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def _until(check: Any, client: Any, run_id: str) -> dict[str, Any]:
    """Poll the run's status until ``check(status)`` holds (the run must not end first)."""
    with anyio.fail_after(120):
        while True:
            status = await fh.call(client, "get_run_status", {"run_id": run_id})
            if check(status):
                return status
            assert status["state"] not in fh.TERMINAL, status
            await anyio.sleep(0.02)


def _stdio(tmp: Path, errlog: Any) -> Any:
    from mcp import StdioServerParameters, stdio_client

    env = {"PYTHONPATH": os.pathsep.join(sys.path), "PLANSMITH_LLM_BASE_URL": ""}
    params = StdioServerParameters(command=sys.executable, args=_args(tmp), env=env)
    return stdio_client(params, errlog=errlog)


def _set_server(tmp: Path, server: dict[str, Any]) -> None:
    (tmp / "domains" / "docs" / "servers.json").write_text(
        json.dumps({"mcpServers": {"counter": server}})
    )


def _finish(tmp: Path, run_id: str) -> tuple[list[str], list[tuple[str, str | None]]]:
    """The run's cancel reasons and (state, reason) of its ends, from the run log."""
    from plansmith.execution import RunCancelled, RunFinished, SqliteRunLog

    log = SqliteRunLog(tmp / "home" / "runs.db")
    try:
        events = log.events(run_id)
    finally:
        log.close()
    cancels = [e.reason for e in events if isinstance(e, RunCancelled)]
    ends = [(e.state, e.reason) for e in events if isinstance(e, RunFinished)]
    return cancels, ends


async def test_closing_the_stdio_client_cancels_a_running_step_and_stops_its_tool_server(
    tmp_path: Path,
) -> None:
    from mcp import Client

    errlog = (tmp_path / "stderr.log").open("w")
    stdio = _stdio(tmp_path, errlog)  # writes the docs domain (a stdio counter server)
    pid_file = tmp_path / "counter.pid"
    _set_server(
        tmp_path,
        {"command": sys.executable, "args": [str(fh.COUNTER)],
         "env": {"COUNTER_PID_FILE": str(pid_file)}},
    )  # fmt: skip
    with anyio.fail_after(180), errlog:
        async with Client(stdio, read_timeout_seconds=120) as client:
            _, run_id = await fh.plan_approve_run(client, goal=["archived(d1)"])  # sleeps 600 s
            status = await _until(lambda s: s["done"] == 2 and s["in_flight"], client, run_id)
            counter = int(pid_file.read_text())  # the run's own tool server
            assert _alive(counter)
    cancels, ends = _finish(tmp_path, run_id)
    assert status["in_flight"] == ["s3"]
    assert len(cancels) == 1
    assert cancels[0]  # the cancel is recorded, with its reason
    assert ends == [("cancelled", cancels[0])]
    assert not _alive(counter)


async def test_stopping_the_http_server_cancels_its_runs_and_stops_their_tool_servers(
    tmp_path: Path,
) -> None:
    fh.write_domain(tmp_path / "domains")
    pid_file = tmp_path / "counter.pid"
    _set_server(
        tmp_path,
        {"command": sys.executable, "args": [str(fh.COUNTER)],
         "env": {"COUNTER_PID_FILE": str(pid_file)}},
    )  # fmt: skip
    config = tmp_path / "plansmith.yaml"
    config.write_text(f"domains: [domains]\nhome: {tmp_path / 'home'}\n")
    proc, url = await _start_http(["-c", MAIN, "mcp", "--config", str(config)])
    try:
        with anyio.fail_after(180):
            async with fh.http_client(url, session=True) as client:
                _, run_id = await fh.plan_approve_run(client, goal=["archived(d1)"])
                await _until(lambda s: s["done"] == 2 and s["in_flight"], client, run_id)
                counter = int(pid_file.read_text())
        proc.terminate()  # SIGTERM: uvicorn shuts down, the lifespan cancels the run
        proc.wait(timeout=60)  # (uvicorn raises the signal again once it has shut down)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    cancels, ends = _finish(tmp_path, run_id)
    assert len(cancels) == 1
    assert ends == [("cancelled", cancels[0])]
    assert not _alive(counter)
