"""Events as views read them: seq goes up by one in a replay too, a failure's message is
bounded (the whole text stays in its result), and a view is a plain function."""

from __future__ import annotations

import _exec_helpers as h
import anyio
import pytest

from plansmith.errors import InputError
from plansmith.execution import (
    MESSAGE_LIMIT,
    Emitter,
    Event,
    FakeInvoker,
    MemoryRunLog,
    PlanApproved,
    PlanReady,
    ReplayInvoker,
    RunCreated,
    Runner,
    StepFailed,
    StepRetrying,
    ToolCall,
    ToolResult,
    bound_to_dict,
    fold,
    recorded_parts,
    replay_replan,
    unpack,
)
from plansmith.execution._event_fast import event_json

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def no_sleep(_: float) -> None:
    return None


async def replay(log: MemoryRunLog, run_id: str) -> tuple[MemoryRunLog, list[Event]]:
    """What ``Engine.replay`` does with a recorded run of one part: the engine's events
    written again, then the runner over the recorded outcomes, into a memory log."""
    events = log.events(run_id)
    memory = MemoryRunLog()
    memory.create_run(run_id, "", {})
    emitter = Emitter(memory, run_id)
    for part in recorded_parts(events):
        for event in part.before:
            emitter.emit(event)
        state = fold(run_id, part.prefix)
        invoker = ReplayInvoker(log, part.events)
        runner = Runner(
            invoker, memory, state, emitter=emitter, sleep=no_sleep, replan=replay_replan(events)
        )
        await runner.run()
    return memory, memory.events(run_id)


def recorded_run(steps: int = 2) -> MemoryRunLog:
    """A log holding run-1 as the engine begins it: created, planned, approved."""
    log = MemoryRunLog()
    log.create_run("run-1", "2026-01-01T00:00:00.000Z", {})
    bound = h.bound(h.chain(steps))
    emitter = Emitter(log, "run-1")
    emitter.emit(RunCreated(run_id="run-1", inputs={}))
    emitter.emit(PlanReady(run_id="run-1", plan_hash=bound.plan_hash, bound=bound_to_dict(bound)))
    emitter.emit(PlanApproved(run_id="run-1", plan_hash=bound.plan_hash, by="policy"))
    return log


async def test_a_replay_numbers_its_events_as_the_record_does() -> None:
    log = recorded_run()
    state = fold("run-1", log.events("run-1"))
    with anyio.fail_after(10):
        await Runner(FakeInvoker(h.work_ok), log, state).run()
    recorded = log.events("run-1")
    with anyio.fail_after(10):
        _, replayed = await replay(log, "run-1")
    assert [(e.seq, e.type) for e in replayed] == [(e.seq, e.type) for e in recorded]
    assert [e.seq for e in replayed] == list(range(1, len(replayed) + 1))


def test_an_event_stamped_elsewhere_takes_the_next_seq_and_keeps_its_time() -> None:
    log = MemoryRunLog()
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    recorded = [
        RunCreated(run_id="r", seq=1, time="2026-01-01T00:00:00.001Z"),
        PlanApproved(run_id="r", seq=7, time="2026-01-01T00:00:00.007Z", plan_hash="h"),
        PlanApproved(run_id="r", seq=2, time="2026-01-01T00:00:00.002Z", plan_hash="h"),
    ]
    for event in recorded:
        emitter.emit(event)
    emitter.emit(emitter.new(PlanApproved, plan_hash="h"))
    written = log.events("r")
    assert [e.seq for e in written] == [1, 2, 3, 4]
    assert [e.time for e in written[:3]] == [e.time for e in recorded]


async def test_a_long_tool_error_message_is_bounded_in_events_and_whole_in_the_result() -> None:
    whole = "x" * 100_000 + "END"

    async def fail(call: ToolCall) -> ToolResult:
        return ToolResult(None, whole, is_error=True, retryable=call.attempt == 1)

    log = recorded_run(steps=1)
    state = fold("run-1", log.events("run-1"))
    with anyio.fail_after(10):
        await Runner(FakeInvoker(fail), log, state, sleep=no_sleep).run()
    events = log.events("run-1")
    (failed,) = [e for e in events if isinstance(e, StepFailed)]
    (retrying,) = [e for e in events if isinstance(e, StepRetrying)]
    more = len(whole) - MESSAGE_LIMIT
    assert failed.message == (
        "x" * MESSAGE_LIMIT + f"... ({more:,} more characters; the whole text is in the"
        " event's result)"
    )
    assert (
        retrying.message
        == "x" * MESSAGE_LIMIT + f"... ({more:,} more characters; the rest is not recorded)"
    )
    assert len(event_json(failed)) < MESSAGE_LIMIT + 1000  # the result is a blob reference
    result = unpack(log, failed.result)
    assert isinstance(result, dict)
    assert result["text"] == whole

    # a replay answers with the recorded result: the same message and result
    with anyio.fail_after(10):
        memory, replayed = await replay(log, "run-1")
    (again,) = [e for e in replayed if isinstance(e, StepFailed)]
    assert again.message == failed.message
    assert unpack(memory, again.result) == result
    (retried,) = [e for e in replayed if isinstance(e, StepRetrying)]
    assert retried.message == retrying.message


async def test_a_short_message_is_kept_whole() -> None:
    async def fail(call: ToolCall) -> ToolResult:
        return ToolResult(None, "y" * (MESSAGE_LIMIT + 100), is_error=True)

    log, state = h.start_run(h.bound(h.chain(1)))
    with anyio.fail_after(10):
        await Runner(FakeInvoker(fail), log, state).run()
    (failed,) = [e for e in log.events("run-1") if isinstance(e, StepFailed)]
    assert failed.message == "y" * (MESSAGE_LIMIT + 100)


def test_a_view_that_is_an_async_function_is_refused_with_how_to_do_async_work() -> None:
    emitter = Emitter(MemoryRunLog(), "r")

    async def show(event: Event) -> None:
        print(event)

    class AsyncView:
        async def __call__(self, event: Event) -> None:
            print(event)

    for view in (show, AsyncView()):
        with pytest.raises(InputError) as refused:
            emitter.subscribe(view)  # type: ignore[arg-type]
        assert "must be a plain function" in refused.value.message
        assert refused.value.hint is not None
        assert "called synchronously" in refused.value.hint
        assert "memory object stream" in refused.value.hint
    assert emitter.subscribers == []


def test_a_plain_view_and_a_callable_object_are_subscribed() -> None:
    emitter = Emitter(MemoryRunLog(), "r")
    seen: list[str] = []

    class View:
        def __call__(self, event: Event) -> None:
            seen.append(event.type)

    view = View()
    emitter.subscribe(seen.append)  # type: ignore[arg-type]
    emitter.subscribe(view)
    assert emitter.subscribers == [seen.append, view]
