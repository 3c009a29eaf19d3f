"""``plansmith mcp --print-config HOST``: the JSON a host's config needs, and a host
that starts the command it names gets a working plansmith server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from _shared_servers import INDEX, SUMMARISE, docs_domain, problem_text, servers_json
from plansmith.cli import _register, app

# host -> (the key of its servers, the entry's keys)
SHAPES = {
    "claude": ("mcpServers", {"command", "args"}),
    "cursor": ("mcpServers", {"command", "args"}),
    "vscode": ("servers", {"type", "command", "args"}),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _domains(root: Path) -> None:
    folder = root / "domains" / "docs"
    folder.mkdir(parents=True)
    (folder / "domain.yaml").write_text(docs_domain(SUMMARISE, INDEX))
    (folder / "problem.yaml").write_text(problem_text(2, goal="indexed(d0)"))
    (folder / "servers.json").write_text(servers_json())


def _print_config(cwd: Path, host: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PLANSMITH_HOME", "PLANSMITH_LOG")}
    return subprocess.run(
        [sys.executable, "-m", "plansmith", "mcp", "--print-config", host, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _entry(host: str, text: str) -> dict[str, Any]:
    """The plansmith entry of a printed snippet, after checking the snippet's shape."""
    key, fields = SHAPES[host]
    snippet = json.loads(text)
    assert list(snippet) == [key]
    assert list(snippet[key]) == ["plansmith"]
    entry: dict[str, Any] = snippet[key]["plansmith"]
    assert set(entry) == fields
    assert entry.get("type", "stdio") == "stdio"
    assert Path(entry["command"]).is_absolute()
    assert all(isinstance(arg, str) for arg in entry["args"])
    return entry


async def _list_domains(entry: dict[str, Any], cwd: Path, errlog: Path) -> list[str]:
    """Start the entry's command as a host does (its own working folder, only the SDK's
    default environment) and call list_domains."""
    from mcp import Client, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=cwd)
    with anyio.fail_after(120), errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err), read_timeout_seconds=60) as client:
            result = await client.call_tool("list_domains", {})
    assert not result.is_error, result.content
    return [d["name"] for d in result.structured_content["domains"]]


@pytest.mark.anyio
@pytest.mark.parametrize("host", sorted(SHAPES))
async def test_the_printed_command_serves_plansmith_to_the_host(tmp_path: Path, host: str) -> None:
    _domains(tmp_path)
    done = _print_config(tmp_path, host, "--domains", "domains", "--home", "state")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "state").exists()  # printed, not served: no home opened
    entry = _entry(host, done.stdout)
    command = Path(entry["command"])
    if command.name.startswith("plansmith"):  # the console script beside this Python
        assert command.parent == Path(os.path.abspath(sys.executable)).parent
        assert entry["args"][0] == "mcp"
    else:
        assert entry["args"][:3] == ["-m", "plansmith", "mcp"]
    args = entry["args"][entry["args"].index("mcp") :]
    assert args == [
        "mcp", "--transport", "stdio", "--home", str(tmp_path / "state"),
        "--domains", str(tmp_path / "domains"),
    ]  # fmt: skip

    elsewhere = tmp_path / "elsewhere"  # the host's working folder is not the user's
    elsewhere.mkdir()
    names = await _list_domains(entry, elsewhere, tmp_path / "stderr.log")
    assert names == ["docs"]
    assert (tmp_path / "state" / "runs.db").is_file()
    assert not (elsewhere / "state").exists()


def test_paths_are_made_absolute_and_defaults_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLANSMITH_HOME", raising=False)
    monkeypatch.delenv("PLANSMITH_LOG", raising=False)
    args = ["mcp", "--print-config", "cursor", "--domains", "a", "--domains", "b"]
    args += ["--config", "conf/plansmith.yaml", "--research-source", "notes=docs/notes"]
    args += ["--research-source", "papers", "--log", "logs/runs.db", "--max-runs", "3"]
    args += ["--share-runs", "--server-idle", "0"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    entry = _entry("cursor", result.stdout)
    served = entry["args"][entry["args"].index("mcp") :]
    assert served == [
        "mcp", "--transport", "stdio", "--home", str(tmp_path / ".plansmith"),
        "--domains", str(tmp_path / "a"), "--domains", str(tmp_path / "b"),
        "--config", str(tmp_path / "conf" / "plansmith.yaml"), "--max-runs", "3",
        "--share-runs",
        "--research-source", f"notes={tmp_path / 'docs' / 'notes'}",
        "--research-source", str(tmp_path / "papers"),
        "--log", str(tmp_path / "logs" / "runs.db"), "--server-idle", "0.0",
    ]  # fmt: skip
    assert not (tmp_path / ".plansmith").exists()

    url = "postgresql://u:p@db:5432/plansmith"  # a shared log's URL is kept as it is
    result = CliRunner().invoke(app, ["mcp", "--print-config", "claude", "--log", url])
    assert result.exit_code == 0, result.stderr
    assert _entry("claude", result.stdout)["args"][-2:] == ["--log", url]


def test_without_a_console_script_the_entry_runs_this_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plansmith.cli._mcp_hosts import host_config

    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python3"))
    snippet = host_config("vscode", ["mcp", "--transport", "stdio"])
    assert snippet == {
        "servers": {
            "plansmith": {
                "type": "stdio",
                "command": str(tmp_path / "bin" / "python3"),
                "args": ["-m", "plansmith", "mcp", "--transport", "stdio"],
            }
        }
    }


def test_an_unknown_host_is_refused_with_the_three_named(tmp_path: Path) -> None:
    done = _print_config(tmp_path, "zed", "--home", "state")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "unknown host 'zed' for --print-config" in done.stderr
    assert "hint: use --print-config claude, vscode or cursor" in done.stderr
    assert not (tmp_path / "state").exists()


def test_print_config_is_for_stdio_only(tmp_path: Path) -> None:
    done = _print_config(tmp_path, "vscode", "--transport", "http", "--home", "state")
    assert done.returncode == 2
    assert "--print-config writes a host's stdio entry" in done.stderr
    assert not (tmp_path / "state").exists()
