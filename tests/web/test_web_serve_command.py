"""``plansmith serve``: refuses unsafe or broken options, and serves the app on loopback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
from _web_helpers import write_domains
from typer.testing import CliRunner

import plansmith.cli._serve  # noqa: F401  (registers the command on the app)
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


def test_serve_answers_on_loopback_with_the_token(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    domains = write_domains(tmp_path)
    code = "import plansmith.cli._serve; from plansmith.cli import app; app()"
    args = ["serve", "--port", str(port), "--domains", str(domains), "--token", "t0k"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args, "--home", str(tmp_path / "home")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # a condition with a deadline, polled
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/api/domains", headers={"Authorization": "Bearer t0k"}
                )
                break
            except httpx.ConnectError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert response.status_code == 200
        assert response.json()[0]["name"] == "docs"
        assert httpx.get(f"http://127.0.0.1:{port}/api/domains").status_code == 401
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
