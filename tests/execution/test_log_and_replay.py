"""The run log (SQLite and PostgreSQL, blobs), the pure policies, and replay from a
recorded log. The log tests run on both stores (``open_log``); PostgreSQL is a real
server (``tests/_pg_server.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import cast

import _exec_helpers as h
import anyio
import pytest
from _log_fixtures import OpenLog, log_opener

from plansmith.binding import BoundPlan, StepPolicy, bind
from plansmith.errors import ExecutionError, RunNotFoundError, ToolCallError
from plansmith.execution import (
    ApprovalPolicy,
    AwaitingApproval,
    Event,
    FakeInvoker,
    PartEnd,
    PlanReady,
    RecordingInvoker,
    Replanned,
    ReplayInvoker,
    RunCancelled,
    RunCreated,
    RunFinished,
    Runner,
    RunStarted,
    StepStarted,
    StepState,
    StepSucceeded,
    ToolCall,
    ToolResult,
    bound_from_dict,
    bound_to_dict,
    event_from_dict,
    fold,
    recorded_parts,
    replay_env,
    replay_replan,
    should_retry,
    tiers_needing_approval,
    transition,
)
from plansmith.execution._emit import Emitter
from plansmith.model import Tier

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "postgres"])
def open_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenLog]:
    """Opens the same store again at each call: a SQLite file, or a fresh PostgreSQL schema."""
    with log_opener(request.param, tmp_path) as opener:
        yield opener


async def big(call: ToolCall) -> ToolResult:
    return ToolResult({"done": "x" * 40_000, "key": call.key}, "")


async def test_log_survives_reopen_and_keeps_large_outputs_as_blobs(open_log: OpenLog) -> None:
    log = open_log()
    log2, state = h.start_run(h.bound(h.chain(2)), log)
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(big), log2, state).run()
    assert outcome.outputs["s1"] == {"done": "x" * 40_000, "key": "run-1/s1"}
    log.close()
    reopened = open_log()
    events = reopened.events("run-1")
    done = [e for e in events if isinstance(e, StepSucceeded)]
    assert done[0].outputs == {"$blob": done[0].outputs["$blob"]}  # type: ignore[index]
    assert [r.run_id for r in reopened.runs()] == ["run-1"]
    with pytest.raises(RunNotFoundError):
        reopened.events("nope")
    assert fold("run-1", events).finished == "succeeded"
    reopened.close()


async def test_replay_answers_each_attempt_as_recorded() -> None:
    async def flaky(call: ToolCall) -> ToolResult:
        if call.attempt == 1:
            return ToolResult(None, "busy", is_error=True, retryable=True)
        if call.attempt == 2:
            raise ToolCallError("transport_lost", "gone")
        return ToolResult({"done": "ok", "key": call.key}, "")

    async def no_sleep(_: float) -> None:
        return None

    log, state = h.start_run(h.bound(h.chain(1)))
    with anyio.fail_after(10):
        await Runner(FakeInvoker(flaky), log, state, sleep=no_sleep).run()
    recorded = log.events("run-1")
    log2, state2 = h.start_run(h.bound(h.chain(1)), run_id="run-1")
    replayer = RecordingInvoker(ReplayInvoker(log, recorded))
    with anyio.fail_after(10):
        outcome = await Runner(
            replayer, log2, state2, sleep=no_sleep, replan=replay_replan(recorded)
        ).run()
    assert outcome.outputs == {"s0": {"done": "ok", "key": "run-1/s0"}}
    replayed = log2.events("run-1")
    assert [(e.type, getattr(e, "attempt", 0)) for e in replayed[1:]] == [
        (e.type, getattr(e, "attempt", 0)) for e in recorded[1:]
    ]
    assert [r.error_class for r in replayer.records] == [None, "transport_lost", None]


_NOT_IDEMPOTENT = h.BINDINGS.replace("retries: 2\n    idempotent: true", "retries: 3")


async def _recorded_then_replayed(outcome_of: FakeInvoker) -> tuple[list[Event], list[Event]]:
    """A one-step run of ``work`` (3 retries, not idempotent) with ``outcome_of``'s
    answers, then its replay: the recorded events and the replayed ones."""

    async def no_sleep(_: float) -> None:
        return None

    plan = h.bound(h.chain(1), _NOT_IDEMPOTENT)
    log, state = h.start_run(plan)
    with anyio.fail_after(10):
        await Runner(outcome_of, log, state, sleep=no_sleep).run()
    recorded = log.events("run-1")
    log2, state2 = h.start_run(plan, run_id="run-1")
    with anyio.fail_after(10):
        await Runner(ReplayInvoker(log, recorded), log2, state2, sleep=no_sleep).run()
    return recorded, log2.events("run-1")


def _steps(events: list[Event]) -> list[tuple[str, int]]:
    return [(e.type, getattr(e, "attempt", 0)) for e in events[1:] if e.type.startswith("Step")]


async def test_replay_does_not_retry_a_call_whose_server_was_given_up_on() -> None:
    # the pool gave the server up after its restarts: final, though retries are left
    async def given_up(call: ToolCall) -> ToolResult:
        raise ToolCallError("transport_lost", "gone", final=call.attempt == 2)

    recorded, replayed = await _recorded_then_replayed(FakeInvoker(given_up))
    assert _steps(recorded)[-1] == ("StepFailed", 2)
    assert _steps(replayed) == _steps(recorded)


async def test_replay_retries_a_timeout_the_record_retried_for_its_progress() -> None:
    # not idempotent: a timeout is retried only because the call reported progress
    async def progressed(call: ToolCall) -> ToolResult:
        if call.attempt == 1:
            raise ToolCallError("timeout", "too slow", progressed=True)
        return ToolResult({"done": "ok", "key": call.key}, "")

    recorded, replayed = await _recorded_then_replayed(FakeInvoker(progressed))
    assert _steps(recorded)[-1] == ("StepSucceeded", 2)
    assert _steps(replayed) == _steps(recorded)


async def test_replay_of_an_attempt_never_recorded_is_an_error() -> None:
    with pytest.raises(ExecutionError):
        await ReplayInvoker(h.MemoryRunLog(), []).invoke(ToolCall("s", "t", {}, "k", step="s0"))


def test_a_replay_renders_each_env_reference_of_the_recorded_plans_as_itself() -> None:
    text = h.BINDINGS.replace('{name: "${x}"}', '{name: "${env.A}/${x}"}')
    text = text.replace('{x: "alt ${x}"}', '{x: "alt ${env.B}"}')
    env = {"A": "/a", "B": "/b"}  # the run's values: not in the log, not needed to replay
    first = bind(h.chain(1), h.domain(), h.bindings(text), h.CATALOG, env=env)
    again = bind(h.chain(1, "alt"), h.domain(), h.bindings(text), h.CATALOG, env=env)
    events = [
        PlanReady(run_id="r", plan_hash=first.plan_hash, bound=bound_to_dict(first)),
        Replanned(run_id="r", failed=("s0",), plan_hash="h2", bound=bound_to_dict(again)),
    ]
    assert replay_env(events) == {"A": "${env.A}", "B": "${env.B}"}
    assert replay_env(events[:1]) == {"A": "${env.A}"}


def test_retry_rules_per_failure_class() -> None:
    policy = StepPolicy(retries=1)
    idem = StepPolicy(retries=1, idempotent=True)
    assert should_retry(ToolCallError("transport_lost", ""), 1, policy)
    assert not should_retry(ToolCallError("transport_lost", ""), 2, policy)
    # a server the pool gave up on: no later attempt can reach it
    assert not should_retry(ToolCallError("transport_lost", "", final=True), 1, idem)
    assert not should_retry(ToolCallError("timeout", ""), 1, policy)
    assert should_retry(ToolCallError("timeout", ""), 1, idem)
    assert should_retry(ToolCallError("timeout", "", progressed=True), 1, policy)
    assert not should_retry(ToolCallError("tool_error", ""), 1, idem)
    assert should_retry(ToolCallError("tool_error", "", retryable=True), 1, policy)
    assert not should_retry(ToolCallError("protocol_error", ""), 1, idem)
    assert not should_retry(ToolCallError("extraction_error", ""), 1, idem)


def test_a_lost_transport_is_re_sent_once_under_the_default_policy() -> None:
    lost = ToolCallError("transport_lost", "")
    default = StepPolicy()  # retries: 0
    assert should_retry(lost, 1, default)  # the one re-send, after the restart
    assert not should_retry(lost, 2, default)
    assert not should_retry(lost, 1, default, keyed=False)  # no key: a repeat may not be safe
    assert not should_retry(ToolCallError("transport_lost", "", final=True), 1, default)
    off = StepPolicy(resend_on_transport_lost=False)
    assert not should_retry(lost, 1, off)
    assert should_retry(lost, 1, StepPolicy(retries=1, resend_on_transport_lost=False))
    # retries count as before: the re-send is not one more on top of them
    assert should_retry(lost, 2, StepPolicy(retries=2))
    assert not should_retry(lost, 3, StepPolicy(retries=2))
    for other in ("timeout", "tool_error", "protocol_error", "extraction_error"):
        failed = ToolCallError(other, "", retryable=True, progressed=True)
        assert not should_retry(failed, 1, StepPolicy(idempotent=True))


def test_state_table_rejects_an_event_out_of_order() -> None:
    assert transition(StepState.PENDING, "StepStarted") is StepState.RUNNING
    with pytest.raises(ExecutionError):
        transition(StepState.SUCCEEDED, "StepStarted", "s1")


def test_approval_policy_names_the_tiers_that_need_a_person() -> None:
    steps = [h.Step("a", "work", ("i0",), tier=Tier.READ), h.Step("b", "finish", ("i0",))]
    b = h.bound(h.plan(steps))
    assert tiers_needing_approval(b, ApprovalPolicy()) == ("write",)
    assert tiers_needing_approval(b, ApprovalPolicy.parse("none")) == ()
    assert tiers_needing_approval(b, ApprovalPolicy.parse("all")) == ("read", "write")
    assert ApprovalPolicy.parse("read").needs_person == frozenset({Tier.READ})


@pytest.mark.parametrize("text", ["", " ", " , "])
def test_an_empty_approval_policy_is_refused_not_read_as_none(text: str) -> None:
    with pytest.raises(ValueError, match="say none"):
        ApprovalPolicy.parse(text)


def test_emitter_defers_views_until_the_events_are_flushed() -> None:
    log = h.MemoryRunLog()
    log.create_run("r", "", {})
    seen: list[str] = []
    emitter = Emitter(log, "r")
    emitter.subscribe(lambda e: seen.append(e.type))
    emitter.emit(PlanReady(run_id="r", plan_hash="h"), defer=True)
    assert seen == []
    emitter.flush()
    assert seen == ["PlanReady"]


def test_bound_plan_codec_keeps_argument_types() -> None:
    b = h.bound(h.plan([h.Step("a", "alt", (3,)), h.Step("b", "alt", (2.5,))]))
    b2 = h.bound(h.plan([h.Step("c", "alt", (True,)), h.Step("d", "alt", (None,))]))
    for bound in (b, b2):
        back = bound_from_dict(bound_to_dict(bound))
        assert back == bound
        for mine, theirs in zip(bound.steps, back.steps, strict=True):
            assert [type(a) for a in theirs.step.args] == [type(a) for a in mine.step.args]
            assert [type(v) for _, v in theirs.params] == [type(v) for _, v in mine.params]


def test_the_codec_keeps_a_binding_that_turns_the_re_send_off() -> None:
    on = h.bound(h.chain(2))
    assert "resend_on_transport_lost" not in json.dumps(bound_to_dict(on))  # the default
    assert all(s.policy.resend_on_transport_lost for s in bound_from_dict(bound_to_dict(on)).steps)
    text = h.BINDINGS.replace(
        "    idempotent: true\n", "    idempotent: true\n    resend_on_transport_lost: false\n", 1
    )
    off = h.bound(h.chain(2), text)
    back = bound_from_dict(json.loads(json.dumps(bound_to_dict(off))))
    assert back == off
    assert [s.policy.resend_on_transport_lost for s in back.steps] == [False, False]


def test_the_codec_keeps_the_defaults_of_optional_outputs() -> None:
    plain = h.bound(h.chain(2))
    assert "defaults" not in json.dumps(bound_to_dict(plain))  # none: nothing written
    text = h.BINDINGS.replace(
        'outputs: {done: "$.structured.done", key: "$.structured.key"}',
        'outputs: {done: "$.structured.done",'
        ' key: {path: "$.structured.key", default: {none: [1, null]}}}',
    )
    optional = h.bound(h.chain(2), text)
    back = bound_from_dict(json.loads(json.dumps(bound_to_dict(optional))))
    assert back == optional
    work = next(s for s in back.steps if s.step.action == "work")
    assert work.defaults == (("key", {"none": [1, None]}),)


def test_a_bound_plan_read_back_from_json_shares_what_its_steps_share() -> None:
    bound = h.bound(h.plan([h.Step(f"a{k}", "alt", ("same",)) for k in range(3)]))
    back = bound_from_dict(json.loads(json.dumps(bound_to_dict(bound))))
    assert back == bound
    first, *rest = back.steps
    for step in rest:  # one object each, as bind made them, not a copy per step
        assert step.server is first.server
        assert step.tool is first.tool
        assert step.step.action is first.step.action
        assert step.outputs is first.outputs
        assert step.policy is first.policy
        assert step.arguments is first.arguments


def test_a_bound_plan_read_back_keeps_arguments_that_differ_apart() -> None:
    one = h.bound(h.plan([h.Step("a", "alt", ("x",))])).steps[0]
    steps = tuple(
        replace(one, step=replace(one.step, id=f"s{k}"), arguments=arguments)
        for k, arguments in enumerate(
            [
                {"a": 1, "b": 2},
                {"b": 2, "a": 1},
                {"a": 1.0, "b": 2},
                {"a": True, "b": 2},
                [1],
                (1,),
                {"a": 1, "b": 2},
            ]
        )
    )
    back = bound_from_dict(bound_to_dict(BoundPlan("h", steps)))
    arguments = [s.arguments for s in back.steps]
    assert arguments == [s.arguments for s in steps]
    assert [list(a) for a in arguments[:2] if isinstance(a, dict)] == [["a", "b"], ["b", "a"]]
    assert [type(a) for a in arguments[4:6]] == [list, tuple]
    assert type(cast(dict[str, object], arguments[2])["a"]) is float
    assert cast(dict[str, object], arguments[3])["a"] is True
    assert arguments[6] is arguments[0]
    assert len({id(a) for a in arguments}) == 6


def test_step_events_keep_argument_types_and_print_the_call() -> None:
    event = StepSucceeded(run_id="r", step="s1", action="a_mix", args=("left", 3, 2.5, None))
    back = event_from_dict(event.to_dict())
    assert isinstance(back, StepSucceeded)
    assert back == event
    assert [type(a) for a in back.args] == [str, int, float, type(None)]
    assert event.call == "a_mix(left, 3, 2.5, null)"


@pytest.mark.parametrize("count", [1, 2, 200, 201, 450])
def test_flush_writes_every_appended_event_in_order(open_log: OpenLog, count: int) -> None:
    log = open_log()
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    for k in range(count):
        emitter.emit(PlanReady(run_id="r", plan_hash=f"h{k}"), defer=True)
    emitter.flush()
    log.close()
    reopened = open_log()
    events = reopened.events("r")
    reopened.close()
    assert [e.seq for e in events] == list(range(1, count + 1))
    assert [e.plan_hash for e in events][-1] == f"h{count - 1}"  # type: ignore[attr-defined]


def test_flush_of_a_duplicate_event_fails_and_writes_none_of_its_batch(
    open_log: OpenLog,
) -> None:
    log = open_log()
    log.create_run("r", "", {})
    first = PlanReady(run_id="r", seq=1, time="t", plan_hash="a")
    log.append(first)
    log.flush()
    log.append(PlanReady(run_id="r", seq=2, time="t", plan_hash="b"))
    log.append(first)  # seq 1 again
    with pytest.raises(ExecutionError):
        log.flush()
    assert [e.seq for e in log.events("r")] == [1]
    log.close()


def test_emitter_stamps_utc_times_to_the_millisecond() -> None:
    log = h.MemoryRunLog()
    log.create_run("r", "", {})
    emitter = Emitter(log, "r")
    stamps = [emitter.emit(PlanReady(run_id="r", plan_hash="h")).time for _ in range(3)]
    for stamp in stamps:
        assert len(stamp) == len("2026-01-01T00:00:00.000Z")
        assert (stamp[10], stamp[19], stamp[-1]) == ("T", ".", "Z")
    assert stamps == sorted(stamps)


def test_pack_keeps_small_values_inline_and_moves_large_ones_to_blobs() -> None:
    log = h.MemoryRunLog()
    emitter = Emitter(log, "r", inline_limit=100)
    small = {"a": [1, 2.5, None, True], "b": "x" * 10}
    assert emitter.pack(small) == small
    assert set(emitter.pack({"a": "x" * 200})) == {"$blob"}  # type: ignore[arg-type]
    assert set(emitter.pack([10**40] * 5)) == {"$blob"}  # type: ignore[arg-type]
    escaped = "\u0001" * 30  # 30 characters, 180 bytes of JSON
    assert set(emitter.pack({"e": escaped})) == {"$blob"}  # type: ignore[arg-type]
    assert emitter.pack({"e": "\u0001" * 10}) == {"e": "\u0001" * 10}


async def _record_stopped_then_resumed() -> list[Event]:
    """A chain of 3 whose first engine stops (``halt``) while s1 is in flight, then a
    resume that finishes it, as its log records it."""
    log, state = h.start_run(h.bound(h.chain(3)))
    in_flight = anyio.Event()

    async def stuck_at_s1(call: ToolCall) -> ToolResult:
        if call.step == "s1":
            in_flight.set()
            await anyio.sleep_forever()
        return await h.work_ok(call)

    runner = Runner(FakeInvoker(stuck_at_s1), log, state)
    await h.run_until(runner, in_flight.wait, runner.halt)
    with anyio.fail_after(10):
        await Runner(FakeInvoker(h.work_ok), log, fold("run-1", log.events("run-1"))).run()
    return log.events("run-1")


async def test_a_recorded_run_is_cut_into_one_part_per_engine_that_drove_it() -> None:
    events = await _record_stopped_then_resumed()
    parts = recorded_parts(events)
    assert [p.ending for p in parts] == ["stopped", "finished"]
    assert [e.type for e in parts[0].before] == ["PlanReady"]
    assert parts[1].before == ()
    second = [i for i, e in enumerate(events) if e.type == "RunStarted"][1]
    assert parts[1].prefix == tuple(events[:second])
    assert [p.events[0].type for p in parts] == ["RunStarted", "RunStarted"]
    assert [e.type for e in parts[0].events][-1] == "StepStarted"  # s1, then the stop
    assert sum(len(p.before) + len(p.events) for p in parts) == len(events)


def test_recorded_parts_of_a_cancelled_run_and_of_runs_that_never_started() -> None:
    r = "r"
    started = StepStarted(run_id=r, step="s0", action="work", attempt=1)
    cancelled = [
        PlanReady(run_id=r, plan_hash="h"),
        RunStarted(run_id=r),
        started,
        RunCancelled(run_id=r, reason="user asked"),
        RunFinished(run_id=r, state="cancelled", reason="user asked"),
    ]
    (part,) = recorded_parts(cancelled)
    assert (part.ending, part.reason, part.peak) == ("cancelled", "user asked", 1)
    waiting = [PlanReady(run_id=r, plan_hash="h"), AwaitingApproval(run_id=r, plan_hash="h")]
    (part,) = recorded_parts(waiting)
    assert (part.before, part.events, part.ending) == (tuple(waiting), (), "stopped")
    bind_failed = [RunCreated(run_id=r), RunFinished(run_id=r, state="failed", reason="x")]
    (part,) = recorded_parts(bind_failed)
    assert (part.before, part.events) == (tuple(bind_failed), ())
    # a resume that waits for an approval after the first engine stopped
    (first, after) = recorded_parts([*cancelled[:3], *waiting[1:]])
    assert (first.ending, [e.type for e in after.before], after.events) == (
        "stopped",
        ["AwaitingApproval"],
        (),
    )


def test_part_end_stops_once_every_recorded_step_event_was_made_again() -> None:
    r = "r"
    recorded = [
        RunStarted(run_id=r),
        StepStarted(run_id=r, step="s0", action="work", attempt=1),
        StepSucceeded(run_id=r, step="s0", action="work", attempt=1),
        StepStarted(run_id=r, step="s1", action="work", attempt=1),
    ]
    (part,) = recorded_parts(recorded)
    stops: list[int] = []
    end = PartEnd(part, lambda: stops.append(1))
    replayed = [
        RunStarted(run_id=r),
        StepStarted(run_id=r, step="s0", action="work", attempt=1),
        StepStarted(run_id=r, step="s9", action="work", attempt=1),  # not the record's
        StepSucceeded(run_id=r, step="s0", action="work", attempt=1),
    ]
    for event in replayed:
        end(event)
    assert stops == []
    end(recorded[3])
    assert stops == [1]
    end(recorded[3])
    assert stops == [1]


async def test_replay_invoker_waits_on_an_attempt_the_record_has_no_outcome_for() -> None:
    seen: list[str] = []
    invoker = ReplayInvoker(h.MemoryRunLog(), [], unrecorded=lambda call: seen.append(call.step))
    with anyio.move_on_after(0.05) as scope:  # waits: until cancelled
        await invoker.invoke(ToolCall("s", "t", {}, "k", step="s0"))
    assert scope.cancelled_caught
    assert seen == ["s0"]
