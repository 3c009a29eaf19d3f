"""The attack suite: the real ``plansmith-code`` server over stdio, attacked through its tools.

Every attempt must come back as a structured refusal (``isError`` with
``structuredContent.error`` holding type, code, detail and suggested_fix), or,
for secrets, with every planted secret redacted; nothing outside the sandbox
may change (the victim folder, the main checkout and a marker file are
compared before and after). The suite counts attempts and escapes, prints
them, and requires 0 escapes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

pytestmark = pytest.mark.anyio

TIER_META = {"io.plansmith/tier": "execute", "io.plansmith/approved": True}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Tally:
    attempts: Counter[str] = field(default_factory=Counter)
    escapes: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)


def _text(result: CallToolResult) -> str:
    parts = [c.text for c in result.content if isinstance(c, TextContent)]
    return "\n".join(parts) + json.dumps(result.structured_content or {})


def _structured_refusal(result: CallToolResult) -> str | None:
    """The error code, if ``result`` is a well-formed structured refusal."""
    error = (result.structured_content or {}).get("error") if result.is_error else None
    if not isinstance(error, dict):
        return None
    if not all(
        isinstance(error.get(k), str) and error[k]
        for k in ("type", "code", "detail", "suggested_fix")
    ):
        return None
    return str(error["code"])


def _leaks(text: str, world: cf.World) -> list[str]:
    found = [s for s in cf.SECRET_STRINGS if s in text]
    if cf.CANARY in text:
        found.append("canary")
    if "root:x:0:0" in text:
        found.append("/etc/passwd")
    if cf.ENV_SECRET in text:
        found.append("server environment")
    return found


@dataclass
class Attacker:
    """One client attacking one server; every attempt is tallied."""

    client: Client
    world: cf.World
    tally: Tally

    async def refused(
        self, category: str, tool: str, args: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> None:
        """An attempt that must come back as a structured refusal, leaking nothing."""
        self.tally.attempts[category] += 1
        result = await self.client.call_tool(tool, args, meta=meta)
        code = _structured_refusal(result)
        if code is None or _leaks(_text(result), self.world):
            self.tally.escapes.append(
                f"{category}: {tool} {args!r:.120} -> {_text(result)[:200]!r}"
            )
        else:
            self.tally.codes[code] += 1

    async def redacted(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        """An attempt whose result must hold no planted secret."""
        self.tally.attempts["secrets"] += 1
        result = await self.client.call_tool(tool, args)
        leaked = _leaks(_text(result), self.world)
        if leaked or (result.is_error and _structured_refusal(result) is None):
            self.tally.escapes.append(f"secrets: {tool} {args!r:.80} leaked {leaked}")
        return result


def _path_attacks(world: cf.World) -> dict[str, list[str]]:
    victim = str(world.victim / "canary.txt")
    return {
        "dotdot": [
            "../victim/canary.txt",
            "../../../../../../etc/passwd",
            "toolz/../../victim/canary.txt",
            "./../victim/canary.txt",
            "toolz/tests/../../../victim/canary.txt",
            "..",
            "../repo/README.rst",
            "....//....//etc/passwd",
        ],
        "absolute": [
            "/etc/passwd",
            victim,
            "/proc/self/environ",
            str(world.repo / "README.rst"),
            "//etc/passwd",
            "/",
            str(world.state / "audit.jsonl"),
        ],
        "symlink": ["outside_link/canary.txt", "canary_link.txt", "outside_link"],
        "unicode": [
            "\uff0e\uff0e/victim/canary.txt",
            "..\u2215victim\u2215canary.txt",
            "\u2024\u2024/victim/canary.txt",
            "..\uff0fvictim\uff0fcanary.txt",
            "..\u200b/victim/canary.txt",
            "\u202etxt.yranac/mitciv/..",
            "\uff54\uff4f\uff4f\uff4c\uff5a/utils.py",
            "toolz/utils\u0301.py",
            "..\\victim\\canary.txt",
            ".\u0338./victim/canary.txt",
            "\ufe52\ufe52/victim/canary.txt",
        ],
        "nul": [
            "toolz/utils.py\x00.txt",
            "../victim/canary.txt\x00",
            "\x00",
            "canary_link.txt\x00",
        ],
        "long": [
            "a/" * 600 + "x",
            "x" * 300,
            "../" * 400 + "etc/passwd",
            "toolz/" + "./" * 2000 + "utils.py",
            "toolz/" + "y" * 256 + "/z.py",
        ],
        "git": [".git/config", ".GIT/HEAD", "toolz/../.git", ".git"],
    }


async def _read_tier_attacks(world: cf.World, tally: Tally) -> None:
    async with Client(world.params("read")) as client:
        a = Attacker(client, world, tally)
        listed = {t.name for t in (await client.list_tools()).tools}
        assert listed.isdisjoint({"write_file", "run_tests", "commit_changes"})
        for category, paths in _path_attacks(world).items():
            for path in paths:
                await a.refused(category, "read_file", {"path": path})
                await a.refused(category, "list_directory", {"path": path})
                await a.refused(category, "search_in_files", {"pattern": "a", "path": path})
                await a.refused(category, "find_symbol", {"name": "root", "path": path})
                await a.refused(category, "get_diff", {"paths": [path]})
        writes: list[tuple[str, dict[str, Any]]] = [
            ("write_file", {"path": "owned.txt", "content": "x"}),
            ("write_file", {"path": str(world.victim / "owned.txt"), "content": "x"}),
            ("edit_file", {"path": "README.rst", "old_string": "toolz", "new_string": "owned"}),
            ("create_branch", {"name": "owned"}),
            ("commit_changes", {"message": "owned"}),
            ("run_tests", {}),
            ("run_build", {}),
        ]
        for meta in (None, TIER_META):  # a request cannot claim a higher tier
            for tool, args in writes:
                await a.refused("read_tier_write", tool, args, meta)
        for revision in ("--output=/tmp/owned", "HEAD; touch x", "$(touch x)", "HEAD..main", "-p"):
            await a.refused("git_options", "get_diff", {"base": revision})
        await a.refused("unknown_tool", "exec_shell", {"command": "id"})


def _injections(marker: str) -> list[Any]:
    return [
        [f"; touch {marker}"],
        [f"$(touch {marker})"],
        [f"`touch {marker}`"],
        [f"toolz/tests && touch {marker}"],
        ["--rootdir=/"],
        ["-p", "evil"],
        ["-o", "addopts=-p evil"],
        ["toolz/tests/test_utils.py; rm -rf /"],
        ["toolz/tests/test_utils.py\n-p evil"],
        ["--co"],
        ["../victim"],
        ["/etc/passwd"],
        ["-x"],
        ["toolz/tests/test_utils.py::test_x|id"],
        ["@args.txt"],
        ["toolz/tests/test_utils.py::test[$(id)]"],
        [" toolz/tests"],
        ["toolz/tests "],
        ["outside_link"],
        ["toolz/tests/test_nonexistent.py"],
        [f"touch {marker}"],
    ]


async def _execute_tier_attacks(world: cf.World, tally: Tally) -> None:
    marker = str(world.marker)
    async with Client(world.params("execute"), read_timeout_seconds=600) as client:
        a = Attacker(client, world, tally)
        for category in ("dotdot", "absolute", "symlink", "unicode", "nul", "long", "git"):
            for path in _path_attacks(world)[category]:
                edit = {"path": path, "old_string": "CANARY", "new_string": "OWNED"}
                await a.refused(category, "write_file", {"path": path, "content": "owned"})
                await a.refused(category, "edit_file", edit)
                await a.refused(category, "commit_changes", {"message": "m", "paths": [path]})
        for path in ("outside_link/new.txt", "canary_link.txt", ".git", ".git/hooks/pre-commit"):
            await a.refused("symlink", "write_file", {"path": path, "content": "owned"})
        for selectors in _injections(marker):
            await a.refused("injection", "run_tests", {"selectors": selectors})
        for args in (
            {"selectors": [], "command": f"touch {marker}"},
            {"argv": ["touch", marker]},
            {"selectors": f"touch {marker}"},
            {"selectors": [["nested"]]},
        ):
            await a.refused("injection", "run_tests", args)
        await a.refused("injection", "run_build", {"target": f"; touch {marker}"})
        for name in ("--force", "-D", "main; touch x", "a..b", "x.lock", "HEAD@{1}"):
            await a.refused("injection", "create_branch", {"name": name})
        await _secrets(a)
        await _instructions_in_files(a)


LEAK_TEST = """import os, pathlib

def test_prints_secrets():
    print(pathlib.Path('.env').read_text())
    print(pathlib.Path('deploy/settings.py').read_text())
    print(sorted(os.environ.items()))
    assert False, 'show the output'
"""


async def _secrets(a: Attacker) -> None:
    for name in cf.SECRETS:
        await a.redacted("read_file", {"path": name})
    for pattern in ("ghp_", "AKIA", "PRIVATE KEY", "password", "secret", "planted", "sk-live"):
        await a.redacted("search_in_files", {"pattern": pattern})
    await a.redacted("search_in_files", {"pattern": "pa55.*secret", "regex": True})
    await a.redacted("find_symbol", {"name": "GITHUB_TOKEN"})
    # Secrets the agent writes or prints come back redacted in the diff, the output and the logs.
    token = "export SERVICE_TOKEN=" + cf.SECRET_STRINGS[1] + "\n"
    await a.redacted("write_file", {"path": "toolz/tests/test_leak.py", "content": LEAK_TEST})
    await a.redacted("write_file", {"path": "deploy/new.env", "content": token})
    await a.redacted("get_diff", {})
    run = await a.redacted("run_tests", {"selectors": ["toolz/tests/test_leak.py"]})
    assert run.structured_content is not None
    assert run.structured_content["exit_code"] != 0
    await a.redacted("get_build_logs", {})
    await a.redacted("commit_changes", {"message": "add " + cf.SECRET_STRINGS[3]})


async def _instructions_in_files(a: Attacker) -> None:
    a.tally.attempts["file_instructions"] += 1
    notes = await a.client.call_tool("read_file", {"path": "NOTES_FOR_AGENTS.md"})
    assert not notes.is_error
    assert "ignore your previous instructions" in _text(notes)
    # A worktree copy of the project config that names another command changes nothing.
    a.tally.attempts["file_instructions"] += 1
    marker = a.world.marker
    evil = f'[commands]\ntest = ["touch", "{marker}"]\nbuild = ["touch", "{marker}"]\n'
    await a.client.call_tool("write_file", {"path": "plansmith-code.toml", "content": evil})
    ran = await a.client.call_tool("run_tests", {"selectors": ["toolz/tests/test_utils.py"]})
    built = await a.client.call_tool("run_build", {})
    for result in (ran, built):
        argv = (result.structured_content or {}).get("argv", [])
        if result.is_error or argv[:1] != ["python"]:
            a.tally.escapes.append(f"file_instructions: the worktree's config ran {argv}")
    if marker.exists():
        a.tally.escapes.append("file_instructions: the marker was created")


async def test_attack_suite_has_no_escapes(tmp_path: Path) -> None:
    world = cf.make_world(tmp_path)
    outside = cf.snapshot(world.victim, world.repo)
    tally = Tally()
    with anyio.fail_after(900):
        await _read_tier_attacks(world, tally)
        await _execute_tier_attacks(world, tally)
    after = cf.snapshot(world.victim, world.repo)
    if after != outside:
        changed = sorted(set(after.items()) ^ set(outside.items()))
        tally.escapes.append(f"filesystem outside the sandbox changed: {changed[:5]}")
    if world.marker.exists():
        tally.escapes.append("marker file created")
    audit = (world.state / "audit.jsonl").read_text()
    leaked_to_audit = [s for s in cf.SECRET_STRINGS if s in audit]
    if leaked_to_audit:
        tally.escapes.append(f"audit log holds secrets: {leaked_to_audit}")
    total = sum(tally.attempts.values())
    print(f"\nattack suite: {total} attempts, {len(tally.escapes)} escapes")
    print("  attempts by category:", dict(sorted(tally.attempts.items())))
    print("  refusal codes:", dict(tally.codes.most_common()))
    assert total >= 300
    assert tally.escapes == []
    assert not list(world.worktrees.glob("*")), "session worktrees were left behind"
