"""The server pool against our own SDK server: in memory, over stdio and streamable HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import _server_helpers as sh
import anyio
import pytest

from plansmith.errors import ExecutionError, ServerStartError, ToolCallError
from plansmith.execution import IDEMPOTENCY_META_KEY
from plansmith.servers import HttpServer, ServerPool, StdioServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_in_memory_server_lists_its_tools_and_gets_the_key() -> None:
    async with ServerPool(sh.servers(sh.in_process())) as pool:
        with anyio.fail_after(30):
            catalog = await pool.start()
            result = await pool.call("counter", "work", {"name": "a"}, key="run/s1")
    assert catalog.tool("counter", "work") is not None
    assert result.structured is not None
    assert result.structured["key"] == "run/s1"
    assert IDEMPOTENCY_META_KEY == "io.plansmith/idempotency-key"


async def test_is_error_result_comes_back_as_a_result_with_retryable_flag() -> None:
    async with ServerPool(sh.servers(sh.in_process())) as pool:
        with anyio.fail_after(30):
            result = await pool.call("counter", "fail", {"message": "m", "retryable": True})
    assert result.is_error
    assert result.retryable
    assert result.text == "m"


async def test_server_that_dies_at_start_up_gives_a_typed_error(tmp_path: Path) -> None:
    config = sh.servers(sh.stdio("bad", COUNTER_DIE_AT_START="1"))
    with (tmp_path / "err.log").open("w") as log:
        async with ServerPool(config, errlog=log) as pool:
            with anyio.fail_after(60), pytest.raises(ServerStartError) as info:
                await pool.start()
    assert "dying at start-up" in (tmp_path / "err.log").read_text()
    assert "bad" in info.value.message
    assert info.value.hint == f"see its error output in {tmp_path / 'err.log'}"


async def test_a_stdio_server_whose_output_went_to_the_terminal_is_to_be_run_by_hand(
    capfd: pytest.CaptureFixture[str],
) -> None:
    config = sh.servers(sh.stdio("bad", COUNTER_DIE_AT_START="1"))
    async with ServerPool(config) as pool:
        with anyio.fail_after(60), pytest.raises(ServerStartError) as info:
            await pool.start()
    assert "dying at start-up" in capfd.readouterr().err
    assert info.value.hint == "see its error output above (on stderr), or run its command by hand"


async def test_a_stdio_command_that_is_missing_or_not_executable_is_named_in_the_hint(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    config = sh.servers(
        StdioServer("gone", str(tmp_path / "no-such-server")),
        StdioServer("noexec", str(script)),
        StdioServer("elsewhere", "python3", cwd=str(tmp_path / "no-such-dir")),
    )
    async with ServerPool(config) as pool:
        with anyio.fail_after(60), pytest.raises(ServerStartError) as info:
            await pool.start()
    hint = info.value.hint
    assert f"server 'gone': no program '{tmp_path / 'no-such-server'}': install it" in hint
    assert f"server 'noexec': '{script}' may not be run: make it executable" in hint
    assert f"(or its cwd '{tmp_path / 'no-such-dir'}')" in hint


async def test_an_http_server_that_is_not_up_is_named_without_its_secrets(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port on which nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://user:s3cret@127.0.0.1:{port}/mcp?token=s3cret"
    config = sh.servers(HttpServer("web", url), sh.stdio("bad", COUNTER_DIE_AT_START="1"))
    with (tmp_path / "err.log").open("w") as log:
        async with ServerPool(config, errlog=log) as pool:
            with anyio.fail_after(60), pytest.raises(ServerStartError) as info:
                await pool.start()
    message = str(info.value)
    assert "web: " in message
    assert "bad: " in message
    assert f"check that http://127.0.0.1:{port}/mcp is up" in info.value.hint
    assert str(tmp_path / "err.log") in info.value.hint
    assert "s3cret" not in message


async def test_stdio_server_killed_mid_call_is_restarted(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    calls = tmp_path / "calls.jsonl"
    config = sh.servers(sh.stdio(COUNTER_DIE_ONCE=str(marker), COUNTER_LOG=str(calls)))
    async with ServerPool(config, backoff_base=0.01) as pool:
        with anyio.fail_after(60):
            await pool.start()
            with pytest.raises(ToolCallError) as info:
                await pool.call("counter", "die", {}, key="r/s1")
            assert info.value.error_class == "transport_lost"
            result = await pool.call("counter", "die", {}, key="r/s1")
    assert result.structured == {"survived": True}
    assert marker.exists()
    lines = calls.read_text().splitlines()
    assert len(lines) == 2
    assert all('"key": "r/s1"' in line for line in lines)


async def test_unknown_tool_and_bad_arguments_are_results_not_crashes() -> None:
    async with ServerPool(sh.servers(sh.in_process())) as pool:
        with anyio.fail_after(30):
            unknown = await pool.call("counter", "nope", {})
            bad = await pool.call("counter", "sleep", {"seconds": "x"})
    assert unknown.is_error
    assert bad.is_error


@pytest.mark.parametrize(
    ("mode", "path", "sse"),
    [("http", "/mcp", False), ("sse", "/sse", True)],
    ids=["streamable", "sse"],
)
async def test_http_server_on_loopback(tmp_path: Path, mode: str, path: str, sse: bool) -> None:
    """Streamable HTTP, and the older HTTP+SSE transport (``"type": "sse"``)."""
    port = sh.free_port()
    with (tmp_path / "http.log").open("w") as errors:
        proc = subprocess.Popen(
            [sys.executable, str(sh.COUNTER), mode, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        with anyio.fail_after(60):
            await _accepting(port)
            config = sh.servers(HttpServer("web", f"http://127.0.0.1:{port}{path}", sse=sse))
            async with ServerPool(config) as pool:
                catalog = await pool.start()
                result = await pool.call("web", "work", {"name": "h"}, key="k-http")
        assert catalog.tool("web", "sleep") is not None
        assert result.structured is not None
        assert result.structured["key"] == "k-http"
    finally:
        proc.terminate()  # the one process this test started
        proc.wait(timeout=10)


async def test_server_limit_slots_wait_in_order_and_survive_a_cancelled_waiter() -> None:
    from plansmith.servers._pool import _Slots

    slots = _Slots(1)
    order: list[str] = []
    await slots.acquire()  # free: taken without waiting
    assert slots.free == 0

    async def take(name: str) -> None:
        await slots.acquire()
        order.append(name)
        slots.release()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(take, "a")
            with anyio.CancelScope() as doomed:  # a waiter cancelled before its turn
                doomed.cancel()
                await take("never")
            tg.start_soon(take, "b")
            await anyio.wait_all_tasks_blocked()
            assert len(slots.waiters) == 2
            slots.release()  # handed to "a", then "a" hands it to "b"
    assert order == ["a", "b"]
    assert slots.free == 1
    assert not slots.waiters


async def test_calls_beyond_a_servers_limit_wait_for_a_free_slot() -> None:
    config = sh.servers(sh.in_process())
    async with ServerPool(config) as pool:
        with anyio.fail_after(30):
            await pool.start()
            conn = pool._conns["counter"]
            total = conn.limiter.free
            results: list[str] = []

            async def one(k: int) -> None:
                r = await pool.call("counter", "work", {"name": f"n{k}"}, key=f"run/s{k}")
                assert r.structured is not None
                results.append(str(r.structured["key"]))

            async with anyio.create_task_group() as tg:
                for k in range(total + 3):
                    tg.start_soon(one, k)
    assert sorted(results) == sorted(f"run/s{k}" for k in range(total + 3))
    assert conn.limiter.free == total
    assert not conn.limiter.waiters


async def test_a_server_that_answers_again_gets_its_restarts_counted_afresh(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "died"
    config = sh.servers(sh.stdio(COUNTER_DIE_ONCE=str(marker)))
    async with ServerPool(config, backoff_base=0.01, restart_limit=1) as pool:
        with anyio.fail_after(60):
            await pool.start()
            for _ in range(2):  # dies, is restarted, answers; twice with a limit of one
                marker.unlink(missing_ok=True)
                with pytest.raises(ToolCallError) as info:
                    await pool.call("counter", "die", {}, key="r/s1")
                assert info.value.error_class == "transport_lost"
                assert not info.value.final
                result = await pool.call("counter", "die", {}, key="r/s1")
                assert result.structured == {"survived": True}


async def test_a_server_that_dies_at_every_restart_is_given_up_with_where_its_errors_are(
    tmp_path: Path,
) -> None:
    config = sh.servers(sh.stdio())  # ``die`` exits on every call
    with (tmp_path / "servers.log").open("w") as errlog:
        async with ServerPool(config, errlog=errlog, backoff_base=0.01, restart_limit=2) as pool:
            with anyio.fail_after(60):
                await pool.start()
                errors = []
                for _ in range(3):
                    with pytest.raises(ToolCallError) as info:
                        await pool.call("counter", "die", {}, key="r/s1")
                    errors.append(info.value)
    assert [e.final for e in errors] == [False, False, True]
    assert all(e.error_class == "transport_lost" for e in errors)
    assert "given up after 2 restart(s) in a row with no call that succeeded" in errors[2].message
    assert f"see its error output in {tmp_path / 'servers.log'}" in errors[2].message


async def test_an_http_error_status_is_named_and_a_gateways_is_transport_lost(
    tmp_path: Path,
) -> None:
    """The SDK reports HTTP 500, 502 and 503 alike (-32603, no status): the pool says
    which it was, and 502, 503 and 504 (nothing served the call) are retried as
    transport_lost, while a 500 stays a protocol error."""
    port = sh.free_port()
    script = Path(sh.COUNTER).parent / "status_server.py"
    proc = subprocess.Popen([sys.executable, str(script), str(port), "503,500"])
    try:
        with anyio.fail_after(60):
            await _accepting(port)
            config = sh.servers(HttpServer("web", f"http://127.0.0.1:{port}/mcp"))
            async with ServerPool(config) as pool:
                await pool.start()
                errors = []
                for _ in range(2):
                    with pytest.raises(ToolCallError) as info:
                        await pool.call("web", "work", {"name": "h"}, key="k")
                    errors.append(info.value)
                result = await pool.call("web", "work", {"name": "h"}, key="k")
    finally:
        proc.terminate()  # the one process this test started
        proc.wait(timeout=10)
    assert [(e.error_class, e.message) for e in errors] == [
        ("transport_lost", "server 'web': HTTP 503 Service Unavailable: busy, try later"),
        ("protocol_error", "work: HTTP 500 Internal Server Error: internal oops"),
    ]
    assert result.text == "done"


async def _accepting(port: int) -> None:
    """Return once a server accepts connections on ``port`` (the caller's deadline)."""
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.aclose()
            return
        except OSError:
            await anyio.sleep(0.05)


async def test_a_pool_used_without_async_with_says_so_and_closes_at_once() -> None:
    pool = ServerPool(sh.servers(sh.in_process()))
    with anyio.fail_after(10):
        with pytest.raises(ExecutionError, match="the server pool is not open") as info:
            await pool.start()
        assert info.value.hint is not None
        with pytest.raises(ExecutionError, match="not open"):
            await pool.call("counter", "work", {"name": "a"})
        await pool.aclose()  # nothing was started: nothing to wait for


async def test_each_line_of_a_stdio_servers_error_output_is_logged_after_its_name(
    tmp_path: Path,
) -> None:
    config = sh.servers(
        sh.stdio("alpha", COUNTER_STDERR="alpha one|alpha two"),
        sh.stdio("beta", COUNTER_STDERR="beta one|beta two"),
    )
    log_path = tmp_path / "servers.log"
    with log_path.open("w") as log:
        async with ServerPool(config, errlog=log) as pool:
            with anyio.fail_after(60):
                await pool.start()
    lines = log_path.read_text().splitlines()
    for name in ("alpha", "beta"):
        mine = [line for line in lines if line.startswith(f"[{name}] ")]
        assert mine[:2] == [f"[{name}] {name} one", f"[{name}] {name} two"]
    assert all(line.startswith(("[alpha] ", "[beta] ")) for line in lines), lines


async def test_a_stdio_server_dies_soon_after_its_engine_is_sigkilled(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG (Linux): the server in a call does not outlive a SIGKILLed engine."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the kernel ties a child's life to its parent's only on Linux")
    pid_file = tmp_path / "server.pid"
    calls = tmp_path / "calls.jsonl"
    engine = textwrap.dedent(
        f"""
        import sys, anyio
        sys.path[:0] = {[str(Path(__file__).parent), str(Path(__file__).parents[1])]!r}
        import _server_helpers as sh
        from plansmith.servers import ServerPool

        async def main():
            config = sh.servers(sh.stdio(
                COUNTER_PID_FILE={str(pid_file)!r}, COUNTER_LOG={str(calls)!r}
            ))
            async with ServerPool(config) as pool:
                await pool.start()
                print("started", flush=True)
                await pool.call("counter", "block", {{"seconds": 3600}})

        anyio.run(main)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", engine], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "started\n"  # the server answered: it runs
            server = int(pid_file.read_text())
            with anyio.fail_after(30):  # the call is in the server (which outlived it before)
                while not (calls.exists() and '"block"' in calls.read_text()):
                    await anyio.sleep(0.02)
            assert _alive(server)
        finally:
            child.kill()
    try:
        with anyio.fail_after(30):
            while _alive(server):
                await anyio.sleep(0.05)
    finally:
        if _alive(server):  # the test failed: leave no server behind
            os.kill(server, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
