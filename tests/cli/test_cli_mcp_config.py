"""``plansmith mcp --config FILE``: the file's paths are read relative to the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _serve_until_stdin_ends(cwd: Path, *args: str) -> None:
    """``plansmith mcp`` over stdio with nothing to read: it opens its home and stops."""
    env = {k: v for k, v in os.environ.items() if k != "PLANSMITH_HOME"}
    done = subprocess.run(
        [sys.executable, "-m", "plansmith", "mcp", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_mcp_config_home_is_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "cwd").mkdir()
    config = tmp_path / "conf" / "plansmith.yaml"
    config.write_text("home: state\n")
    _serve_until_stdin_ends(tmp_path / "cwd", "--config", str(config))
    assert (tmp_path / "conf" / "state" / "runs.db").is_file()
    assert not (tmp_path / "cwd" / "state").exists()


def test_mcp_home_option_is_relative_to_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "cwd").mkdir()
    config = tmp_path / "conf" / "plansmith.yaml"
    config.write_text("max_runs: 2\n")
    _serve_until_stdin_ends(tmp_path / "cwd", "--config", str(config), "--home", "state")
    assert (tmp_path / "cwd" / "state" / "runs.db").is_file()
    assert not (tmp_path / "conf" / "state").exists()
