"""A real plan through the npm reference servers: memory, then filesystem.

The servers are installed by ``npm ci --prefix tests/servers/_npm`` (``.ci/run``
does it); without them this test is skipped with that instruction.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from plansmith.engine import Engine, RunInputs

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(__file__).parent / "_npm" / "node_modules" / ".bin"
EXAMPLE = ROOT / "examples" / "doc-pipeline"

BINDINGS = """\
bindings:
  summarise:
    server: memory
    tool: create_entities
    arguments:
      entities:
        - {name: "${d}", entityType: summary, observations: ["summary of ${d}"]}
    outputs:
      created: "$.json[0].name"
    timeout: 30
    retries: 1
    idempotent: true
  index:
    server: files
    tool: write_file
    arguments:
      path: "${run.dir}/${d}.txt"
      content: "${summarise(d).created}"
    outputs:
      written: "$.text"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_doc_pipeline_runs_through_memory_and_filesystem_servers(tmp_path: Path) -> None:
    if not (BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    home = tmp_path / "home"
    home.mkdir()
    servers = {
        "mcpServers": {
            "memory": {
                "command": str(BIN / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
                # the memory server rewrites its file on each call: two calls at once
                # lose one entity (seen here), so it takes one call at a time
                "maxInFlight": 1,
            },
            "files": {"command": str(BIN / "mcp-server-filesystem"), "args": [str(home)]},
        }
    }
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    (tmp_path / "bindings.yaml").write_text(BINDINGS)
    inputs = RunInputs(
        EXAMPLE / "domain.yaml",
        EXAMPLE / "problem.yaml",
        tmp_path / "servers.json",
        tmp_path / "bindings.yaml",
    )
    engine = Engine(home)
    with anyio.fail_after(120):
        outcome = await engine.run(inputs, approve=True)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    run_dir = home / "runs" / outcome.run_id
    assert (run_dir / "notes.txt").read_text() == "notes"
    assert (run_dir / "q3.txt").read_text() == "q3"
    memory = [json.loads(line) for line in (tmp_path / "memory.jsonl").read_text().splitlines()]
    assert sorted(m["name"] for m in memory if m.get("type") == "entity") == ["notes", "q3"]


OPTIONAL_BINDINGS = BINDINGS.replace(
    'created: "$.json[0].name"', 'created: {path: "$.json[0].name", default: "exists"}'
)


def _memory_and_files(tmp_path: Path, home: Path, bindings: str) -> RunInputs:
    servers = {
        "mcpServers": {
            "memory": {
                "command": str(BIN / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
                "maxInFlight": 1,
            },
            "files": {"command": str(BIN / "mcp-server-filesystem"), "args": [str(home)]},
        }
    }
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    (tmp_path / "bindings.yaml").write_text(bindings)
    return RunInputs(
        EXAMPLE / "domain.yaml",
        EXAMPLE / "problem.yaml",
        tmp_path / "servers.json",
        tmp_path / "bindings.yaml",
    )


async def test_the_memory_example_runs_twice_with_an_optional_output(tmp_path: Path) -> None:
    """``create_entities`` answers ``[]`` for an entity the graph has: the second run
    takes the output's default instead of failing."""
    if not (BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    home = tmp_path / "home"
    home.mkdir()
    inputs = _memory_and_files(tmp_path, home, OPTIONAL_BINDINGS)
    written: list[tuple[str, str]] = []
    for _ in range(2):
        engine = Engine(home)
        try:
            with anyio.fail_after(120):
                outcome = await engine.run(inputs, approve=True)
        finally:
            engine.close()
        assert outcome.state == "succeeded", outcome.reason
        run_dir = home / "runs" / outcome.run_id
        written.append(((run_dir / "notes.txt").read_text(), (run_dir / "q3.txt").read_text()))
    assert written == [("notes", "q3"), ("exists", "exists")]


async def test_a_required_output_that_matches_nothing_says_where_it_stopped(
    tmp_path: Path,
) -> None:
    if not (BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    home = tmp_path / "home"
    home.mkdir()
    inputs = _memory_and_files(tmp_path, home, BINDINGS)
    states: list[str] = []
    for _ in range(2):
        engine = Engine(home)
        try:
            with anyio.fail_after(120):
                outcome = await engine.run(inputs, approve=True)
        finally:
            engine.close()
        states.append(outcome.state)
    assert states == ["succeeded", "failed"]
    reason = outcome.reason or ""
    assert (
        "extraction_error: output 'created': $.json[0].name matched nothing in the result:"
        " $.json is an empty list"
    ) in reason
