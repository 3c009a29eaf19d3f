"""``plansmith serve``: refuses unsafe or broken options, and serves the app on loopback."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from _web_helpers import write_domains
from typer.testing import CliRunner

import plansmith.cli._serve  # noqa: F401  (registers the command on the app)
from _proc import finish
from plansmith.cli import app


def test_a_public_host_without_a_token_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "--token" in result.output


def test_missing_files_and_folders_are_input_errors(tmp_path: Path) -> None:
    for args in (["--servers", "nope.json"], ["--bindings", "nope.yaml"], ["--domains", "nope"]):
        result = CliRunner().invoke(app, ["serve", *args, "--home", str(tmp_path)])
        assert result.exit_code == 2, args
        assert "nope" in result.output


def test_serve_prints_the_url_it_answers_on_loopback_with_the_token(tmp_path: Path) -> None:
    domains = write_domains(tmp_path)
    code = "import plansmith.cli._serve; from plansmith.cli import app; app()"
    args = ["serve", "--port", "0", "--domains", str(domains), "--token", "t0k"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args, "--home", str(tmp_path / "home")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # printed once the socket listens
        match = re.fullmatch(r"plansmith serve: (http://127\.0\.0\.1:(\d+)/) \(runs in .*\n", line)
        assert match, line
        url = match.group(1)
        assert match.group(2) != "0"  # the port the system chose
        response = httpx.get(f"{url}api/domains", headers={"Authorization": "Bearer t0k"})
        assert response.status_code == 200
        assert response.json()[0]["name"] == "docs"
        assert httpx.get(f"{url}api/domains").status_code == 401
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_port_in_use_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--port", str(port), "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "--port" in result.output


def test_ctrl_c_cancels_the_runs_and_ends_their_open_event_streams_promptly(
    tmp_path: Path,
) -> None:
    import json
    import signal
    import threading
    import time

    from _web_helpers import SLOW_BINDINGS

    domains = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)
    code = "import plansmith.cli._serve; from plansmith.cli import app; app()"
    args = ["serve", "--port", "0", "--domains", str(domains), "--home", str(tmp_path / "h")]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.match(r"plansmith serve: (http://\S+/) ", line)
        assert match, line
        url = match.group(1)
        body = {"domain": "docs", "problem": "problem-1"}
        created = httpx.post(f"{url}api/runs", json=body, timeout=60).json()
        run_id = created["run_id"]
        seen: list[dict[str, str]] = []
        started, ended = threading.Event(), threading.Event()

        def read() -> None:  # an open page: the run's event stream
            fields: dict[str, str] = {}
            try:
                with httpx.stream("GET", f"{url}api/runs/{run_id}/events", timeout=30) as r:
                    for text in r.iter_lines():
                        if text:
                            key, _, value = text.partition(": ")
                            fields[key] = value
                            continue
                        if "event" in fields:
                            seen.append(fields)
                            if fields["event"] == "StepStarted":
                                started.set()
                        fields = {}
            except httpx.HTTPError:
                pass
            ended.set()

        threading.Thread(target=read, daemon=True).start()
        approve = {"plan_hash": created["plan_hash"]}
        answer = httpx.post(f"{url}api/runs/{run_id}/approve", json=approve, timeout=30)
        assert answer.status_code == 202
        assert started.wait(30)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, _, err = finish(proc, timeout=30)  # stderr, through the file read from above
        took = time.monotonic() - t0
        assert ended.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # Promptly means before uvicorn's graceful shutdown (3 s) gave up on the open stream,
    # which it says on stderr; not a wall-clock bound a busy machine can overrun.
    assert "timeout graceful shutdown exceeded" not in err, err
    assert took < 30, took  # not the step's 60 s
    assert proc.returncode in (0, 130, -signal.SIGINT), proc.returncode
    assert "Traceback" not in err, err
    assert "ERROR" not in err, err
    types = [e["event"] for e in seen]
    assert types[-2:] == ["RunCancelled", "RunFinished"], types
    finished = json.loads(seen[-1]["data"])
    assert finished["state"] == "cancelled"
    assert finished["reason"] == "the web server stopped"
