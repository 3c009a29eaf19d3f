"""What a run that ends in error says and raises: the cause of each failed step in its
reason, and one typed error (never a bare exception group) when a view or a tool
invoker of the application's own stops it."""

from __future__ import annotations

import _exec_helpers as h
import anyio
import pytest

from plansmith.errors import ExecutionError
from plansmith.execution import (
    Event,
    FakeInvoker,
    RunFinished,
    Runner,
    StepStarted,
    ToolCall,
    ToolResult,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_failed_run_s_reason_gives_each_failed_step_s_cause() -> None:
    async def refuse(call: ToolCall) -> ToolResult:
        return ToolResult(None, "disk full\nmore detail", is_error=True, retryable=False)

    log, state = h.start_run(h.bound(h.chain(1)))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(refuse), log, state).run()
    assert outcome.state == "failed"
    assert outcome.reason == "step(s) s0 (tool_error: disk full) failed and replanning is off"


async def test_a_view_that_stops_a_run_of_parallel_steps_raises_its_own_error() -> None:
    log, state = h.start_run(h.bound(h.wide(2)))
    runner = Runner(FakeInvoker(h.work_ok), log, state)

    def veto(event: Event) -> None:
        if isinstance(event, StepStarted):
            raise ExecutionError("the plan is not the one approved", hint="approve it")

    runner.emitter.subscribe(veto)
    with anyio.fail_after(10), pytest.raises(ExecutionError) as raised:
        await runner.run()
    assert raised.value.message == "the plan is not the one approved"
    end = log.events("run-1")[-1]
    assert isinstance(end, RunFinished)
    assert (end.state, end.reason) == ("failed", "the plan is not the one approved")


async def test_a_tool_invoker_that_raises_a_bare_error_fails_the_run_with_a_typed_one() -> None:
    async def broken(call: ToolCall) -> ToolResult:
        raise ConnectionResetError("peer reset")

    log, state = h.start_run(h.bound(h.wide(2)))
    with anyio.fail_after(10), pytest.raises(ExecutionError) as raised:
        await Runner(FakeInvoker(broken), log, state).run()
    assert raised.value.message == "internal error: ConnectionResetError: peer reset"
    assert isinstance(raised.value.__cause__, ConnectionResetError)
    end = log.events("run-1")[-1]
    assert isinstance(end, RunFinished)
    assert end.reason == "internal error: ConnectionResetError: peer reset"
