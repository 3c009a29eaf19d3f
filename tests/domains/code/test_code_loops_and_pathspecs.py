"""Code tools: a link loop and a folder that vanishes mid-call are
typed refusals (never ``internal_error`` with a traceback in the log), and paths reach
git as literal pathspecs (no ``*``, ``:/`` or ``:(top)*`` widening a commit or a diff)."""

from __future__ import annotations

import errno
import logging
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from plansmith.domains.code import _files as files_module
from plansmith.domains.code import _tools_read as read_module
from plansmith.domains.code import load_config
from plansmith.domains.code._paths import Resolved
from plansmith.domains.code.server import create_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> cf.World:
    return cf.make_world(tmp_path_factory.mktemp("code-loops"))


@asynccontextmanager
async def client_for(world: cf.World, tier: str = "write") -> AsyncIterator[Client]:
    config = load_config(
        world.repo,
        tier=tier,
        overrides={"worktree_root": str(world.worktrees), "state_dir": str(world.state)},
    )
    async with Client(create_server(config)) as client:
        with anyio.fail_after(120):
            yield client


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.structured_content
    assert result.structured_content is not None
    return result.structured_content


def refusal(result: CallToolResult) -> dict[str, Any]:
    """The structured error of a typed refusal (never ``internal_error``)."""
    assert result.is_error, result.structured_content
    error: dict[str, Any] = (result.structured_content or {})["error"]
    assert error["code"] != "internal_error", error
    assert error["type"] == "refused", error
    assert error["detail"], error
    assert error["suggested_fix"], error
    return error


async def session_tree(client: Client, world: cf.World) -> Path:
    """The worktree of ``client``'s session (opened by a first call)."""
    ok(await client.call_tool("list_directory", {"path": "."}))
    trees = [p for p in world.worktrees.iterdir() if p.is_dir()]
    assert len(trees) == 1, trees
    return trees[0]


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    unexpected = [r for r in caplog.records if r.exc_info or "unexpectedly" in r.getMessage()]
    assert unexpected == []


async def test_a_link_loop_is_a_typed_refusal(
    world: cf.World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with client_for(world) as c:
        tree = await session_tree(c, world)
        (tree / "loop").symlink_to("loop")
        (tree / "toolz" / "loop").symlink_to("loop")
        calls = [
            ("write_file", {"path": "loop", "content": "x\n"}),  # the issue's case
            ("write_file", {"path": "toolz/loop", "content": "x\n"}),
            ("write_file", {"path": "loop/inside.py", "content": "x\n"}),
            ("edit_file", {"path": "loop", "old_string": "a", "new_string": "b"}),
            ("read_file", {"path": "loop"}),
            ("list_directory", {"path": "loop"}),
            ("search_in_files", {"pattern": "x", "path": "loop"}),
            ("find_symbol", {"name": "x", "path": "loop"}),
        ]
        for tool, arguments in calls:
            error = refusal(await c.call_tool(tool, arguments))
            assert error["code"] == "symlink_loop", (tool, error)
            assert "symbolic links" in error["detail"]
        # the tools still work around it, the loop is untouched
        assert ok(await c.call_tool("list_directory", {"path": "."}))["total"] > 0
        assert (tree / "loop").is_symlink()
        assert str((tree / "loop").readlink()) == "loop"
    no_tracebacks(caplog)


async def test_a_folder_removed_mid_write_is_a_typed_refusal(
    world: cf.World, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is removed after it was reached, before the file is written in it."""
    caplog.set_level(logging.WARNING)
    real = files_module.beneath
    async with client_for(world) as c:
        tree = await session_tree(c, world)

        @contextmanager
        def vanishing(target: Resolved, **options: bool) -> Iterator[tuple[int, str]]:
            with real(target, **options) as (folder, name):
                shutil.rmtree(tree / "gone")
                yield folder, name

        monkeypatch.setattr(files_module, "beneath", vanishing)
        for path in ("gone/new.py", "gone/deeper/new.py"):
            error = refusal(await c.call_tool("write_file", {"path": path, "content": "x = 1\n"}))
            assert error["code"] == "not_found", error
            assert error["path"] == path
            assert "removed while the call ran" in error["detail"]
        monkeypatch.setattr(files_module, "beneath", real)
        ok(await c.call_tool("write_file", {"path": "gone/new.py", "content": "x = 1\n"}))
    no_tracebacks(caplog)


async def test_a_file_system_error_no_tool_typed_is_still_typed(
    world: cf.World, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's net: an entry gone while a folder is listed (raised as the OS would)."""
    caplog.set_level(logging.WARNING)

    def gone(_folder: int, name: str) -> object:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)

    monkeypatch.setattr(read_module, "_entry", gone)
    async with client_for(world, "read") as c:
        error = refusal(await c.call_tool("list_directory", {"path": "toolz"}))
    assert error["code"] == "not_found"
    no_tracebacks(caplog)


MAGIC = ["*", ":/", ":(top)*", ":(top)", ":(glob)**", ":!README.rst", "toolz/*.py"]


async def test_git_paths_are_literal_and_name_files_of_the_sandbox(world: cf.World) -> None:
    async with client_for(world) as c:
        tree = await session_tree(c, world)
        for name in ("toolz/utils.py", "README.rst"):
            ok(await c.call_tool("write_file", {"path": name, "content": "changed\n"}))
        for path in MAGIC:
            diff = await c.call_tool("get_diff", {"paths": [path]})
            assert refusal(diff)["code"] == "not_found", path
            commit = await c.call_tool("commit_changes", {"message": "m", "paths": [path]})
            assert refusal(commit)["code"] == "not_found", path
        assert cf.git(tree, "log", "--format=%s", "-1").strip() != "m"  # nothing committed
        # a file whose name holds glob characters is that file alone
        ok(await c.call_tool("write_file", {"path": "a*b.txt", "content": "star\n"}))
        ok(await c.call_tool("write_file", {"path": "aXb.txt", "content": "x\n"}))
        diff = ok(await c.call_tool("get_diff", {"paths": ["a*b.txt"]}))
        assert diff["untracked"] == ["a*b.txt"]
        assert diff["files"] == []
        committed = ok(
            await c.call_tool("commit_changes", {"message": "star", "paths": ["a*b.txt"]})
        )
        assert committed["files"] == ["a*b.txt"]
        # the other changes are still uncommitted
        left = ok(await c.call_tool("get_diff", {}))
        assert sorted(left["files"]) == ["M\tREADME.rst", "M\ttoolz/utils.py"]
        assert left["untracked"] == ["aXb.txt"]
