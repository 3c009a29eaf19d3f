"""The runner over a fake invoker: order, outputs, retries, failures, replanning, cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable

import _exec_helpers as h
import anyio
import pytest

from plansmith.errors import BindingError, Location, PlanInvalidError, ToolCallError
from plansmith.execution import (
    FakeInvoker,
    Replanned,
    Runner,
    StepFailed,
    StepSucceeded,
    ToolCall,
    ToolResult,
    current_state,
    fold,
    make_replan,
)
from plansmith.execution._replan import REPLAN_PROBLEMS_SHOWN, replan_failure

pytestmark = pytest.mark.anyio

FakeCall = Callable[[ToolCall], Awaitable[ToolResult]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


work_ok = h.work_ok


async def test_chain_runs_in_order_and_passes_outputs() -> None:
    p = h.plan(
        [
            h.Step("a", "work", ("i0",)),
            h.Step("b", "finish", ("i0",)),
        ]
    )
    b = h.bound(p)
    assert b.step("b") is not None
    assert b.step("b").after == ("a",)
    log, state = h.start_run(b)
    fake = FakeInvoker(work_ok)
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state).run()
    assert outcome.state == "succeeded"
    assert [c.step for c in fake.calls] == ["a", "b"]
    assert fake.calls[1].arguments == {"x": "i0!"}
    assert outcome.outputs["b"] == {"value": "i0!"}


async def test_every_call_carries_the_step_key() -> None:
    log, state = h.start_run(h.bound(h.wide(3)), run_id="r9")
    fake = FakeInvoker(work_ok)
    with anyio.fail_after(10):
        await Runner(fake, log, state).run()
    assert sorted(c.key for c in fake.calls) == ["r9/s0", "r9/s1", "r9/s2"]


async def test_retryable_tool_error_is_retried_with_the_same_key() -> None:
    seen: list[tuple[str, int]] = []

    async def flaky(call: ToolCall) -> ToolResult:
        seen.append((call.key, call.attempt))
        if call.attempt < 3:
            return ToolResult(None, "try again", is_error=True, retryable=True)
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.chain(1)))

    async def no_sleep(_: float) -> None:
        return None

    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(flaky), log, state, sleep=no_sleep).run()
    assert outcome.state == "succeeded"
    assert seen == [("run-1/s0", 1), ("run-1/s0", 2), ("run-1/s0", 3)]
    types = [e.type for e in log.events("run-1")]
    assert types.count("StepRetrying") == 2


async def test_protocol_error_is_not_retried_and_fails_the_run() -> None:
    async def broken(call: ToolCall) -> ToolResult:
        raise ToolCallError("protocol_error", "bad params")

    log, state = h.start_run(h.bound(h.chain(2)))
    fake = FakeInvoker(broken)
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state).run()
    assert outcome.state == "failed"
    assert "s0" in (outcome.reason or "")
    assert len(fake.calls) == 1
    failed = [e for e in log.events("run-1") if e.type == "StepFailed"]
    assert failed[0].error_class == "protocol_error"  # type: ignore[attr-defined]


async def test_extraction_error_fails_the_step() -> None:
    async def empty(call: ToolCall) -> ToolResult:
        return ToolResult({"other": 1}, "")

    log, state = h.start_run(h.bound(h.chain(1)))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(empty), log, state).run()
    assert outcome.state == "failed"
    (failed,) = [e for e in log.events("run-1") if e.type == "StepFailed"]
    assert failed.error_class == "extraction_error"  # type: ignore[attr-defined]


async def test_timeout_of_idempotent_step_is_retried() -> None:
    calls = 0

    async def slow_once(call: ToolCall) -> ToolResult:
        nonlocal calls
        calls += 1
        if calls == 1:
            await anyio.sleep_forever()
        return await work_ok(call)

    text = h.BINDINGS.replace("    retries: 2\n", "    retries: 2\n    timeout: 0.05\n")
    log, state = h.start_run(h.bound(h.chain(1), text))

    async def no_sleep(_: float) -> None:
        return None

    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(slow_once), log, state, sleep=no_sleep).run()
    assert outcome.state == "succeeded"
    retry = [e for e in log.events("run-1") if e.type == "StepRetrying"]
    assert retry[0].error_class == "timeout"  # type: ignore[attr-defined]


async def test_global_limit_bounds_calls_in_flight() -> None:
    in_flight = 0
    peak = 0
    gate = anyio.Event()

    async def hold(call: ToolCall) -> ToolResult:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if peak >= 2:
            gate.set()
        await gate.wait()
        in_flight -= 1
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.wide(6)))
    with anyio.fail_after(10):
        await Runner(FakeInvoker(hold), log, state, max_parallel=2).run()
    assert peak == 2


async def test_per_server_limit_bounds_calls_in_flight() -> None:
    in_flight = 0
    peak = 0

    async def count(call: ToolCall) -> ToolResult:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.lowlevel.checkpoint()
        in_flight -= 1
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.wide(6)))
    runner = Runner(FakeInvoker(count), log, state, max_parallel=8, server_limits={"counter": 1})
    with anyio.fail_after(10):
        await runner.run()
    assert peak == 1


async def test_failed_step_is_replanned_around() -> None:
    async def work_fails(call: ToolCall) -> ToolResult:
        if call.tool == "work":
            return ToolResult(None, "no", is_error=True)
        return await work_ok(call)

    prob = h.problem(1)
    seen_failed: list[frozenset[tuple[str, tuple[str, ...]]]] = []

    def replanner(
        state: frozenset[h.Atom],
        failed: frozenset[tuple[str, tuple[str, ...]]],
        done: frozenset[tuple[str, tuple[str, ...]]],
        /,
        **_: object,
    ) -> h.Plan:
        seen_failed.append(failed)
        return h.plan([h.Step("s0", "alt", ("i0",))])

    def rebind(p: h.Plan, available: object) -> h.BoundPlan:
        return h.bound(p)

    log, state = h.start_run(h.bound(h.chain(1)))
    runner = Runner(
        FakeInvoker(work_fails), log, state, replan=make_replan(prob, replanner, rebind)
    )
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "succeeded"
    assert seen_failed == [frozenset({("work", ("i0",))})]
    replanned = [e for e in log.events("run-1") if isinstance(e, Replanned)]
    assert len(replanned) == 1
    # the cause, as the step's StepFailed gave it (no retry was allowed: a tool error)
    assert replanned[0].reason == "s0 failed (tool_error: no)"
    assert outcome.outputs["r1.s0"] == {"value": "alt i0"}


async def test_run_fails_with_reason_when_no_replan_exists() -> None:
    async def fails(call: ToolCall) -> ToolResult:
        return ToolResult(None, "no", is_error=True)

    log, state = h.start_run(h.bound(h.chain(1)))
    runner = Runner(
        FakeInvoker(fails),
        log,
        state,
        replan=make_replan(h.problem(1), lambda s, f, d, /, **_: None, lambda p, a: h.bound(p)),
    )
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "failed"
    assert "no other plan" in (outcome.reason or "")


def test_current_state_of_a_declarative_problem_refuses_a_numeric_argument() -> None:
    assert h.Atom("done", ("i0",)) in current_state(h.problem(1), [h.Step("s1", "work", ("i0",))])
    with pytest.raises(PlanInvalidError) as err:
        current_state(h.problem(1), [h.Step("s1", "work", ("i0",)), h.Step("s2", "work", (5,))])
    assert err.value.location is not None
    assert err.value.location.step == "s2"


async def test_replanning_a_declarative_step_with_a_numeric_argument_fails_the_run() -> None:
    async def fails(call: ToolCall) -> ToolResult:
        return ToolResult(None, "no", is_error=True)

    called: list[object] = []

    def replanner(state: object, failed: object, done: object, /, **_: object) -> None:
        called.append(failed)

    log, state = h.start_run(h.bound(h.plan([h.Step("s0", "alt", (5,))])))
    runner = Runner(
        FakeInvoker(fails),
        log,
        state,
        replan=make_replan(h.problem(1), replanner, lambda p, a: h.bound(p)),
    )
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "failed"
    assert "replanning failed" in (outcome.reason or "")
    assert "not an object name" in (outcome.reason or "")
    assert called == []


async def test_cancel_ends_the_run_cancelled() -> None:
    fake: FakeInvoker

    async def forever(call: ToolCall) -> ToolResult:
        await anyio.sleep_forever()
        raise AssertionError

    fake = FakeInvoker(forever)
    log, state = h.start_run(h.bound(h.wide(3)))
    runner = Runner(fake, log, state)
    started = fake.started
    async with anyio.create_task_group() as tg:

        async def go() -> None:
            outcome = await runner.run()
            assert outcome.state == "cancelled"

        tg.start_soon(go)
        with anyio.fail_after(10):
            await started.wait()
        runner.cancel("user asked")
    assert [e.type for e in log.events("run-1")][-2:] == ["RunCancelled", "RunFinished"]


async def test_a_replan_searches_off_the_event_loop_and_a_cancel_stops_the_search() -> None:
    """While the replan hook searches, the loop goes on (``cancel`` acts at once) and the
    search is told to stop; on the old runner the hook ran in the loop and blocked it."""

    async def fails(call: ToolCall) -> ToolResult:
        return ToolResult(None, "no", is_error=True)

    searching, stopped = threading.Event(), threading.Event()

    def replanner(
        state: object, failed: object, done: object, /, *, should_stop: object = None
    ) -> None:
        searching.set()
        deadline = time.monotonic() + 20  # a search of minutes, cut short: no hung test
        while time.monotonic() < deadline:
            if callable(should_stop) and should_stop():
                stopped.set()
                return
            time.sleep(0.001)

    log, state = h.start_run(h.bound(h.chain(2)))
    runner = Runner(
        FakeInvoker(fails),
        log,
        state,
        replan=make_replan(h.problem(2), replanner, lambda p, a: h.bound(p)),
    )
    outcomes: list[str] = []
    async with anyio.create_task_group() as tg:

        async def go() -> None:
            outcomes.append((await runner.run()).state)

        tg.start_soon(go)
        with anyio.fail_after(10):
            assert await anyio.to_thread.run_sync(searching.wait, 10)
        runner.cancel("user asked")
    assert outcomes == ["cancelled"]
    assert await anyio.to_thread.run_sync(stopped.wait, 10)
    kinds = [e.type for e in log.events("run-1")]
    assert kinds[-3:] == ["StepFailed", "RunCancelled", "RunFinished"]
    assert "Replanned" not in kinds


async def test_resume_skips_succeeded_and_recalls_started_with_same_key() -> None:
    log, state = h.start_run(h.bound(h.chain(3)))

    async def ok(call: ToolCall) -> ToolResult:
        return await work_ok(call)

    with anyio.fail_after(10):
        await Runner(FakeInvoker(ok), log, state).run()
    events = log.events("run-1")
    # cut the log just after s1 started: s0 done, s1 in flight
    cut = next(i for i, e in enumerate(events) if e.type == "StepStarted" and e.step == "s1")  # type: ignore[attr-defined]
    log2, _ = h.start_run(h.bound(h.chain(3)), run_id="run-1")
    for e in events[1 : cut + 1]:
        log2.append(e)
    fake = FakeInvoker(ok)
    with anyio.fail_after(10):
        outcome = await Runner(fake, log2, fold("run-1", log2.events("run-1"))).run()
    assert outcome.state == "succeeded"
    assert [c.step for c in fake.calls] == ["s1", "s2"]
    assert fake.calls[0].key == "run-1/s1"
    assert fake.calls[0].attempt == 2
    done = [e for e in log2.events("run-1") if isinstance(e, StepSucceeded)]
    assert [e.step for e in done] == ["s0", "s1", "s2"]
    seqs = [e.seq for e in log2.events("run-1")]
    assert seqs == list(range(1, len(seqs) + 1))


EXECUTE_ALT = h.BINDINGS.replace(
    '    arguments: {x: "alt ${x}"}\n', '    arguments: {x: "alt ${x}"}\n    tier: execute\n'
)


async def _replan_to_alt(alt_bindings: str, **runner_kw: object) -> tuple[object, list[str]]:
    """A read plan whose step fails for good, replanned to ``alt`` bound by ``alt_bindings``."""

    async def work_fails(call: ToolCall) -> ToolResult:
        if call.tool == "work":
            return ToolResult(None, "no", is_error=True)
        return await work_ok(call)

    def replanner(state: object, failed: object, done: object, /, **_: object) -> h.Plan:
        return h.plan([h.Step("s0", "alt", ("i0",), tier=h.Tier.READ)])

    read_plan = h.plan([h.Step("s0", "work", ("i0",), tier=h.Tier.READ)])
    log, state = h.start_run(h.bound(read_plan))
    assert state.plan_tiers == frozenset({h.Tier.READ})
    fake = FakeInvoker(work_fails)
    runner = Runner(
        fake,
        log,
        state,
        replan=make_replan(h.problem(1), replanner, lambda p, a: h.bound(p, alt_bindings)),
        **runner_kw,  # type: ignore[arg-type]
    )
    with anyio.fail_after(10):
        outcome = await runner.run()
    return outcome, [c.step for c in fake.calls]


async def test_replan_that_widens_read_to_execute_is_refused() -> None:
    outcome, called = await _replan_to_alt(EXECUTE_ALT)
    assert outcome.state == "failed"  # type: ignore[attr-defined]
    reason = outcome.reason or ""  # type: ignore[attr-defined]
    assert "needs tier(s) execute" in reason
    assert "did not cover" in reason
    assert "r1.s0" not in called  # the execute step never ran


async def test_replan_within_the_approved_tiers_proceeds() -> None:
    outcome, called = await _replan_to_alt(h.BINDINGS)
    assert outcome.state == "succeeded"  # type: ignore[attr-defined]
    assert called[-1] == "r1.s0"


async def test_replan_to_a_tier_the_policy_leaves_unattended_proceeds() -> None:
    outcome, called = await _replan_to_alt(EXECUTE_ALT, unattended_tiers=frozenset(h.Tier))
    assert outcome.state == "succeeded"  # type: ignore[attr-defined]
    assert called[-1] == "r1.s0"


def test_unapproved_tiers_lists_the_tiers_outside_the_covered_set() -> None:
    from plansmith.execution import unapproved_tiers

    read = h.Tier.READ
    steps = [h.Step("a", "work", ("i0",), tier=read), h.Step("b", "alt", ("i0",), tier=read)]
    plan = h.bound(h.plan(steps), EXECUTE_ALT)
    assert unapproved_tiers(plan, frozenset({h.Tier.READ})) == ("execute",)
    assert unapproved_tiers(plan, frozenset({h.Tier.READ, h.Tier.EXECUTE})) == ()


async def test_a_cancellation_nobody_asked_for_fails_the_step_as_a_protocol_error() -> None:
    import asyncio

    async def leaky(call: ToolCall) -> ToolResult:
        if call.step == "s1":
            raise asyncio.CancelledError  # a pool bug: not the runner's cancellation
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.wide(3)))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(leaky), log, state, max_replans=0).run()
    assert outcome.state == "failed"
    failed = [e for e in log.events(state.run_id) if isinstance(e, StepFailed)]
    assert [(e.step, e.error_class) for e in failed] == [("s1", "protocol_error")]
    succeeded = {e.step for e in log.events(state.run_id) if isinstance(e, StepSucceeded)}
    assert succeeded == {"s0", "s2"}


async def test_halt_stops_as_a_killed_engine_does_and_records_nothing_more() -> None:
    ended = anyio.Event()

    async def forever(call: ToolCall) -> ToolResult:
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()
        raise AssertionError

    fake = FakeInvoker(forever)
    log, state = h.start_run(h.bound(h.wide(2)))
    runner = Runner(fake, log, state)
    outcome = await h.run_until(runner, fake.started.wait, runner.halt)
    assert ended.is_set()  # the call in flight was cancelled
    assert outcome.state == "stopped"
    types = [e.type for e in log.events("run-1")]
    assert types[-1] == "StepStarted"
    assert not {"StepFailed", "RunCancelled", "RunFinished"} & set(types)


async def test_a_retried_step_s_duration_is_its_last_attempt_s_call_not_the_backoff() -> None:
    now = [0.0]  # a clock that moves only by the calls' time and the backoffs

    async def slow_then_ok(call: ToolCall) -> ToolResult:
        now[0] += 0.5 * call.attempt  # attempt 1: 0.5 s, 2: 1.0 s, 3: 1.5 s
        if call.attempt < 3:
            return ToolResult(None, "try again", is_error=True, retryable=True)
        return await work_ok(call)

    async def fail_each_time(call: ToolCall) -> ToolResult:
        now[0] += 0.25
        return ToolResult(None, "no", is_error=True, retryable=True)

    async def backoff(delay: float) -> None:
        now[0] += 10.0 + delay

    async def last_end(call: FakeCall) -> StepSucceeded | StepFailed:
        log, state = h.start_run(h.bound(h.chain(1)))
        runner = Runner(FakeInvoker(call), log, state, sleep=backoff, monotonic=lambda: now[0])
        with anyio.fail_after(10):
            await runner.run()
        return [e for e in log.events("run-1") if isinstance(e, StepSucceeded | StepFailed)][-1]

    done = await last_end(slow_then_ok)
    assert (done.type, done.attempt, done.duration_ms) == ("StepSucceeded", 3, 1500.0)
    failed = await last_end(fail_each_time)
    assert failed.type == "StepFailed"
    assert failed.attempt > 1
    assert failed.duration_ms == 250.0


def test_a_replan_failure_names_its_problems_and_counts_those_past_the_cap() -> None:
    problems = tuple(
        BindingError(
            f"problem {i}",
            location=Location("b.yaml", i + 1, 3, step=f"r1.s{i}"),
            hint=f"fix {i}",
        )
        for i in range(REPLAN_PROBLEMS_SHOWN + 3)
    )
    error = BindingError(
        f"{len(problems)} binding problem(s)", location=Location("b.yaml"), problems=problems
    )
    lines = replan_failure(error).splitlines()
    assert lines[0] == f"{len(problems)} binding problem(s):"
    assert lines[1:3] == ["  b.yaml:1:3 step r1.s0: problem 0", "    hint: fix 0"]
    assert lines[-1] == "  ... and 3 more problem(s)"
    assert len(lines) == 1 + 2 * REPLAN_PROBLEMS_SHOWN + 1
    long = BindingError("x", problems=(BindingError("y" * 10_000),))
    assert len(replan_failure(long)) < 1000
    alone = BindingError("no object", location=Location(step="s3"))
    assert replan_failure(alone) == "step s3: no object"
