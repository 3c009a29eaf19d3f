"""``plansmith research``: a real process with real corpus servers over the planted sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plansmith.domains.research import PLANTED_DIR

# The command is registered by importing its module (the lead's table lists it).
CLI = "import plansmith.cli._research; from plansmith.cli import app; app()"


def _research(
    tmp: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", CLI, "research", *args, "--home", str(tmp / "home")]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp, env=env, timeout=300, check=False
    )


def test_research_prints_a_cited_report_and_keeps_the_trace(tmp_path: Path) -> None:
    done = _research(
        tmp_path,
        "What is the latest version of Frobnicate?",
        "--source",
        f"notes={PLANTED_DIR / 'notes'}",
        "--source",
        str(PLANTED_DIR / "blog"),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    status, report = payload["status"], payload["report"]
    assert status["state"] == "succeeded"
    assert report["markdown"].startswith("# Research report:")
    assert "(notes: " in report["markdown"]
    disputed = [c for c in report["trace"]["conflicts"] if c["label"] == "disputed"]
    assert any(c["entity"] == "frobnicate" for c in disputed)
    trace_file = tmp_path / "home" / "runs" / status["run_id"] / "research.json"
    assert json.loads(trace_file.read_text())["trace"]["run_id"] == status["run_id"]
    assert "researching" in done.stderr or "write_report" in done.stderr


def test_a_small_search_budget_gives_a_coverage_limited_report(tmp_path: Path) -> None:
    done = _research(
        tmp_path,
        "How do I use tomllib?",
        "--source",
        str(PLANTED_DIR / "notes"),
        "--budget-searches",
        "2",
    )
    assert done.returncode == 0, done.stderr
    assert "**Coverage limited**" in done.stdout
    assert "2 searches, coverage limited" in " ".join(done.stderr.split())


def test_the_summary_line_is_whole_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    # rich would wrap at COLUMNS when it writes to a pipe, cutting the trace's path off
    env = {**os.environ, "COLUMNS": "80"}
    args = ("How do I use tomllib?", "--source", str(PLANTED_DIR / "notes"))
    done = _research(tmp_path, *args, "--budget-searches", "1", env=env)
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("research r-")
    run_id = last.split()[1].rstrip(":")
    assert last.endswith(f"; trace: {tmp_path / 'home' / 'runs' / run_id / 'research.json'}")


def test_a_missing_source_folder_is_an_input_error(tmp_path: Path) -> None:
    done = _research(tmp_path, "What is json?", "--source", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "no such folder" in done.stderr
    assert "hint:" in done.stderr
