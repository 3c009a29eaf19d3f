"""Parsing pytest logs and ranking suspects (pure), and the plan tools in memory."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolResult

from plansmith.domains.code import load_config
from plansmith.domains.code._failures import (
    Failure,
    calls_in_test,
    index_module,
    is_test_file,
    parse_log,
    rank_suspects,
)
from plansmith.domains.code.server import create_server

LOG = """\
.....F.....F
=================================== FAILURES ===================================
_______________________________ test_frequencies _______________________________

    def test_frequencies():
>       assert frequencies(["cat", "cat"]) == {"cat": 2}
E       AssertionError: assert {'cat': 1} == {'cat': 2}

toolz/tests/test_itertoolz.py:263: AssertionError
_____________________________ TestBag.test_count _____________________________

    def test_count(self):
>       bag.count()
pkg/bag.py:12: in count
    raise ValueError("boom")
E   ValueError: boom

pkg/bag.py:12: ValueError
=========================== short test summary info ============================
FAILED toolz/tests/test_itertoolz.py::test_frequencies - AssertionError: asse...
FAILED pkg/tests/test_bag.py::TestBag::test_count - ValueError: boom
2 failed, 10 passed in 0.30s
"""


def test_log_gives_each_failure_its_message_and_frames() -> None:
    first, second = parse_log(LOG)
    assert first == Failure(
        "toolz/tests/test_itertoolz.py::test_frequencies",
        "toolz/tests/test_itertoolz.py",
        "test_frequencies",
        "AssertionError: assert {'cat': 1} == {'cat': 2}",
        (("toolz/tests/test_itertoolz.py", 263),),
    )
    assert second.function == "TestBag::test_count"
    assert second.message == "ValueError: boom"
    assert second.frames == (("pkg/bag.py", 12), ("pkg/bag.py", 12))


def test_a_passing_log_has_no_failures() -> None:
    assert parse_log("....\n4 passed in 0.01s\n") == []


@given(st.text(max_size=2000))
def test_any_text_parses_without_error(text: str) -> None:
    for failure in parse_log(text):
        assert failure.test
        assert len(failure.message) <= 500


SOURCE = """
def frequencies(seq):
    d = {}
    for item in seq:
        d[item] = 1
    return d

def countby(key, seq):
    return frequencies(map(key, seq))

class Bag:
    def count(self):
        raise ValueError("boom")
"""

TESTS = """
def test_frequencies():
    assert frequencies([1]) == {1: 1}

def test_countby():
    assert countby(len, ["a"]) == {1: 1}

class TestBag:
    def test_count(self):
        Bag().count()
"""


def test_a_symbol_behind_several_failures_ranks_first() -> None:
    defs = list(index_module(ast.parse(SOURCE), "pkg/core.py"))
    tests = ast.parse(TESTS)
    failures = [
        Failure("pkg/tests/t.py::test_frequencies", "pkg/tests/t.py", "test_frequencies"),
        Failure("pkg/tests/t.py::test_countby", "pkg/tests/t.py", "test_countby"),
    ]
    calls = {f.test: calls_in_test(tests, f.function) for f in failures}
    ranked = rank_suspects(failures, calls, defs)
    assert [(name, score) for name, score, _ in ranked] == [
        ("frequencies", 2.5),
        ("countby", 2.0),
    ]


def test_a_traceback_frame_inside_a_definition_outweighs_names() -> None:
    defs = list(index_module(ast.parse(SOURCE), "pkg/core.py"))
    failure = Failure(
        "pkg/tests/t.py::TestBag::test_count",
        "pkg/tests/t.py",
        "TestBag::test_count",
        frames=(("pkg/core.py", 13),),
    )
    calls = {failure.test: calls_in_test(ast.parse(TESTS), failure.function)}
    assert calls[failure.test] == frozenset({"Bag", "count"})
    ranked = rank_suspects([failure], calls, defs)
    assert ranked[0][0] == "count"
    assert ranked[0][1] == 5  # 3 for the frame, 1 for the name, 1 for the call
    assert "traceback passes pkg/core.py:13" in ranked[0][2][0]


def test_test_files_are_told_apart_from_project_files() -> None:
    assert is_test_file("toolz/tests/test_itertoolz.py")
    assert is_test_file("conftest.py")
    assert is_test_file("pkg/util_test.py")
    assert not is_test_file("toolz/itertoolz.py")


# -- the plan tools in memory ----------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def client_for(world: cf.World, tier: str, **changes: Any) -> AsyncIterator[Client]:
    config = load_config(
        world.repo,
        tier=tier,
        overrides={"worktree_root": str(world.worktrees), "state_dir": str(world.state)},
    )
    async with Client(create_server(replace(config, **changes))) as client:
        with anyio.fail_after(120):
            yield client


def _code(result: CallToolResult) -> str:
    assert result.is_error
    return str((result.structured_content or {})["error"]["code"])


def _patch(folder: Path, name: str, target: str, body: str = "x\n") -> str:
    folder.mkdir(exist_ok=True)
    text = (
        f"diff --git a/{target} b/{target}\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/{target}\n@@ -0,0 +1 @@\n+{body}"
    )
    (folder / f"{name}.patch").write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.anyio
async def test_apply_patch_refuses_paths_out_of_the_sandbox_and_changed_bytes(
    tmp_path: Path,
) -> None:
    world = cf.make_world(tmp_path)
    patches = tmp_path / "patches"
    good = _patch(patches, "good", "NEW.txt")
    cases = {
        "out": (_patch(patches, "out", "../victim/owned.txt"), "path_outside_sandbox"),
        "gitdir": (_patch(patches, "gitdir", ".git/hooks/post-commit"), "git_internals"),
        "link": (_patch(patches, "link", "outside_link/owned.txt"), "symlink_outside_sandbox"),
    }
    before = cf.snapshot(world.victim, world.repo)
    async with client_for(world, "write", patch_dir=patches) as client:
        for name, (digest, expected) in cases.items():
            result = await client.call_tool("apply_patch", {"name": name, "sha256": digest})
            assert _code(result) == expected, (name, result.structured_content)
        changed = await client.call_tool("apply_patch", {"name": "good", "sha256": "0" * 64})
        assert _code(changed) == "patch_changed"
        missing = await client.call_tool("apply_patch", {"name": "absent", "sha256": good})
        assert _code(missing) == "not_found"
        ok = await client.call_tool("apply_patch", {"name": "good", "sha256": f"sha256-{good}"})
        assert not ok.is_error, ok.structured_content
        assert (ok.structured_content or {})["files"] == ["NEW.txt"]
    async with client_for(world, "read", patch_dir=patches) as client:
        denied = await client.call_tool("apply_patch", {"name": "good", "sha256": good})
        assert _code(denied) == "tier_denied"
    async with client_for(world, "write") as client:
        unset = await client.call_tool("apply_patch", {"name": "good", "sha256": good})
        assert _code(unset) == "not_configured"
    assert cf.snapshot(world.victim, world.repo) == before
    assert not (world.victim / "owned.txt").exists()


@pytest.mark.anyio
async def test_require_pass_turns_a_red_run_into_a_refusal(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path)
    cf.plant_bug(world)
    selector = "toolz/tests/test_itertoolz.py::test_frequencies"
    async with client_for(world, "execute") as client:
        red = await client.call_tool("run_tests", {"selectors": [selector]})
        assert not red.is_error
        assert (red.structured_content or {})["passed"] is False
        parsed = await client.call_tool("parse_failures", {})
        assert (parsed.structured_content or {})["top_suspect"] == "frequencies"
        strict = await client.call_tool(
            "run_tests", {"selectors": [selector], "require_pass": True}
        )
        assert _code(strict) == "tests_failed"
        green = await client.call_tool(
            "run_tests",
            {"selectors": ["toolz/tests/test_itertoolz.py::test_groupby"], "require_pass": True},
        )
        assert not green.is_error
        nothing = await client.call_tool("parse_failures", {})
        assert _code(nothing) == "no_failures"
