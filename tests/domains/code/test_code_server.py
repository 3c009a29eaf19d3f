"""The real server over stdio: idempotency keys, backpressure, and the planted bug end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

pytestmark = pytest.mark.anyio

KEY = "io.plansmith/idempotency-key"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _data(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content


async def test_same_key_acts_once_and_returns_the_first_result(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path)
    before = cf.git(world.repo, "rev-list", "--all", "--count")
    async with Client(world.params("write")) as client:
        with anyio.fail_after(120):
            await client.list_tools()
            await client.call_tool("write_file", {"path": "NEW.md", "content": "new\n"})
            branch = [
                await client.call_tool(
                    "create_branch", {"name": "fix/one"}, meta={KEY: "run1/branch"}
                )
                for _ in range(2)
            ]
            commit = [
                await client.call_tool(
                    "commit_changes", {"message": "add NEW"}, meta={KEY: "run1/commit"}
                )
                for _ in range(2)
            ]
            # Concurrent duplicates wait for the first, and get its result too.
            concurrent: list[CallToolResult] = []

            async def commit_again() -> None:
                concurrent.append(
                    await client.call_tool(
                        "commit_changes", {"message": "add NEW"}, meta={KEY: "run1/commit"}
                    )
                )

            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(commit_again)
            conflict = await client.call_tool(
                "create_branch", {"name": "fix/two"}, meta={KEY: "run1/branch"}
            )
            unkeyed = await client.call_tool("create_branch", {"name": "fix/one"})
    assert not branch[0].is_error
    assert _data(branch[0]) == _data(branch[1])
    assert not commit[0].is_error
    assert _data(commit[0]) == _data(commit[1]) == _data(concurrent[0]) == _data(concurrent[2])
    assert _data(conflict)["error"]["code"] == "idempotency_conflict"
    assert (
        _data(unkeyed)["error"]["code"] == "branch_exists"
    )  # without the key the retry would fail
    assert cf.git(world.repo, "branch", "--list", "fix/*").split() == ["fix/one"]
    assert int(cf.git(world.repo, "rev-list", "--all", "--count")) == int(before) + 1
    assert cf.git(world.repo, "rev-parse", "fix/one").strip() == _data(commit[0])["commit"]
    audit = [json.loads(line) for line in (world.state / "audit.jsonl").read_text().splitlines()]
    outcomes = [
        r["outcome"] for r in audit if r["event"] == "result" and r["tool"] == "commit_changes"
    ]
    assert outcomes.count("ok") == 1
    assert outcomes.count("replayed") == 4


def _blocking_config(world: cf.World, release: Path, limit: int) -> Path:
    wait = f"import os, time\nwhile not os.path.exists({str(release)!r}):\n    time.sleep(0.01)\n"
    config = world.base / "server.json"
    config.write_text(
        json.dumps({"max_concurrent": limit, "commands": {"build": [sys.executable, "-c", wait]}})
    )
    return config


async def test_flood_beyond_the_limit_gets_busy_at_once(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path)
    release = tmp_path / "release"
    limit, flood = 2, 12
    params = world.params("execute", "--config", str(_blocking_config(world, release, limit)))
    results: list[CallToolResult] = []
    busy_seen = anyio.Event()
    async with Client(params, read_timeout_seconds=120) as client:
        await client.list_tools()
        await client.call_tool(
            "list_directory", {}
        )  # the session (worktree) exists before the flood

        async def build() -> None:
            results.append(await client.call_tool("run_build", {}))
            if sum(r.is_error for r in results) == flood - limit:
                busy_seen.set()

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for _ in range(flood):
                    group.start_soon(build)
                await (
                    busy_seen.wait()
                )  # the admitted builds block until every other call was turned away
                release.write_text("go")
    busy = [r for r in results if r.is_error]
    admitted = [r for r in results if not r.is_error]
    print(f"\nflood of {flood} at limit {limit}: {len(admitted)} admitted, {len(busy)} busy")
    assert len(admitted) == limit
    assert len(busy) == flood - limit
    for result in busy:
        error = _data(result)["error"]
        assert error["code"] == "busy"
        assert error["retryable"] is True
        assert (result.meta or {}).get("io.plansmith/retryable") is True


async def test_planted_bug_is_found_fixed_and_committed_on_a_branch(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path)
    cf.plant_bug(world)
    async with Client(world.params("execute"), read_timeout_seconds=600) as client:
        with anyio.fail_after(600):
            await client.list_tools()
            failing = _data(await client.call_tool("run_tests", {}))
            symbol = _data(await client.call_tool("find_symbol", {"name": "frequencies"}))
            where = symbol["matches"][0]
            code = _data(
                await client.call_tool(
                    "read_file", {"path": where["path"], "offset": where["line"] - 1, "limit": 15}
                )
            )
            await client.call_tool("create_branch", {"name": "fix/frequencies"})
            edit = await client.call_tool(
                "edit_file",
                {"path": where["path"], "old_string": "d[item] = 1", "new_string": "d[item] += 1"},
            )
            passing = _data(await client.call_tool("run_tests", {}))
            commit = _data(
                await client.call_tool("commit_changes", {"message": "fix frequencies counting"})
            )
            log = _data(await client.call_tool("get_build_logs", {"log_id": failing["log_id"]}))
    assert failing["exit_code"] != 0
    assert not failing["passed"]
    assert "toolz/tests/test_itertoolz.py::test_frequencies" in failing["failures"]
    assert "toolz/tests/test_recipes.py::test_countby" in failing["failures"]
    assert failing["counts"]["failed"] >= 1
    assert log["total_lines"] > 0
    assert any("test_frequencies" in line for line in log["lines"])
    assert where["path"] == "toolz/itertoolz.py"
    assert where["kind"] == "function"
    assert "        d[item] = 1" in code["lines"]
    assert not edit.is_error
    assert passing["passed"]
    assert passing["failures"] == []
    assert passing["counts"]["passed"] >= 190
    assert commit["branch"] == "fix/frequencies"
    assert commit["files"] == ["toolz/itertoolz.py"]
    assert cf.git(world.repo, "rev-parse", "fix/frequencies").strip() == commit["commit"]
    assert (
        "d[item] = 1" in (world.repo / "toolz" / "itertoolz.py").read_text()
    )  # main checkout untouched
