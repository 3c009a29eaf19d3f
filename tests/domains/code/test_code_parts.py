"""The server's parts on their own: config, tiers, backpressure, idempotency, sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import _code_fixtures as cf
import anyio
import pytest
from mcp.types import CallToolResult, TextContent

from plansmith.domains.code import RefusedError, SessionManager, Tier, UnavailableError, load_config
from plansmith.domains.code._backpressure import Backpressure
from plansmith.domains.code._idempotency import Once, key_of
from plansmith.domains.code._tiers import allowed, parse_tier
from plansmith.errors import InputError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> cf.World:
    return cf.make_world(tmp_path_factory.mktemp("code-parts"))


def test_project_file_declares_the_commands_and_the_server_config_wins(
    world: cf.World, tmp_path: Path
) -> None:
    server = tmp_path / "server.toml"
    server.write_text(
        'tier = "write"\nmax_concurrent = 3\n[commands]\nbuild = ["make"]\n[timeouts]\nslow = 5\n'
    )
    config = load_config(world.repo, config_file=server)
    assert config.tier is Tier.WRITE
    assert config.max_concurrent == 3
    assert config.timeouts.slow == 5.0
    assert config.commands.build == ("make",)
    assert config.commands.test is not None
    assert config.commands.test[:3] == (
        "python",
        "-m",
        "pytest",
    )
    assert not config.worktree_root.is_relative_to(world.repo)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("tier = ", "not valid"),
        ('[commands]\ntest = "pytest -q; rm -rf /"\n', "argv"),
        ("max_concurrent = 0\n", "positive"),
        ('tier = "root"\n', "unknown tier"),
        ('worktree_root = "{repo}/wt"\n', "overlaps"),
    ],
)
def test_bad_configs_are_refused_with_location_and_hint(
    world: cf.World, tmp_path: Path, content: str, fragment: str
) -> None:
    path = tmp_path / "server.toml"
    path.write_text(content.replace("{repo}", str(world.repo)))
    with pytest.raises(InputError) as error:
        load_config(world.repo, config_file=path)
    assert fragment in str(error.value)
    assert error.value.hint
    assert error.value.location is not None


def test_an_unknown_tier_in_the_config_file_fails_at_start_up_naming_the_file(
    world: cf.World, tmp_path: Path
) -> None:
    path = tmp_path / "c1.toml"
    path.write_text('tier = "admin"\n')
    command = [sys.executable, "-m", "plansmith.domains.code.server", "--repo", str(world.repo)]
    done = subprocess.run(
        [*command, "--config", str(path)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"plansmith-code: {path.resolve()}: unknown tier 'admin'")
    assert "hint: use one of: read, write, execute" in done.stderr


def test_an_unknown_tier_not_from_a_file_names_no_file(world: cf.World, tmp_path: Path) -> None:
    path = tmp_path / "c1.toml"
    path.write_text('tier = "admin"\n')
    assert load_config(world.repo, tier="write", config_file=path).tier is Tier.WRITE
    with pytest.raises(InputError, match="unknown tier 'admin'") as error:
        load_config(world.repo, tier="admin")
    assert error.value.location is None


def test_a_folder_without_git_is_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a git repository"):
        load_config(tmp_path)


def test_tiers_are_cumulative_and_fixed() -> None:
    assert allowed(Tier.EXECUTE, "write_file")
    assert allowed(Tier.WRITE, "read_file")
    assert not allowed(Tier.READ, "write_file")
    assert not allowed(Tier.WRITE, "run_tests")
    assert not allowed(Tier.EXECUTE, "exec_shell")
    assert parse_tier(" Execute ") is Tier.EXECUTE
    with pytest.raises(InputError):
        parse_tier("admin")


async def test_backpressure_turns_away_the_call_beyond_the_limit() -> None:
    pressure = Backpressure(2)
    release = anyio.Event()
    entered = 0

    async def hold() -> None:
        nonlocal entered
        async with pressure.slot():
            entered += 1
            await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(hold)
        group.start_soon(hold)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(UnavailableError) as busy:
            async with pressure.slot():
                pass
        release.set()
    assert busy.value.code == "busy"
    assert busy.value.retryable
    assert (entered, pressure.admitted, pressure.rejected, pressure.peak, pressure.active) == (
        2,
        2,
        1,
        2,
        0,
    )


def _result(text: str, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


async def test_once_replays_successes_refuses_reuse_and_retries_failures() -> None:
    once = Once()
    calls = 0

    async def body() -> CallToolResult:
        nonlocal calls
        calls += 1
        return _result(f"call {calls}", error=calls == 1)

    failed, _ = await once.run("k", "create_branch", {"name": "a"}, body)
    first, replayed_first = await once.run("k", "create_branch", {"name": "a"}, body)
    second, replayed = await once.run("k", "create_branch", {"name": "a"}, body)
    assert failed.is_error
    assert not replayed_first
    assert replayed
    assert second is first
    assert calls == 2
    with pytest.raises(RefusedError) as conflict:
        await once.run("k", "create_branch", {"name": "b"}, body)
    assert conflict.value.code == "idempotency_conflict"
    assert key_of({"io.plansmith/idempotency-key": "run/s1"}) == "run/s1"
    assert key_of(None) is None
    with pytest.raises(RefusedError):
        key_of({"io.plansmith/idempotency-key": "x" * 300})


def test_idle_sessions_expire_and_their_worktrees_go(world: cf.World, tmp_path: Path) -> None:
    now = [0.0]
    config = load_config(
        world.repo,
        overrides={
            "worktree_root": str(tmp_path / "wt"),
            "state_dir": str(tmp_path / "st"),
            "session_ttl_seconds": 60,
        },
    )
    manager = SessionManager(config, clock=lambda: now[0])
    session = manager.get()
    assert (session.worktree / "README.rst").is_file()
    now[0] = 30.0
    assert manager.expire_idle() == []
    manager.get()  # used at t=30: idle time restarts
    now[0] = 89.0
    assert manager.expire_idle() == []
    now[0] = 91.0
    assert manager.expire_idle() == [session.id]
    assert not session.worktree.exists()
    assert not session.logs.exists()
    with pytest.raises(RefusedError) as expired:
        manager.get()
    assert expired.value.code == "session_expired"
    assert session.id not in cf.git(world.repo, "worktree", "list")


def test_worktrees_of_dead_servers_are_swept(world: cf.World, tmp_path: Path) -> None:
    config = load_config(
        world.repo,
        overrides={"worktree_root": str(tmp_path / "wt"), "state_dir": str(tmp_path / "st")},
    )
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = SessionManager(config).get()
    marker = config.worktree_root / f"{orphan.id}.json"
    marker.write_text(json.dumps({"pid": int(dead.stdout), "repo": str(world.repo)}))
    live = SessionManager(config)
    kept = live.get()
    assert live.sweep_stale() == 1
    assert not orphan.worktree.exists()
    assert not marker.exists()
    assert kept.worktree.exists()
    live.close_all()
    assert not kept.worktree.exists()
    assert list(config.worktree_root.iterdir()) == []
