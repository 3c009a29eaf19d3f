"""The notes-to-git example, run as its README says: ``plansmith check``, then ``plansmith
run --yes --json``, over the real filesystem, memory and git MCP servers (stdio).

The example's servers.json starts the servers with ``npx -y`` and ``uvx`` (a user has the
network); here the same servers come from ``tests/servers/_npm`` (``npm ci --prefix
tests/servers/_npm``) and from the ``mcp-server-git`` package of the ``dev`` extra, with
every argument and setting of the shipped file kept.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "notes-to-git"
NPM_BIN = ROOT / "tests" / "servers" / "_npm" / "node_modules" / ".bin"
#: the shipped launcher of each server, and the local program that stands for it
NPX_PACKAGES = {
    "@modelcontextprotocol/server-filesystem@2026.8.31": "mcp-server-filesystem",
    "@modelcontextprotocol/server-memory@2026.8.31": "mcp-server-memory",
}
GIT_PACKAGE = "mcp-server-git@2026.10.19"


def _needs_servers() -> None:
    """Skip, saying how to install it, when a server the example drives is missing."""
    missing = [name for name in NPX_PACKAGES.values() if not (NPM_BIN / name).exists()]
    if missing or shutil.which("node") is None:
        pytest.skip(
            f"the npm MCP reference servers are not installed ({', '.join(missing) or 'node'}):"
            " run `npm ci --prefix tests/servers/_npm` (needs node and npm)"
        )
    if importlib.util.find_spec("mcp_server_git") is None:
        pytest.skip("mcp-server-git is not installed: run `.venv/bin/pip install -e '.[dev]'`")
    if shutil.which("git") is None:
        pytest.skip("the git server needs git: `apt-get install git`")


def _local(server: dict[str, Any]) -> dict[str, Any]:
    """A shipped server entry with its ``npx -y PACKAGE`` or ``uvx PACKAGE`` launcher
    replaced by the locally installed program; arguments, env and limits kept."""
    command, args = server["command"], list(server["args"])
    if command == "npx":
        assert args[:2] == ["-y", args[1]], args
        assert args[1] in NPX_PACKAGES, args
        local = {"command": str(NPM_BIN / NPX_PACKAGES[args[1]]), "args": args[2:]}
    else:
        assert (command, args[0]) == ("uvx", GIT_PACKAGE), (command, args)
        local = {"command": sys.executable, "args": ["-m", "mcp_server_git", *args[1:]]}
    return server | local


def _plansmith(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def test_the_shipped_servers_file_starts_the_servers_the_readme_names() -> None:
    servers = json.loads((EXAMPLE / "servers.json").read_text("utf-8"))["mcpServers"]
    assert {name: (s["command"], s["args"][:2]) for name, s in servers.items()} == {
        "files": ("npx", ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31"]),
        "memory": ("npx", ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]),
        "git": ("uvx", [GIT_PACKAGE, "--repository"]),
    }
    readme = (EXAMPLE / "README.md").read_text("utf-8")
    files = " ".join(f"examples/notes-to-git/{f}" for f in ("domain.yaml", "problem.yaml"))
    assert f"plansmith check {files}" in readme
    assert f"plansmith run {files}" in readme
    assert "--yes" in readme


def test_notes_to_git_runs_over_the_real_servers(tmp_path: Path) -> None:
    _needs_servers()
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "notes", work / "notes")
    (work / "repo").mkdir()
    _git(work / "repo", "init", "-q")
    shipped = json.loads((EXAMPLE / "servers.json").read_text("utf-8"))
    servers = {"mcpServers": {n: _local(s) for n, s in shipped["mcpServers"].items()}}
    (tmp_path / "servers.json").write_text(json.dumps(servers, indent=2), "utf-8")
    env = os.environ | {"NOTES_WORKDIR": str(work)}
    files = [
        str(EXAMPLE / "domain.yaml"),
        str(EXAMPLE / "problem.yaml"),
        "--servers",
        str(tmp_path / "servers.json"),
        "--bindings",
        str(EXAMPLE / "bindings.yaml"),
    ]

    check = _plansmith("check", *files, env=env, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert "ok: 8 steps bound to 6 of the" in check.stdout

    home = str(tmp_path / "home")
    run = _plansmith("run", *files, "--yes", "--json", "--home", home, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert (events[-1]["type"], events[-1]["state"]) == ("RunFinished", "succeeded")
    done = {e["action"]: e["outputs"] for e in events if e["type"] == "StepSucceeded"}
    assert set(done) == {
        "read_note",
        "record_note",
        "collect_notes",
        "write_summary",
        "stage_summary",
        "commit_summary",
    }
    # the two records may run in either order: the graph lists them as they came
    assert sorted(done["collect_notes"]["names"]) == ["groceries", "ideas"]
    run_id = events[0]["run_id"]

    # the commit exists, holds the summary, and names the run
    repo = work / "repo"
    assert _git(repo, "log", "--format=%s").splitlines() == [
        f"Add digest.md, the notes summary of plansmith run {run_id}"
    ]
    assert _git(repo, "ls-tree", "--name-only", "HEAD").split() == ["digest.md"]
    summary = _git(repo, "show", "HEAD:digest.md")
    names = json.dumps(done["collect_notes"]["names"], separators=(",", ":"))
    assert f"Notes in the memory graph after run {run_id}: {names}" in summary
    assert _git(repo, "status", "--porcelain") == ""
    assert done["commit_summary"]["commit"].endswith(_git(repo, "rev-parse", "HEAD").strip())

    # the memory graph holds one entity per note, with the note's text
    graph = [json.loads(line) for line in (work / "memory.jsonl").read_text().splitlines()]
    notes = {
        e["name"]: e["observations"]
        for e in graph
        if e["type"] == "entity" and e["entityType"] == "note"
    }
    assert notes == {
        name: [(work / "notes" / f"{name}.md").read_text("utf-8")]
        for name in ("groceries", "ideas")
    }
    assert summary.count('"entityType": "note"') == 2
