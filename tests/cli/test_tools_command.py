"""``plansmith tools``: real servers over stdio, some of which fail at each stage of their
start; each failure is a typed error of its own server, and the others' tools are listed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from _shared_servers import COUNTER

BARE = COUNTER.parent / "bare_server.py"
NPM_BIN = Path(__file__).resolve().parents[1] / "servers" / "_npm" / "node_modules" / ".bin"


def _invoke(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    import plansmith.cli._tools  # noqa: F401
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _servers(tmp_path: Path, **servers: dict[str, object]) -> str:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return str(path)


def _python(*args: str, **env: str) -> dict[str, object]:
    return {"command": sys.executable, "args": list(args), "env": env}


@pytest.fixture
def mixed(tmp_path: Path) -> str:
    """A servers file whose servers fail at every stage, and one that works."""
    return _servers(
        tmp_path,
        counter=_python(str(COUNTER)),
        missing={"command": str(tmp_path / "no-such-server")},
        dies=_python(str(COUNTER), COUNTER_DIE_AT_START="1"),
        refuses=_python(str(BARE), "refuse"),
        empty=_python(str(BARE), "notools"),
        nolist=_python(str(BARE), "nolist"),
    )


def test_json_gives_each_server_its_stage_and_typed_error(mixed: str) -> None:
    code, out, _ = _invoke("tools", "-s", mixed, "--json")
    assert code == 5  # ServerStartError's exit code: some server failed
    found = {s["name"]: s for s in json.loads(out)["servers"]}
    assert list(found) == ["counter", "missing", "dies", "refuses", "empty", "nolist"]
    counter = found["counter"]
    assert (counter["ok"], counter["started"], counter["initialised"]) == (True, True, True)
    assert counter["stage"] == "ready"
    assert counter["error"] is None
    assert counter["server"]["name"] == "counter"
    assert counter["tool_count"] == len(counter["tools"]) > 5
    assert isinstance(counter["seconds_to_ready"], float)
    work = next(t for t in counter["tools"] if t["name"] == "work")
    assert work["input_schema"]["required"] == ["name"]
    assert work["output_schema"]["type"] == "object"
    assert work["description"].startswith("Do some work once per idempotency key")
    expected = {
        "missing": ("start", False, False, "did not start"),
        "dies": ("initialize", True, False, "did not answer initialize"),
        "refuses": ("initialize", True, False, "did not answer initialize: not today"),
        "empty": ("tools", True, True, "lists no tools"),
        "nolist": ("tools", True, True, "answered initialize, but not tools/list"),
    }
    for name, (stage, started, initialised, said) in expected.items():
        server = found[name]
        assert (server["stage"], server["started"], server["initialised"]) == (
            stage,
            started,
            initialised,
        ), name
        assert not server["ok"]
        assert server["seconds_to_ready"] is None
        assert server["error"]["type"] == "ServerStartError"
        assert server["error"]["stage"] == stage
        assert said in server["error"]["message"], name
        assert server["error"]["location"].startswith(mixed)  # the server's place in the file
        assert server["error"]["hint"]
    assert "no program" in found["missing"]["error"]["hint"]


def test_table_lists_the_good_servers_tools_and_each_failure(mixed: str) -> None:
    code, out, err = _invoke("tools", "-s", mixed)
    assert code == 5
    assert "counter (stdio; counter 1.0" in out
    assert "started yes  initialised yes  tools " in out
    assert "name*: string" in out  # a required input, marked
    assert "failed at start: server 'missing' did not start" in out
    assert "failed at tools: server 'empty' lists no tools" in out
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 5
    assert all("servers.json:" in line for line in errors)


def test_servers_named_are_the_only_ones_started(mixed: str) -> None:
    code, out, _ = _invoke("tools", "-s", mixed, "counter", "--json")
    assert code == 0
    assert [s["name"] for s in json.loads(out)["servers"]] == ["counter"]


def test_an_unknown_server_name_lists_the_servers_there_are(mixed: str) -> None:
    code, _, err = _invoke("tools", "-s", mixed, "countr")
    assert code == 5
    assert "no server 'countr' in the servers config" in err
    assert "servers are: counter, missing" in err


def test_a_malformed_servers_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": {"x": {"comand": "y"}}}')
    code, _, err = _invoke("tools", "-s", str(path))
    assert code == 2
    assert "unknown key 'comand'" in err


def test_annotations_of_a_reference_server_are_shown(tmp_path: Path) -> None:
    if not (NPM_BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    memory = {
        "command": str(NPM_BIN / "mcp-server-memory"),
        "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
    }
    path = _servers(tmp_path, memory=memory)
    code, out, _ = _invoke("tools", "-s", path, "--json")
    assert code == 0
    tools = {t["name"]: t for t in json.loads(out)["servers"][0]["tools"]}
    assert tools["read_graph"]["annotations"]["readOnlyHint"] is True
    assert tools["delete_entities"]["annotations"]["destructiveHint"] is True
    assert tools["create_entities"]["title"] == "Create Entities"
    code, out, _ = _invoke("tools", "-s", path)
    assert code == 0
    assert "read-only, not destructive, idempotent" in out
