"""Ctrl-C during ``plansmith check`` (servers starting) and ``plansmith plan`` exits 130
promptly, without a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import _engine_helpers as eh
import pytest

MUTE = """\
import pathlib, sys, time
pathlib.Path(sys.argv[1]).write_text("started")
while True:
    time.sleep(1)
"""


def test_ctrl_c_while_check_starts_a_server_that_never_answers_exits_130(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    (tmp_path / "mute.py").write_text(MUTE)
    marker = tmp_path / "started"
    servers = {
        "mcpServers": {
            "counter": {"command": sys.executable, "args": [str(tmp_path / "mute.py"), str(marker)]}
        }
    }
    inputs.servers.write_text(json.dumps(servers))
    cmd = [
        sys.executable,
        "-c",
        eh.CLI_MAIN,  # SIGINT as a terminal gives it (the tests may run with it ignored)
        "check",
        *eh.files(inputs),
        "--home",
        str(tmp_path / "h"),
    ]
    with subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            deadline = time.monotonic() + 30
            while not marker.exists():  # the server runs: check waits for its answer
                assert proc.poll() is None
                assert time.monotonic() < deadline
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=15)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err


def test_ctrl_c_during_plan_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from plansmith.cli import _plan_command

    def interrupted(*args: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(_plan_command, "_plan_text", interrupted)
    assert _plan_command.run_plan(["d.yaml", "p.yaml"]) == 130
    assert "interrupted" in capsys.readouterr().err
