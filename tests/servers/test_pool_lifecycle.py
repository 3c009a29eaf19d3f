"""The pool's server lifecycle over real stdio servers: a lost server fails its calls at
once (``transport_lost``) and is restarted once, in the background; closing cancels a
start in progress and ends a stopped (SIGSTOP) server promptly; long answer lines are
read in linear time, up to a limit."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path

import _server_helpers as sh
import anyio
import pytest

from plansmith.errors import ServerStartError, ToolCallError
from plansmith.execution import TimeoutInvoker, ToolCall, ToolResult
from plansmith.servers import McpInvoker, ServerPool, StdioServer

pytestmark = pytest.mark.anyio

RAW = Path(__file__).parent / "_servers" / "raw_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _until(path: Path, lines: int) -> None:
    """Until ``path`` (a file a server appends to) has ``lines`` lines."""
    while not path.exists() or len(path.read_text().splitlines()) < lines:
        await anyio.sleep(0.01)


def _gated(tmp_path: Path, **env: str) -> tuple[StdioServer, Path, Path]:
    """The counter server with ``env``, whose restarts (its 2nd start on) wait until the
    test writes the gate file: the server, the gate, and the file of its starts."""
    gate, starts = tmp_path / "gate", tmp_path / "starts"
    env.update(COUNTER_STARTS=str(starts), COUNTER_START_GATE=str(gate), COUNTER_GATE_FROM="2")
    return sh.stdio(**env), gate, starts


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_calls_in_flight_on_a_killed_server_fail_transport_lost_at_once_and_it_restarts_once(
    tmp_path: Path,
) -> None:
    # four calls of ``work`` are held when the server SIGKILLs itself; its restart waits at
    # a gate the test opens only once all four have failed: they fail while it starts,
    # not at their timeout, and as transport_lost (re-sent), not timeout (not re-sent)
    server, gate, starts = _gated(
        tmp_path,
        COUNTER_HOLD_AFTER="0",
        COUNTER_HOLD_ONCE=str(tmp_path / "held"),
        COUNTER_KILL_HELD="4",
    )
    config = sh.servers(server)
    failed: dict[str, ToolCallError] = {}
    done: dict[str, ToolResult] = {}

    def call(i: int, attempt: int) -> ToolCall:
        return ToolCall("counter", "work", {"name": f"n{i}"}, f"r/s{i}", f"s{i}", attempt, 10.0)

    async def first(invoker: TimeoutInvoker, i: int) -> None:
        with pytest.raises(ToolCallError) as info:
            await invoker.invoke(call(i, 1))
        failed[f"s{i}"] = info.value

    async def again(invoker: TimeoutInvoker, i: int) -> None:
        done[f"s{i}"] = await invoker.invoke(call(i, 2))

    async with ServerPool(config, backoff_base=0.01) as pool:
        invoker = TimeoutInvoker(McpInvoker(pool))
        with anyio.fail_after(60):
            await pool.start()
            async with anyio.create_task_group() as tg:
                for i in range(4):
                    tg.start_soon(first, invoker, i)
            assert not gate.exists()
            assert {k: e.error_class for k, e in failed.items()} == dict.fromkeys(
                ("s0", "s1", "s2", "s3"), "transport_lost"
            )
            assert not any(e.final for e in failed.values())
            async with anyio.create_task_group() as tg:  # the re-sends wait for the restart
                for i in range(4):
                    tg.start_soon(again, invoker, i)
                await _until(starts, 2)  # the restarted server waits at its gate
                gate.write_text("open")
        assert {k: r.structured["done"] for k, r in done.items()} == {  # type: ignore[index]
            f"s{i}": f"n{i}!" for i in range(4)
        }
        assert pool._conns["counter"].generation == 2
    assert len(starts.read_text().splitlines()) == 2  # started, then restarted once


async def test_a_call_that_finds_its_server_restarting_waits_for_it_before_its_clock_starts(
    tmp_path: Path,
) -> None:
    # the server dies in ``die``; the next call comes while its restart waits at the gate
    server, gate, starts = _gated(tmp_path, COUNTER_DIE_ONCE=str(tmp_path / "died"))
    config = sh.servers(server)
    async with ServerPool(config, backoff_base=0.01) as pool:
        invoker = TimeoutInvoker(McpInvoker(pool))
        with anyio.fail_after(60):
            await pool.start()
            with pytest.raises(ToolCallError) as info:
                await invoker.invoke(ToolCall("counter", "die", {}, "r/s1", "s1", 1, 30.0))
            assert info.value.error_class == "transport_lost"
            waiting = pool.ready(ToolCall("counter", "echo", {"x": 1}, ""))
            assert waiting is not None  # restarting: a call waits for it first

            async def wait() -> None:
                await waiting

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await _until(starts, 2)
                gate.write_text("open")
            assert pool.ready(ToolCall("counter", "echo", {"x": 1}, "")) is None  # up again
            result = await invoker.invoke(ToolCall("counter", "die", {}, "r/s1", "s1", 2, 30.0))
    assert result.structured == {"survived": True}


async def test_a_call_waiting_for_a_slot_when_its_server_dies_fails_transport_lost_at_once(
    tmp_path: Path,
) -> None:
    # maxInFlight 1: ``sleep`` holds the slot, ``echo`` waits for it; the server is killed
    # and its restart waits at the gate: ``echo`` was never sent, and fails as lost too
    pid_file = tmp_path / "pid"
    server, gate, _ = _gated(tmp_path, COUNTER_PID_FILE=str(pid_file))
    config = sh.servers(dataclasses.replace(server, max_in_flight=1))
    classes: dict[str, str] = {}

    async def call(invoker: TimeoutInvoker, tool: str, arguments: dict[str, object]) -> None:
        with pytest.raises(ToolCallError) as info:
            await invoker.invoke(ToolCall("counter", tool, arguments, f"r/{tool}", tool, 1, 10.0))
        classes[tool] = info.value.error_class

    async with ServerPool(config, backoff_base=0.01) as pool:
        invoker = TimeoutInvoker(McpInvoker(pool))
        with anyio.fail_after(60):
            await pool.start()
            conn = pool._conns["counter"]
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, invoker, "sleep", {"seconds": 600})
                while conn.limiter.free:  # until ``sleep`` holds the slot
                    await anyio.sleep(0.01)
                tg.start_soon(call, invoker, "echo", {"x": 1})
                while not conn.limiter.waiters:  # until ``echo`` waits for it
                    await anyio.sleep(0.01)
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            assert not gate.exists()
            assert classes == {"sleep": "transport_lost", "echo": "transport_lost"}
            gate.write_text("open")


async def test_closing_the_pool_cancels_a_start_in_progress(tmp_path: Path) -> None:
    # the server's start never ends (its gate is never opened): closing does not wait
    # for it (nor for the start's deadline)
    starts, pid_file = tmp_path / "starts", tmp_path / "pid"
    config = sh.servers(
        sh.stdio(
            COUNTER_STARTS=str(starts),
            COUNTER_START_GATE=str(tmp_path / "gate"),
            COUNTER_PID_FILE=str(pid_file),
        )
    )
    errors: list[ServerStartError] = []

    async def start(pool: ServerPool) -> None:
        try:
            await pool.start()
        except ServerStartError as error:
            errors.append(error)

    with anyio.fail_after(30):  # the start's deadline (300 s) would pass it
        async with anyio.create_task_group() as tg, ServerPool(config, start_timeout=300) as pool:
            tg.start_soon(start, pool)
            await _until(starts, 1)
    assert len(errors) == 1
    assert "the server pool closed while the server started" in str(errors[0])
    assert _gone(int(pid_file.read_text()))


async def test_a_stopped_server_is_closed_promptly(tmp_path: Path) -> None:
    # SIGSTOP: the server sees neither its stdin close nor SIGTERM until it is continued;
    # closing continues it, and it ends by itself (as a healthy one does), not at SIGKILL
    exited, pid_file = tmp_path / "exited", tmp_path / "pid"
    config = sh.servers(sh.stdio(COUNTER_EXITED=str(exited), COUNTER_PID_FILE=str(pid_file)))
    with anyio.fail_after(30):
        async with ServerPool(config) as pool:
            await pool.start()
            pid = int(pid_file.read_text())
            os.kill(pid, signal.SIGSTOP)
    assert exited.read_text() == "exited\n"
    assert _gone(pid)


def _raw() -> StdioServer:
    return StdioServer("raw", sys.executable, (str(RAW),))


async def _huge_beside_a_held_call(pool: ServerPool, mb: float) -> tuple[object, ToolResult]:
    """``huge`` (``mb`` MB) while ``hold`` is in flight on the same server, whose answer the
    server writes right after the huge line: ``huge``'s result (or error) and ``hold``'s."""
    arrived = anyio.Event()
    held: list[ToolResult] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        arrived.set()

    async def hold() -> None:
        held.append(await pool.call("raw", "hold", {"n": 1}, on_progress=on_progress))

    outcome: object
    async with anyio.create_task_group() as tg:
        tg.start_soon(hold)
        await arrived.wait()
        try:
            outcome = await pool.call("raw", "huge", {"mb": mb})
        except ToolCallError as error:
            outcome = error
    return outcome, held[0]


async def test_a_20_mb_answer_line_is_read_and_the_call_behind_it_answered(
    tmp_path: Path,
) -> None:
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(sh.servers(_raw()), errlog=errlog, mode="legacy") as pool:
            with anyio.fail_after(60):  # does not hang; the SDK's reader took 2-9 s here
                await pool.start()
                huge, held = await _huge_beside_a_held_call(pool, 20)
            assert isinstance(huge, ToolResult)
            assert huge.structured == {"pad": "x" * 20_000_000}
            assert held.structured == {"got": {"n": 1}}
            assert pool._conns["raw"].generation == 1


async def test_an_answer_over_the_limit_fails_its_call_and_the_lines_after_it_are_read(
    tmp_path: Path,
) -> None:
    with (tmp_path / "err.log").open("w") as errlog:
        config = sh.servers(_raw())
        async with ServerPool(config, errlog=errlog, mode="legacy", max_answer_bytes=10**6) as pool:
            with anyio.fail_after(60):
                await pool.start()
                huge, held = await _huge_beside_a_held_call(pool, 2)
                small = await pool.call("raw", "huge", {"mb": 0.5})  # under the limit
            assert isinstance(huge, ToolCallError)
            assert huge.error_class == "protocol_error"
            assert "server 'raw'" in huge.message
            assert "longer than the limit of 1000000 bytes for one answer" in huge.message
            assert held.structured == {"got": {"n": 1}}
            assert small.structured == {"pad": "x" * 500_000}
            assert pool._conns["raw"].generation == 1  # the same session went on


class _FakeClientCancelledOnStart:
    """A stand-in for the SDK's Client whose start ends with a cancellation of its own
    (as the SDK's can when the server dies while it starts): no scope of the pool's is
    cancelled."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    async def __aenter__(self) -> None:
        await anyio.lowlevel.checkpoint()
        raise anyio.get_cancelled_exc_class()("Cancelled via cancel scope")

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_a_start_ended_by_the_sdks_own_cancellation_is_a_start_error_not_a_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import plansmith.servers._pool as pool_module

    monkeypatch.setattr(pool_module, "Client", _FakeClientCancelledOnStart)
    with anyio.fail_after(30):
        async with ServerPool(sh.servers(sh.stdio())) as pool:
            with pytest.raises(ServerStartError, match="ended while it started"):
                await pool.start()


class _FakeClientFailedInAGroupOnStart(_FakeClientCancelledOnStart):
    """A stand-in for the SDK's Client whose start ends with a group of the transport's
    error and a cancellation of the SDK's own (neither an Exception nor a cancellation)."""

    async def __aenter__(self) -> None:
        await anyio.lowlevel.checkpoint()
        cancelled = anyio.get_cancelled_exc_class()("Cancelled via cancel scope")
        raise BaseExceptionGroup("transport", [OSError("pipe closed at start"), cancelled])


async def test_a_start_ended_by_an_error_and_a_cancel_in_one_group_reports_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import plansmith.servers._pool as pool_module

    monkeypatch.setattr(pool_module, "Client", _FakeClientFailedInAGroupOnStart)
    with anyio.fail_after(30):
        async with ServerPool(sh.servers(sh.stdio(), sh.stdio("other"))) as pool:
            with pytest.raises(ServerStartError, match="pipe closed at start"):
                await pool.start()
