"""Leases in the engine: one engine drives a run; a killed engine's run is taken over.

The two-engine test shares one real PostgreSQL schema between engine A (a child process,
SIGKILLed mid-run) and engine B (this process), and checks from the slow tool server's
own call log that B never calls again a step that had finished.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from _pg_server import fresh_schema
from _shared_servers import docs_domain, problem_text
from plansmith.engine import Engine, RunInputs
from plansmith.errors import InputError, RunLeasedError
from plansmith.execution import (
    Event,
    PostgresRunLog,
    RunOutcome,
    RunStarted,
    SqliteRunLog,
    StepSucceeded,
    iso_time,
)

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
CHILD = HERE / "_takeover_child.py"
SERVER = HERE / "_takeover_server.py"

BINDINGS = """\
bindings:
  summarise:
    server: slow
    tool: slow
    arguments: {name: "s-${d}"}
    outputs: {done: "$.structured.done"}
  index:
    server: slow
    tool: slow
    arguments: {name: "i-${d}"}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def slow_inputs(
    tmp: Path,
    n: int,
    call_log: Path,
    delay: float,
    *,
    hold_after: int = 0,
    held: Path | None = None,
) -> RunInputs:
    """The inputs of a run on the slow server; with ``held``, the server holds its calls
    after the ``hold_after``-th (and creates ``held``): a server that finds ``held`` there
    holds none."""
    (tmp / "domain.yaml").write_text(docs_domain())
    (tmp / "problem.yaml").write_text(problem_text(n))
    (tmp / "bindings.yaml").write_text(BINDINGS)
    env = {"TAKEOVER_LOG": str(call_log), "TAKEOVER_DELAY": str(delay)}
    if held is not None:
        env |= {"TAKEOVER_HOLD_AFTER": str(hold_after), "TAKEOVER_HOLD_ONCE": str(held)}
    server = {"command": sys.executable, "args": [str(SERVER)], "env": env}
    (tmp / "servers.json").write_text(json.dumps({"mcpServers": {"slow": server}}))
    return RunInputs(
        tmp / "domain.yaml", tmp / "problem.yaml", tmp / "servers.json", tmp / "bindings.yaml"
    )


def calls(log: Path) -> list[dict[str, str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def wait_until_held(held: Path) -> None:
    """Until the slow server of the engine to kill holds a call: its run cannot finish."""
    with anyio.fail_after(120):
        while not held.exists():  # another process's file, polled with a deadline
            await anyio.sleep(0.01)


async def test_engine_b_takes_over_a_killed_engines_run_after_its_lease_expires(
    tmp_path: Path,
) -> None:
    call_log = tmp_path / "calls.jsonl"
    held = tmp_path / "held"  # A's server holds its 3rd call: A cannot finish before the kill
    inputs = slow_inputs(tmp_path, 3, call_log, delay=0.3, hold_after=2, held=held)
    with fresh_schema() as url:
        args = [sys.executable, str(CHILD), url, str(tmp_path / "a"), "r-two", "3", "0.3"]
        args += [str(f) for f in inputs.to_dict().values()]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdout is not None
        seen: list[dict[str, object]] = []

        def read_until_two_steps() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                seen.append(json.loads(line))
                if sum(e["type"] == "StepSucceeded" for e in seen) == 2:
                    return

        engine_b = Engine(tmp_path / "b", log=PostgresRunLog(url), lease_ttl=3, lease_renew=0.3)
        try:
            with anyio.fail_after(120):
                await anyio.to_thread.run_sync(read_until_two_steps)
            # A is alive: B neither takes the run over nor resumes it
            assert await engine_b.take_over_expired() == []
            with pytest.raises(RunLeasedError, match=r"run r-two is driven by engine .* until"):
                await engine_b.resume("r-two")
            await wait_until_held(held)
            os.kill(proc.pid, signal.SIGKILL)  # the child this test started
            proc.wait(timeout=30)
            proc.stdout.close()
            assert engine_b.leases is not None
            lease = engine_b.leases.holder("r-two")  # A's last renewal: it renews no more
            assert lease is not None
            assert lease.owner != engine_b.engine_id
            before = engine_b.log.events("r-two")
            assert before[-1].type != "RunFinished"
            done_before = {e.step for e in before if isinstance(e, StepSucceeded)}
            assert len(done_before) >= 2
            calls_at_kill = len(calls(call_log))

            outcomes: list[RunOutcome] = []
            taken = anyio.Event()

            def got(outcome: RunOutcome) -> None:
                outcomes.append(outcome)
                taken.set()

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lambda: engine_b.keep_taking_over(every=0.2, on_outcome=got))
                    await taken.wait()
                    tg.cancel_scope.cancel()
            assert [(o.run_id, o.state) for o in outcomes] == [("r-two", "succeeded")]
            events = engine_b.log.events("r-two")
            starts = [e for e in events if isinstance(e, RunStarted)]
            assert [s.resumed for s in starts] == [False, True]
            assert starts[1].time >= iso_time(lease.expires)  # B started after the expiry
            assert len({e.step for e in events if isinstance(e, StepSucceeded)}) == 6
            keys_done = {f"r-two/{s}" for s in done_before}
            after = calls(call_log)[calls_at_kill:]
            assert after, "engine B made no calls"
            assert not {c["key"] for c in after} & keys_done
            every = [c["key"] for c in calls(call_log)]
            assert all(every.count(k) == 1 for k in keys_done)
            assert engine_b.leases.holder("r-two") is None  # released at the end
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            engine_b.close()


async def test_an_engine_that_loses_its_lease_stops_and_writes_nothing_more(
    tmp_path: Path,
) -> None:
    call_log = tmp_path / "calls.jsonl"
    inputs = slow_inputs(tmp_path, 3, call_log, delay=0.3)
    with fresh_schema() as url:
        engine = Engine(tmp_path / "a", log=PostgresRunLog(url), lease_ttl=30, lease_renew=0.1)
        thief = PostgresRunLog(url)
        first_step = anyio.Event()

        def watch(event: Event) -> None:
            if isinstance(event, StepSucceeded):
                first_step.set()

        result: list[RunLeasedError] = []

        async def drive() -> None:
            try:
                await engine.run(
                    inputs, approve=True, subscribe=watch, run_id="r-lost", max_parallel=1
                )
            except RunLeasedError as error:
                result.append(error)

        try:
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(drive)
                    await first_step.wait()
                    stolen = thief.acquire("r-lost", "thief", 30, replacing=engine.engine_id)
                    assert stolen is not None
                    assert stolen.owner == "thief"
                    written = len(thief.events("r-lost"))
            assert len(result) == 1
            assert "lost its lease" in result[0].message
            events = thief.events("r-lost")
            assert len(events) == written  # the fence kept every later write out
            assert events[-1].type != "RunFinished"
            assert thief.holder("r-lost") is not None  # the engine did not release the thief's
        finally:
            thief.close()
            engine.close()


async def test_a_run_leased_by_a_live_engine_is_refused(tmp_path: Path) -> None:
    log = SqliteRunLog(tmp_path / "runs.db")
    log.create_run("r-held", "2026-01-01T00:00:00.000Z", {})
    other = "another-host:1:abcdef01"  # not this host: never taken for a dead process
    assert log.acquire("r-held", other, 60) is not None
    engine = Engine(tmp_path, log=log)
    inputs = slow_inputs(tmp_path, 1, tmp_path / "calls.jsonl", delay=0)
    with pytest.raises(RunLeasedError, match=f"driven by engine {other} until"):
        await engine.resume("r-held")
    with pytest.raises(InputError, match="run r-held already exists"):  # a new run: never
        await engine.run(inputs, approve=True, run_id="r-held")
    assert await engine.take_over_expired() == []  # not expired yet
    assert not (tmp_path / "calls.jsonl").exists()
    engine.close()


async def test_a_person_may_resume_at_once_a_run_whose_engine_process_is_gone(
    tmp_path: Path,
) -> None:
    call_log = tmp_path / "calls.jsonl"
    inputs = slow_inputs(tmp_path, 1, call_log, delay=0)
    log = SqliteRunLog(tmp_path / "runs.db")
    engine = Engine(tmp_path, log=log)
    with pytest.raises(Exception, match="awaits approval"):
        await engine.run(inputs, run_id="r-gone")  # recorded, stopped before any step
    dead = subprocess.run(  # a process that has exited: its id names no process now
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    gone = f"{socket.gethostname()}:{dead.stdout.strip()}:00000000"
    lease = log.acquire("r-gone", gone, 600)
    assert lease is not None
    assert lease.owner == gone
    with anyio.fail_after(60):
        outcome = await engine.resume("r-gone", approve=True)
    assert outcome.state == "succeeded", outcome.reason
    assert log.holder("r-gone") is None
    engine.close()
