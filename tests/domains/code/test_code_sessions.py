"""Session isolation over stdio: 20 concurrent clients, each its own server process and worktree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _code_fixtures as cf
import anyio
import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

SESSIONS = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _session(
    world: cf.World,
    index: int,
    all_written: anyio.Event,
    written: list[int],
    seen: dict[int, dict[str, Any]],
) -> None:
    token = f"session-token-{index:02d}"
    async with Client(world.params("write")) as client:
        await client.list_tools()
        wrote = await client.call_tool(
            "write_file", {"path": "shared/notes.txt", "content": token + "\n"}
        )
        edited = await client.call_tool(
            "edit_file",
            {
                "path": "toolz/utils.py",
                "old_string": "def raises(",
                "new_string": f"# {token}\ndef raises(",
            },
        )
        assert not wrote.is_error, wrote.structured_content
        assert not edited.is_error, (edited.structured_content,)
        written.append(index)
        if len(written) == SESSIONS:
            all_written.set()
        await all_written.wait()  # every session has written before any reads
        notes = await client.call_tool("read_file", {"path": "shared/notes.txt"})
        found = await client.call_tool("search_in_files", {"pattern": "session-token-"})
        diff = await client.call_tool("get_diff", {})
        seen[index] = {
            "notes": (notes.structured_content or {}).get("lines"),
            "found": sorted(
                {m["text"] for m in (found.structured_content or {}).get("matches", [])}
            ),
            "diff": [
                line
                for line in (diff.structured_content or {}).get("lines", [])
                if "session-token" in line
            ],
            "untracked": (diff.structured_content or {}).get("untracked"),
        }


async def test_twenty_concurrent_sessions_never_see_each_others_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Twenty servers remove their worktrees at once, one at a time under the repository's
    # worktree lock; on a loaded machine that outlasts the SDK's 2 s grace before SIGTERM.
    # The subject here is isolation and clean-up at the session's end, so give it time
    # (a server killed mid-clean-up is swept at the next start: see test_sweep_*).
    import mcp.client.stdio

    monkeypatch.setattr(mcp.client.stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)
    world = cf.make_world(tmp_path)
    main_checkout = cf.snapshot(world.repo)
    all_written = anyio.Event()
    written: list[int] = []
    seen: dict[int, dict[str, Any]] = {}
    with anyio.fail_after(600):
        async with anyio.create_task_group() as group:
            for index in range(SESSIONS):
                group.start_soon(_session, world, index, all_written, written, seen)
    assert sorted(seen) == list(range(SESSIONS))
    for index, view in seen.items():
        token = f"session-token-{index:02d}"
        assert view["notes"] == [token]
        assert view["found"] == sorted([token, f"# {token}"])
        assert view["diff"] == [f"+# {token}"]
        assert view["untracked"] == ["shared/notes.txt"]
    assert cf.snapshot(world.repo) == main_checkout  # the main checkout is never touched
    assert list(world.worktrees.iterdir()) == []  # every session's worktree was removed at its end
    assert list((world.state / "sessions").iterdir()) == []
