"""Servers kept warm between runs (``WarmPools``): real stdio servers, each start counted."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from _server_helpers import exited

from plansmith.errors import ServerStartError, ToolCallError
from plansmith.execution import ErrorClass
from plansmith.servers import ServerPool, ServersConfig, StdioServer, WarmPools

pytestmark = pytest.mark.anyio

WARM = Path(__file__).parent / "_servers" / "warm_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def warm_server(starts: Path, name: str = "warm", max_in_flight: int = 8, **env: str) -> Any:
    return StdioServer(
        name,
        sys.executable,
        (str(WARM),),
        (("WARM_STARTS", str(starts)), *env.items()),
        max_in_flight=max_in_flight,
    )


def started(starts: Path) -> list[int]:
    """The process ids of the server's starts, in order."""
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


async def structured(pool: Any, server: str, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await pool.call(server, tool, arguments)
    assert not result.is_error, result.text
    assert result.structured is not None
    return dict(result.structured)


async def logged(log: Path, line: str) -> None:
    """Wait until ``line`` is in ``log``: a server's stderr is copied by a thread of its
    own, which may write it after the call's answer came."""
    while line not in log.read_text():
        await anyio.sleep(0.01)


@asynccontextmanager
async def warm_pools(tmp_path: Path, **options: Any) -> AsyncIterator[WarmPools]:
    pools = WarmPools(tmp_path / "home" / "servers.log", **options)
    try:
        yield pools
    finally:
        with anyio.fail_after(60):
            await pools.aclose()


async def test_two_runs_and_a_check_start_a_server_once(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    async with warm_pools(tmp_path) as pools:
        pids = []
        for n in range(3):
            with (tmp_path / f"run{n}.log").open("w") as log, anyio.fail_after(60):
                async with pools.factory(config, log) as pool:
                    catalog = await pool.start(("warm",))
                    assert catalog.tool("warm", "hold") is not None
                    pids.append((await structured(pool, "warm", "pid"))["pid"])
                    await structured(pool, "warm", "say", text=f"run {n} here")
                    await logged(tmp_path / "home" / "servers.log", f"[warm] run {n} here")
        assert pools.running == ("warm",)
    assert len(set(pids)) == 1
    assert started(starts) == pids[:1]
    await exited(pids[0])  # aclose stopped it
    home_log = (tmp_path / "home" / "servers.log").read_text()
    assert "[plansmith] server 'warm' starts, to be kept warm" in home_log
    assert "[warm] run 0 here" in home_log
    assert "[warm] run 2 here" in home_log
    assert "[plansmith] server 'warm' stops: plansmith is stopping" in home_log
    run_log = (tmp_path / "run1.log").read_text()
    assert "[plansmith] server 'warm' is kept warm" in run_log
    assert str(tmp_path / "home" / "servers.log") in run_log
    assert "[warm] run 1 here" in run_log  # what it wrote while this run used it
    assert "run 0 here" not in run_log  # what it wrote before


async def test_the_same_server_in_two_files_is_one_process_another_env_is_another(
    tmp_path: Path,
) -> None:
    starts = tmp_path / "starts"
    a = ServersConfig((warm_server(starts, WARM_TAG="a"),), source="one/servers.json")
    same = ServersConfig((warm_server(starts, WARM_TAG="a"),), source="two/servers.json")
    other = ServersConfig((warm_server(starts, WARM_TAG="b"),))
    async with warm_pools(tmp_path) as pools:
        seen = []
        with anyio.fail_after(60):
            for config in (a, same, other):
                async with pools.factory(config, None) as pool:
                    await pool.start()
                    seen.append(await structured(pool, "warm", "pid"))
    assert seen[0] == seen[1]
    assert seen[2]["tag"] == "b"
    assert seen[2]["pid"] != seen[0]["pid"]
    assert sorted(started(starts)) == sorted({s["pid"] for s in seen})


async def test_a_killed_warm_server_is_restarted_on_the_next_call(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    async with warm_pools(tmp_path) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                await pool.start()
                first = (await structured(pool, "warm", "pid"))["pid"]
        os.kill(first, signal.SIGKILL)  # a server this test's pool started
        await exited(first)
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                await pool.start()  # its session looks alive until a call finds it dead
                with pytest.raises(ToolCallError) as lost:
                    await pool.call("warm", "pid", {})
                assert lost.value.error_class is ErrorClass.TRANSPORT_LOST
                assert not lost.value.final  # the runner sends the call again
                second = (await structured(pool, "warm", "pid"))["pid"]
    assert second != first
    assert started(starts) == [first, second]


async def test_the_idle_timeout_stops_a_server_no_run_uses(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    async with warm_pools(tmp_path, idle_timeout=0.5) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                await pool.start()
                pid = (await structured(pool, "warm", "pid"))["pid"]
        await exited(pid)  # stopped half a second after its run
        assert pools.running == ()
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:  # the next run starts another
                await pool.start()
                again = (await structured(pool, "warm", "pid"))["pid"]
    assert started(starts) == [pid, again]
    home_log = (tmp_path / "home" / "servers.log").read_text()
    assert "[plansmith] server 'warm' stops: no run used it for 0.5 s" in home_log


async def test_an_idle_timeout_of_zero_stops_a_server_when_its_last_run_ends(
    tmp_path: Path,
) -> None:
    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    async with warm_pools(tmp_path, idle_timeout=0) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as one, pools.factory(config, None) as two:
                await one.start()
                await two.start()
                pid = (await structured(one, "warm", "pid"))["pid"]
                assert (await structured(two, "warm", "pid"))["pid"] == pid
            # both ended: stopped at once
            await exited(pid)
    assert started(starts) == [pid]


async def test_tools_list_changed_makes_the_next_run_list_the_tools_again(
    tmp_path: Path,
) -> None:
    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    async with warm_pools(tmp_path) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                catalog = await pool.start()
                assert catalog.tool("warm", "extra") is None
                await structured(pool, "warm", "grow", name="extra")
            # the change comes as an event of the pool's subscriptions/listen stream
            # (2026-07-28), which may follow the call's answer: each run lists the tools
            # again once it has come, and not before
            while True:
                async with pools.factory(config, None) as pool:
                    catalog = await pool.start()
                    if catalog.tool("warm", "extra") is not None:
                        assert (await structured(pool, "warm", "extra")) == {"grown": "extra"}
                        break
                await anyio.sleep(0.01)
    assert len(started(starts)) == 1


async def test_a_legacy_servers_list_changed_notification_marks_its_tools_stale(
    tmp_path: Path,
) -> None:
    config = ServersConfig((warm_server(tmp_path / "starts"),))
    async with ServerPool(config, mode="legacy") as pool:  # the notification comes unasked
        with anyio.fail_after(60):
            assert (await pool.start()).tool("warm", "extra") is None
            await structured(pool, "warm", "grow", name="extra")
            while (await pool.start()).tool("warm", "extra") is None:
                await anyio.sleep(0.01)
            assert (await structured(pool, "warm", "extra")) == {"grown": "extra"}


async def test_max_in_flight_bounds_the_calls_of_two_runs_together(tmp_path: Path) -> None:
    config = ServersConfig((warm_server(tmp_path / "starts", max_in_flight=2),))
    async with warm_pools(tmp_path) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as one, pools.factory(config, None) as two:
                await one.start()
                await two.start()

                async def hold(pool: Any, n: int) -> None:
                    await structured(pool, "warm", "hold", seconds=0.3, name=f"c{n}")

                async with anyio.create_task_group() as tg:
                    for pool in (one, two):
                        for n in range(4):
                            tg.start_soon(hold, pool, n)
                peak = await structured(one, "warm", "peak")
    assert peak == {"peak": 2}


async def test_a_server_that_does_not_start_is_tried_afresh_by_the_next_run(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.py"
    script.write_text("import sys\nsys.stderr.write('not yet\\n')\nsys.exit(3)\n")
    config = ServersConfig((StdioServer("late", sys.executable, (str(script),)),))
    async with warm_pools(tmp_path) as pools:
        with (tmp_path / "run.log").open("w") as log, anyio.fail_after(60):
            async with pools.factory(config, log) as pool:
                with pytest.raises(ServerStartError) as failed:
                    await pool.start()
        assert "late" in failed.value.message
        home_log = tmp_path / "home" / "servers.log"
        assert failed.value.hint == f"see its error output in {home_log}"
        with anyio.fail_after(30):
            await logged(home_log, "[late] not yet")
        script.write_text((WARM).read_text())  # now it starts
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                catalog = await pool.start()
    assert catalog.tool("late", "pid") is not None


async def test_a_call_on_a_server_the_run_did_not_start_waits_for_its_start(
    tmp_path: Path,
) -> None:
    from plansmith.execution import ToolCall

    starts = tmp_path / "starts"
    config = ServersConfig((warm_server(starts),))
    call = ToolCall("warm", "pid", {}, "r/s1")
    async with warm_pools(tmp_path) as pools:
        with anyio.fail_after(60):
            async with pools.factory(config, None) as pool:
                waiting = pool.ready(call)  # what TimeoutInvoker awaits before the clock
                assert waiting is not None
                await waiting
                assert pool.ready(call) is None  # up: nothing to wait for
                result = await pool.invoke(call)
                assert pool.ready(ToolCall("nope", "pid", {}, "")) is None  # invoke says
                with pytest.raises(ToolCallError) as unknown:
                    await pool.invoke(ToolCall("nope", "pid", {}, ""))
    assert result.structured == {"pid": started(starts)[0], "tag": ""}
    assert unknown.value.error_class is ErrorClass.PROTOCOL_ERROR
