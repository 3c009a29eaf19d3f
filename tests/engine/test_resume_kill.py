"""Kill the engine with SIGKILL mid-run, then resume: finished steps are never called again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

from plansmith.engine import Engine
from plansmith.execution import RunStarted, StepSucceeded, step_histories

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).parent / "_kill_child.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def calls(log: Path) -> list[dict[str, str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def test_resume_after_sigkill_never_recalls_finished_steps(tmp_path: Path) -> None:
    call_log = tmp_path / "calls.jsonl"
    pid_file = tmp_path / "server.pid"
    held = tmp_path / "held"  # the killed engine's server holds its 4th call of work, and
    inputs = eh.write_inputs(  # all later ones: that run cannot finish before the kill
        tmp_path,
        n=6,
        COUNTER_LOG=str(call_log),
        COUNTER_PID_FILE=str(pid_file),
        COUNTER_HOLD_AFTER="3",
        COUNTER_HOLD_ONCE=str(held),  # the resumed engine's server holds nothing
    )
    home = tmp_path / "home"
    args = [sys.executable, str(CHILD), str(home), "r-kill", *map(str, inputs.to_dict().values())]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    succeeded = 0

    def read_until_three_steps() -> None:
        nonlocal succeeded
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["type"] == "StepSucceeded":
                succeeded += 1
                if succeeded == 3:
                    return

    with anyio.fail_after(120):
        await anyio.to_thread.run_sync(read_until_three_steps)
        while not held.exists():  # another process's file, polled with a deadline
            await anyio.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)  # the child this test started
    proc.wait(timeout=30)
    proc.stdout.close()
    assert succeeded == 3
    # the server the killed engine started exits (on Linux at once, by PR_SET_PDEATHSIG;
    # elsewhere when it sees its stdin close): no orphan
    try:
        server_exited = os.pidfd_open(int(pid_file.read_text()))
    except ProcessLookupError:  # gone already
        pass
    else:
        try:
            with anyio.fail_after(30):
                await anyio.wait_readable(server_exited)
        finally:
            os.close(server_exited)

    engine = Engine(home)
    before = engine.log.events("r-kill")
    assert before[-1].type != "RunFinished"
    done_before = {e.step for e in before if isinstance(e, StepSucceeded)}
    keys_done = {f"r-kill/{s}" for s in done_before}
    calls_before = len(calls(call_log))
    with anyio.fail_after(120):
        outcome = await engine.resume("r-kill")
    assert outcome.state == "succeeded", outcome.reason
    after = calls(call_log)[calls_before:]
    assert after, "the resumed run made no calls"
    assert not {c["key"] for c in after} & keys_done
    by_step: dict[str, set[str | None]] = {}
    for c in calls(call_log):
        by_step.setdefault(str(c["args"]["name"]), set()).add(c["key"])  # type: ignore[index]
    assert all(len(keys) == 1 for keys in by_step.values())

    # the replay goes through both parts: the killed engine's, stopped where it was
    # killed, then the resumed one's, from the log as the resume found it
    recorded = engine.log.events("r-kill")
    with anyio.fail_after(60):
        replayed = await engine.replay("r-kill")
    assert [e.resumed for e in replayed if isinstance(e, RunStarted)] == [False, True]
    assert step_histories(replayed) == step_histories(recorded)

    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    fresh_inputs = eh.write_inputs(fresh_dir, n=6)
    with anyio.fail_after(120):
        fresh = await Engine(tmp_path / "home2").run(fresh_inputs, approve=True)
    assert fresh.outputs == outcome.outputs
    engine.close()
