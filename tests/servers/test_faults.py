"""Injected faults over a real stdio server end as classified events and handled outcomes."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import _server_helpers as sh
import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import BoundPlan
from plansmith.execution import (
    MemoryRunLog,
    RunFinished,
    Runner,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepSucceeded,
)
from plansmith.model import Step
from plansmith.servers import McpInvoker, ServerPool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def binding(tool: str, arguments: str, extra: str = "", outputs: str = "") -> str:
    out = f"    outputs: {{{outputs}}}\n" if outputs else ""
    return (
        "bindings:\n  work:\n    server: counter\n"
        f"    tool: {tool}\n    arguments: {arguments}\n{out}{extra}"
    )


async def run_one(pool: ServerPool, text: str) -> tuple[str, list[object]]:
    b: BoundPlan = h.bound(h.chain(1), text, pool.catalog())
    log, state = h.start_run(b, MemoryRunLog())
    with anyio.fail_after(30):
        outcome = await Runner(McpInvoker(pool), log, state).run()
    return outcome.state, list(log.events("run-1"))


def failure(events: list[object]) -> StepFailed:
    (failed,) = [e for e in events if isinstance(e, StepFailed)]
    return failed


async def test_faults_over_stdio_are_classified(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    config = sh.servers(sh.stdio(COUNTER_DIE_ONCE=str(marker)))
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(config, errlog=errlog, backoff_base=0.01) as pool:
            with anyio.fail_after(60):
                await pool.start()

            state, events = await run_one(pool, binding("fail", "{message: down}"))
            assert state == "failed"
            assert failure(events).error_class == "tool_error"
            assert failure(events).message == "down"

            state, events = await run_one(pool, binding("malformed", "{}", outputs="v: '$.json.v'"))
            assert state == "failed"
            assert failure(events).error_class == "extraction_error"

            state, events = await run_one(
                pool, binding("sleep", "{seconds: 30}", extra="    timeout: 0.3\n")
            )
            assert state == "failed"
            assert failure(events).error_class == "timeout"

            state, events = await run_one(
                pool,
                binding(
                    "die", "{}", extra="    retries: 1\n", outputs="s: '$.structured.survived'"
                ),
            )
            assert state == "succeeded"
            retry = [e for e in events if isinstance(e, StepRetrying)]
            assert [r.error_class for r in retry] == ["transport_lost"]
            done = [e for e in events if isinstance(e, StepSucceeded)]
            assert done[0].outputs == {"s": True}

            state, events = await run_one(
                pool,
                binding(
                    "flaky",
                    "{name: f, fails: 2}",
                    extra="    retries: 2\n",
                    outputs="n: '$.structured.attempts'",
                ),
            )
            assert state == "succeeded"
            retry = [e for e in events if isinstance(e, StepRetrying)]
            assert [r.error_class for r in retry] == ["tool_error", "tool_error"]
            done = [e for e in events if isinstance(e, StepSucceeded)]
            assert done[0].outputs == {"n": 3}

            state, events = await run_one(pool, binding("refuse", "{}", extra="    retries: 3\n"))
            assert state == "failed"
            assert failure(events).error_class == "tool_error"
            assert "not allowed" in failure(events).message
            assert not [e for e in events if isinstance(e, StepRetrying)]

            state, events = await run_one(
                pool, binding("progress", "{n: 3}", outputs="n: '$.structured.n'")
            )
            assert state == "succeeded"
            assert len([e for e in events if isinstance(e, StepProgress)]) == 3


async def test_cancelled_run_leaves_no_server_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    config = sh.servers(sh.stdio(COUNTER_PID_FILE=str(pid_file)))
    text = binding("sleep", "{seconds: 60}")
    async with ServerPool(config) as pool:
        with anyio.fail_after(60):
            await pool.start()
        b = h.bound(h.wide(3), text, pool.catalog())
        log, state = h.start_run(b, MemoryRunLog())
        runner = Runner(McpInvoker(pool), log, state)
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run)
            with anyio.fail_after(30):
                while not any(e.type == "StepStarted" for e in log.events("run-1")):
                    await anyio.lowlevel.checkpoint()
            runner.cancel("test")
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert log.events("run-1")[-1].type == "RunFinished"


#: the bindings a user writes: no retries, nothing marked idempotent
DEFAULT_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {done: "$.structured.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${work(x).done}"}
    outputs: {value: "$.structured.value"}
"""


async def test_a_server_killed_mid_call_under_default_bindings_does_not_fail_the_run(
    tmp_path: Path,
) -> None:
    # s0 then s1 finish; s2 and s3 (after s1, side by side) are both in flight when the
    # server SIGKILLs itself (it holds its 3rd and 4th calls of ``work``, and dies with
    # both held); the restarted server holds nothing. Each of s2 and s3 is re-sent once,
    # with its key; nothing that had finished is called again; f2 and f3 read s2's and
    # s3's outputs.
    calls = tmp_path / "calls.jsonl"
    config = sh.servers(
        sh.stdio(
            COUNTER_LOG=str(calls),
            COUNTER_HOLD_AFTER="2",
            COUNTER_HOLD_ONCE=str(tmp_path / "held"),
            COUNTER_KILL_HELD="2",
        )
    )
    plan = h.plan(
        [
            Step("s0", "work", ("i0",)),
            Step("s1", "work", ("i1",), after=("s0",)),
            Step("s2", "work", ("i2",), after=("s1",)),
            Step("s3", "work", ("i3",), after=("s1",)),
            Step("f2", "finish", ("i2",), after=("s2",)),
            Step("f3", "finish", ("i3",), after=("s3",)),
        ]
    )
    with (tmp_path / "err.log").open("w") as errlog:
        async with ServerPool(config, errlog=errlog, backoff_base=0.01) as pool:
            with anyio.fail_after(60):
                await pool.start()
                b = h.bound(plan, DEFAULT_BINDINGS, pool.catalog())
                log, state = h.start_run(b, MemoryRunLog())
                outcome = await Runner(McpInvoker(pool), log, state).run()
            assert pool._conns["counter"].generation == 2  # restarted once
    events = list(log.events("run-1"))
    assert outcome.state == "succeeded", outcome.reason
    assert isinstance(events[-1], RunFinished)
    assert not [e for e in events if isinstance(e, StepFailed)]
    retried = sorted(
        (e.step, e.attempt, e.error_class) for e in events if isinstance(e, StepRetrying)
    )
    assert retried == [("s2", 1, "transport_lost"), ("s3", 1, "transport_lost")]
    done = {e.step: e for e in events if isinstance(e, StepSucceeded)}
    assert set(done) == {"s0", "s1", "s2", "s3", "f2", "f3"}
    assert (done["s2"].attempt, done["s3"].attempt) == (2, 2)
    assert done["f3"].outputs == {"value": "i3!"}
    keys = Counter(json.loads(line)["key"] for line in calls.read_text().splitlines())
    assert keys == {"run-1/s0": 1, "run-1/s1": 1, "run-1/s2": 2, "run-1/s3": 2}
