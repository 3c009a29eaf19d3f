"""The tools' behaviour, in memory against the real server object (one session per server)."""

from __future__ import annotations

import json
import os
import select
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from plansmith.domains.code import Commands, Timeouts, load_config, verify_chain
from plansmith.domains.code.server import create_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> cf.World:
    return cf.make_world(tmp_path_factory.mktemp("code-tools"))


@asynccontextmanager
async def client_for(
    world: cf.World, tier: str = "execute", **changes: Any
) -> AsyncIterator[Client]:
    config = load_config(
        world.repo,
        tier=tier,
        overrides={"worktree_root": str(world.worktrees), "state_dir": str(world.state)},
    )
    async with Client(create_server(replace(config, **changes))) as client:
        with anyio.fail_after(120):
            yield client


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.structured_content
    assert result.structured_content is not None
    return result.structured_content


def code(result: CallToolResult) -> str:
    assert result.is_error
    return str((result.structured_content or {})["error"]["code"])


async def test_read_file_pages_at_most_200_lines(world: cf.World) -> None:
    async with client_for(world, "read") as c:
        first = ok(await c.call_tool("read_file", {"path": "toolz/itertoolz.py"}))
        second = ok(
            await c.call_tool(
                "read_file", {"path": "toolz/itertoolz.py", "offset": 200, "limit": 5}
            )
        )
        too_many = await c.call_tool("read_file", {"path": "toolz/itertoolz.py", "limit": 201})
    assert len(first["lines"]) == 200
    assert first["next_offset"] == 200
    assert first["total_lines"] > 1000
    assert second["first_line"] == 201
    assert len(second["lines"]) == 5
    assert second["next_offset"] == 205
    assert code(too_many) == "invalid_arguments"


async def test_list_directory_hides_git_and_shows_links_unfollowed(world: cf.World) -> None:
    async with client_for(world, "read") as c:
        listing = ok(await c.call_tool("list_directory", {"path": "."}))
        page = ok(await c.call_tool("list_directory", {"path": "toolz", "limit": 3}))
        not_dir = await c.call_tool("list_directory", {"path": "README.rst"})
    kinds = {e["name"]: e["kind"] for e in listing["entries"]}
    assert ".git" not in kinds
    assert kinds["outside_link"] == "symlink"
    assert kinds["toolz"] == "directory"
    assert len(page["entries"]) == 3
    assert page["next_offset"] == 3
    assert code(not_dir) == "not_a_directory"


async def test_search_finds_lines_with_glob_and_regex(world: cf.World) -> None:
    async with client_for(world, "read") as c:
        found = ok(
            await c.call_tool(
                "search_in_files", {"pattern": r"^def frequencies\(", "regex": True, "glob": "*.py"}
            )
        )
        paged = ok(await c.call_tool("search_in_files", {"pattern": "import", "limit": 2}))
        bad = await c.call_tool("search_in_files", {"pattern": "(", "regex": True})
        missing = await c.call_tool("search_in_files", {"pattern": "x", "path": "nope"})
    assert [(m["path"], m["line"]) for m in found["matches"]] == [("toolz/itertoolz.py", 536)]
    assert len(paged["matches"]) == 2
    assert paged["next_offset"] == 2
    assert code(bad) == "invalid_regex"
    assert code(missing) == "not_found"


async def test_find_symbol_uses_ast_for_python_and_patterns_elsewhere(world: cf.World) -> None:
    async with client_for(world, "write") as c:
        method = ok(await c.call_tool("find_symbol", {"name": "curry.bind"}))
        ok(
            await c.call_tool(
                "write_file",
                {"path": "web/app.js", "content": "export async function greet(n) {\n}\n"},
            )
        )
        js = ok(await c.call_tool("find_symbol", {"name": "greet", "path": "web"}))
        bad = await c.call_tool("find_symbol", {"name": "x; rm"})
    assert [(m["path"], m["kind"], m["qualname"]) for m in method["matches"]] == [
        ("toolz/functoolz.py", "method", "curry.bind")
    ]
    assert js["matches"][0]["language"] == "javascript"
    assert js["matches"][0]["line"] == 1
    assert code(bad) == "invalid_arguments"


async def test_get_dependencies_reads_pyproject_and_requirements(world: cf.World) -> None:
    async with client_for(world, "write") as c:
        ok(
            await c.call_tool(
                "write_file",
                {
                    "path": "requirements-dev.txt",
                    "content": "# dev\npytest>=8  # runner\n-r base.txt\nrich[jupyter]==13.7\n",
                },
            )
        )
        deps = ok(await c.call_tool("get_dependencies", {}))
    by_name = {d["name"]: d for d in deps["dependencies"]}
    assert {"pyproject.toml", "setup.cfg", "requirements-dev.txt"} <= set(deps["sources"])
    assert by_name["setuptools"]["group"] == "build"
    assert by_name["setuptools"]["spec"] == ">=77"
    assert by_name["rich"]["spec"] == "[jupyter]==13.7"
    assert by_name["rich"]["group"] == "requirements-dev"


async def test_edit_file_refuses_missing_ambiguous_and_redacted_anchors(world: cf.World) -> None:
    async with client_for(world, "write") as c:
        missing = await c.call_tool(
            "edit_file", {"path": "toolz/utils.py", "old_string": "nope()", "new_string": "x"}
        )
        ambiguous = await c.call_tool(
            "edit_file",
            {"path": "toolz/itertoolz.py", "old_string": "return", "new_string": "return" + " "},
        )
        redacted = await c.call_tool(
            "edit_file",
            {
                "path": ".env",
                "old_string": "API_KEY=[REDACTED:openai-key]",
                "new_string": "API_KEY=x",
            },
        )
        every = ok(
            await c.call_tool(
                "edit_file",
                {
                    "path": "toolz/utils.py",
                    "old_string": "err",
                    "new_string": "error",
                    "replace_all": True,
                },
            )
        )
        diff = ok(await c.call_tool("get_diff", {"paths": ["toolz/utils.py"]}))
    assert code(missing) == "no_match"
    assert code(ambiguous) == "ambiguous_match"
    assert "lines" in (ambiguous.structured_content or {})["error"]["detail"]
    assert code(redacted) == "redacted_text"
    assert every["replacements"] > 1
    assert diff["files"] == ["M\ttoolz/utils.py"]
    assert any(line.startswith("+") for line in diff["lines"])


async def test_git_tools_refuse_bad_names_and_empty_commits(world: cf.World) -> None:
    async with client_for(world, "write") as c:
        empty = await c.call_tool("commit_changes", {"message": "nothing"})
        ok(await c.call_tool("create_branch", {"name": "feature/x"}))
        again = await c.call_tool("create_branch", {"name": "feature/x"})
        unknown = await c.call_tool("get_diff", {"base": "no-such-branch"})
        logs = await c.call_tool("get_build_logs", {"log_id": "test-9"})
    assert code(empty) == "nothing_to_commit"
    assert code(again) == "branch_exists"
    assert code(unknown) == "unknown_revision"
    assert code(logs) == "unknown_log"


async def test_write_tier_server_refuses_execute_tools(world: cf.World) -> None:
    async with client_for(world, "write") as c:
        names = {t.name for t in (await c.list_tools()).tools}
        denied = await c.call_tool("run_tests", {})
    assert "write_file" in names
    assert "run_tests" not in names
    assert code(denied) == "tier_denied"
    assert (denied.meta or {}).get("io.plansmith/retryable") is False


async def test_unconfigured_command_is_refused(world: cf.World) -> None:
    async with client_for(world, commands=Commands(test=None, build=None)) as c:
        assert code(await c.call_tool("run_build", {})) == "not_configured"


def _gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` ends within ``timeout`` seconds (waits on a pidfd, no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


async def test_slow_command_times_out_and_its_process_group_is_killed(
    world: cf.World, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    spawn = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "p.wait()\n"
    )
    commands = Commands(build=(sys.executable, "-c", spawn))
    async with client_for(world, commands=commands, timeouts=Timeouts(slow=2.0)) as c:
        result = await c.call_tool("run_build", {})
        logs = ok(await c.call_tool("get_build_logs", {}))
    assert code(result) == "timeout"
    assert (result.structured_content or {})["error"]["retryable"] is False
    assert _gone(int(pid_file.read_text()), 10.0)
    assert logs["lines"][-1] == "[killed: timeout or cancellation]"


async def test_every_call_is_audited_in_a_hash_chain(world: cf.World) -> None:
    async with client_for(world, "read") as c:
        await c.call_tool("read_file", {"path": "README.rst", "limit": 1})
        await c.call_tool("read_file", {"path": "../victim/canary.txt"})
    lines = (world.state / "audit.jsonl").read_text().splitlines()
    counts = verify_chain(lines)
    assert sum(counts.values()) == len(lines)
    last = [json.loads(line) for line in lines[-3:]]
    assert [r["event"] for r in last] == ["call", "result", "session_end"]
    assert last[1]["code"] == "path_outside_sandbox"
    tampered = [*lines[:-2], lines[-2].replace("path_outside_sandbox", "ok"), lines[-1]]
    with pytest.raises(ValueError, match="breaks the chain"):
        verify_chain(tampered)


async def test_a_handshake_era_client_gets_the_same_guarantees(world: cf.World) -> None:
    config = load_config(
        world.repo,
        tier="write",
        overrides={"worktree_root": str(world.worktrees), "state_dir": str(world.state)},
    )
    meta = {"io.plansmith/idempotency-key": "legacy/1"}
    async with Client(create_server(config), mode="legacy") as c:
        with anyio.fail_after(60):
            assert c.protocol_version == "2025-11-25"
            first = ok(await c.call_tool("write_file", {"path": "L.md", "content": "a"}, meta=meta))
            again = ok(await c.call_tool("write_file", {"path": "L.md", "content": "a"}, meta=meta))
            refused = await c.call_tool("read_file", {"path": "../victim/canary.txt"})
    assert first == again
    assert first["created"] is True
    assert code(refused) == "path_outside_sandbox"
