"""One-shot MCP clients: the official MCP Inspector's CLI mode drives a whole run.

Each call is its own ``mcp-inspector --cli`` process, which spawns its own stdio
``plansmith mcp --detach-runs`` on the same ``--home`` and leaves: ``make_plan``,
``approve_plan``, ``start_run``, ``get_run_status`` (again until the run is over) and
``get_run_report``. The run outlives the server that started it: a detached ``plansmith
resume`` drives it, and every later process finds the plan, the approval and the run in
the run log. The counter server that run starts waits at a gate (``COUNTER_START_GATE``)
until the test has seen the run unfinished from a later process; then the test opens it.

The Inspector is pinned by ``tests/mcp/_inspector/package-lock.json`` and installed by
``make inspector-cli`` (``make test`` does it); without node, npm or that install the
test is skipped, saying how to install it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _face_helpers import TERMINAL, write_domain

from _shared_servers import servers_json

INSPECTOR_DIR = Path(__file__).parent / "_inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"
INSTALL = (
    "run `make inspector-cli` (or `npm ci --prefix tests/mcp/_inspector`; needs node and npm)"
    " to install the MCP Inspector"
)
DEADLINE = 180.0  # seconds for the whole flow, every Inspector process included
OWNER = "local"  # the owner of every stdio call
#: the approver the log records for it
APPROVERS = (f"mcp:{OWNER}",)  # the MCP face names its approvers mcp:OWNER
#: the environment less a run log named by PLANSMITH_LOG: the servers the Inspector starts
#: do not inherit it (a stdio server gets HOME, PATH and a few more), so every process here
#: uses HOME/runs.db
ENV = {k: v for k, v in os.environ.items() if k != "PLANSMITH_LOG"}


def _inspector() -> Path:
    if shutil.which("node") is None:
        pytest.skip(f"node is not installed: {INSTALL}")
    if not INSPECTOR.exists():
        pytest.skip(INSTALL)
    return INSPECTOR


class OneShot:
    """Tool calls, each by its own Inspector CLI process (and its own ``plansmith mcp``)."""

    def __init__(self, inspector: Path, tmp: Path, home: Path, domains: Path) -> None:
        self.inspector = inspector
        self.tmp = tmp
        self.server = [
            sys.executable,
            "-m",
            "plansmith",
            "mcp",
            "--home",
            str(home),
            "--domains",
            str(domains),
            "--detach-runs",
        ]
        # the Inspector's own files (server catalog, client config, storage) in the test's
        # folder, not in ~/.mcp-inspector
        self.env = {
            **ENV,
            "MCP_CATALOG_PATH": str(tmp / "inspector" / "mcp.json"),
            "MCP_CLIENT_CONFIG_PATH": str(tmp / "inspector" / "client.json"),
            "MCP_STORAGE_DIR": str(tmp / "inspector" / "storage"),
        }
        self.deadline = time.monotonic() + DEADLINE
        self.calls: list[str] = []  # each call's tool and seconds, for a failure's message

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured result; an error, an exit code or output that is not the
        one JSON object ``--format json`` prints fails the test with what it printed."""
        left = self.left()
        assert left > 0, f"the flow took over {DEADLINE} s; calls: {self.calls}"
        argv = [
            str(self.inspector),
            "--cli",
            "--format",
            "json",
            # a busy machine may take a while to start the Python server
            "--connect-timeout",
            str(int(left * 1000)),
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            json.dumps(args),
            "--",
            *self.server,
        ]
        began = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=self.tmp,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=left,
            check=False,
        )
        self.calls.append(f"{tool} {time.monotonic() - began:.1f} s")
        said = (
            f"{tool}({args}): exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
            f"\ncalls: {self.calls}"
        )
        assert done.returncode == 0, said
        try:
            result: dict[str, Any] = json.loads(done.stdout)["result"]
        except (ValueError, KeyError) as error:
            raise AssertionError(f"not the Inspector's JSON: {error}\n{said}") from None
        assert result.get("isError") is not True, said
        data: dict[str, Any] = result["structuredContent"]
        return data


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no init reaped yet does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _is_driver(pid: int, run_id: str) -> bool:
    with contextlib.suppress(OSError):
        return run_id in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    return False


@pytest.mark.timeout(DEADLINE + 60)
def test_the_inspector_cli_drives_a_run_one_process_per_call(tmp_path: Path) -> None:
    inspector = _inspector()
    domains = tmp_path / "domains"
    # docs: summarise (read), then index (write), on the stdio counter server, whose starts
    # are counted; the second start (the run's, after make_plan's binding check) waits
    # until the gate file exists
    folder = write_domain(domains)
    starts, gate = tmp_path / "counter-starts", tmp_path / "counter-gate"
    gated = {"COUNTER_STARTS": str(starts), "COUNTER_START_GATE": str(gate)}
    (folder / "servers.json").write_text(servers_json(env={**gated, "COUNTER_GATE_FROM": "2"}))
    home = tmp_path / "home"
    client = OneShot(inspector, tmp_path, home, domains)
    run_id = ""
    try:
        plan = client.call("make_plan", {"domain": "docs", "goal": ["indexed(d1)"]})
        assert plan["status"] == "planned", plan
        assert plan["binding"]["ok"], plan["binding"]
        assert plan["needs_approval"], plan  # its write step
        assert plan["tiers"] == ["write"], plan
        plan_hash, run_id = plan["plan_hash"], plan["run_id"]
        assert run_id, plan
        assert len(starts.read_text().splitlines()) == 1, "make_plan starts the server once"

        approved = client.call("approve_plan", {"plan_hash": plan_hash})
        approver = approved["approved_by"]
        assert approver in APPROVERS, approved
        assert approved["run_id"] == run_id, approved

        started = client.call("start_run", {"plan_hash": plan_hash})
        assert started["run_id"] == run_id, (started, plan)
        assert started["plan_hash"] == plan_hash, started

        # the server that started the run has gone, and the run is not over: its tool
        # server cannot start before the gate opens
        status = client.call("get_run_status", {"run_id": run_id})
        assert status["run_id"] == run_id, status
        assert status["state"] not in TERMINAL, status
        states = [status["state"]]
        gate.touch()
        while status["state"] not in TERMINAL:  # each poll is a whole Inspector process
            status = client.call("get_run_status", {"run_id": run_id})
            states.append(status["state"])
        driver_log = home / "runs" / run_id / "driver.log"
        assert status["state"] == "succeeded", (status, states, driver_log.read_text())
        assert status["done"] == status["total"] == 2, status

        answer = client.call("get_run_report", {"run_id": run_id})
        report = answer["report"]
        assert answer["run_id"] == report["run_id"] == run_id, answer
        assert report["state"] == "succeeded", report
        assert report["plan"]["hash"] == plan_hash, report["plan"]
        assert report["plan"]["approved_by"] == approver, report["plan"]
        assert report["plan"]["approval_event"] == "person", report["plan"]
        assert report["asked"]["approved_by"] == approver, report["asked"]
        assert report["asked"]["planned_by"] == OWNER, report["asked"]
        assert [s["outcome"] for s in report["steps"]] == ["succeeded", "succeeded"], report
        assert f"approved by {approver}" in answer["markdown"], answer["markdown"]
        assert f"# Run {run_id}: succeeded" in answer["markdown"], answer["markdown"]

        # the run log itself names the person who approved, once
        shown = subprocess.run(
            [sys.executable, "-m", "plansmith", "show", run_id, "--home", str(home), "--json"],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=client.left(),
            check=True,
        )
        events = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
        approvals = [e for e in events if e["type"] == "PlanApproved"]
        assert len(approvals) == 1, approvals
        assert approvals[0]["plan_hash"] == plan_hash, approvals
        assert (approvals[0]["by"], approvals[0]["approver"]) == ("person", approver), approvals
        assert [e["state"] for e in events if e["type"] == "RunFinished"] == ["succeeded"]
        # driven by the detached `plansmith resume`, which ended with the run
        assert "run succeeded" in driver_log.read_text(), driver_log.read_text()
        pid = int((home / "runs" / run_id / "driver.pid").read_text())
        while _alive(pid):
            assert client.left() > 0, f"the detached driver {pid} still runs"
            time.sleep(0.05)  # a process's end has no event to wait on from here
        assert len(starts.read_text().splitlines()) == 2, "the run starts its server once"
    finally:
        gate.touch()  # a tool server waiting at the gate goes on, then ends with its client
        pid_file = home / "runs" / run_id / "driver.pid"
        if run_id and pid_file.is_file():  # a driver left behind by a failure: stop it
            pid = int(pid_file.read_text())
            if _alive(pid) and _is_driver(pid, run_id):
                os.kill(pid, signal.SIGTERM)
