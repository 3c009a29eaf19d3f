"""``plansmith init`` -> ``check`` -> ``run`` over four servers nobody here wrote, each
from its registry and pinned in the repo (npm ``@modelcontextprotocol/server-filesystem``
and ``server-memory`` in tests/servers/_npm/package-lock.json; PyPI ``mcp-server-git``
and ``mcp-server-time`` in the ``dev`` extra), as a new user runs the commands: the draft
is checked and a goal over all four servers runs to success with no hand edit of the
drafted domain or bindings."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from plansmith.engine import Engine
from plansmith.execution import StepSucceeded

NPM_BIN = Path(__file__).resolve().parents[1] / "servers" / "_npm" / "node_modules" / ".bin"


def _plansmith(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _servers(tmp_path: Path) -> Path:
    if not (NPM_BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    for module in ("mcp_server_git", "mcp_server_time"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: run `.venv/bin/pip install -e '.[dev]'`")
    (tmp_path / "root").mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=a@example.org", "-c", "user.name=A"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "notes.md").write_text("first notes\n")
    subprocess.run([*git, "add", "notes.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first notes"], check=True)
    servers = {
        "files": {
            "command": str(NPM_BIN / "mcp-server-filesystem"),
            "args": [str(tmp_path / "root")],
        },
        "memory": {
            "command": str(NPM_BIN / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            "maxInFlight": 1,
        },
        "git": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_git", "--repository", str(repo)],
        },
        "time": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        },
    }
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def test_init_check_and_run_over_four_registry_servers_with_no_hand_edit(tmp_path: Path) -> None:
    servers = _servers(tmp_path)
    init = _plansmith(tmp_path, "init", "-s", servers.name, "-o", "draft")
    assert init.returncode == 0, init.stderr
    assert "from 4 server(s) (files, git, memory, time)" in init.stdout
    draft = tmp_path / "draft"
    files = ["draft/domain.yaml", "-s", servers.name, "-b", "draft/bindings.yaml"]
    check = _plansmith(tmp_path, "check", files[0], "draft/problem.yaml", *files[1:])
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("ok: 1 steps bound"), check.stdout
    domain = (draft / "domain.yaml").read_text()
    for action in ("memory_read_graph", "git_git_log", "time_get_current_time"):
        assert f"  {action}:" in domain
    # the user's goal, over the drafted facts: what each server must have done
    (tmp_path / "goal.yaml").write_text(
        "problem: four-servers\ndomain: draft\n"
        "objects: {repo: repo_path, UTC: timezone}\ninit: []\n"
        "goal: [did_memory_read_graph(), did_git_git_status(repo), did_git_git_log(repo),"
        " did_time_get_current_time(UTC), did_files_list_allowed_directories()]\n"
    )
    run = _plansmith(tmp_path, "run", files[0], "goal.yaml", *files[1:], "--yes", "--home", "h")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "run succeeded" in run.stderr  # progress and outcome go to stderr
    engine = Engine(tmp_path / "h")
    try:
        (info,) = engine.log.runs()
        done = [e for e in engine.log.events(info.run_id) if isinstance(e, StepSucceeded)]
    finally:
        engine.close()
    assert {e.server for e in done} == {"files", "git", "memory", "time"}
    said = json.dumps({e.action: e.outputs for e in done})
    assert "first notes" in said  # git_log read the repository's commit
    assert "UTC" in said  # the time server answered for the timezone asked
