"""The runner's per-step fast path: a chain's next step in the same worker (and its
fallback to the queue), the inline first attempt, and the fast constructors and state
updates, each against the plain one."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import _exec_helpers as h
import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.binding import ToolCatalog, ToolSpec, extract
from plansmith.errors import ExecutionError
from plansmith.execution import (
    FakeInvoker,
    MemoryRunLog,
    RunLog,
    Runner,
    RunState,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepState,
    StepSucceeded,
    ToolCall,
    ToolResult,
    apply_event,
)
from plansmith.execution._emit import Emitter, iso_time
from plansmith.execution._event_fast import tool_call
from plansmith.execution._runner import _is_static, _millis, _pick_result, _result_paths
from plansmith.execution._states import apply_step_started, apply_step_succeeded
from plansmith.model import JSONValue, Step

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


work_ok = h.work_ok


class InFlight:
    """A ``work_ok`` tool that counts the calls in flight at once (``peak``)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0

    async def __call__(self, call: ToolCall) -> ToolResult:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await anyio.lowlevel.checkpoint()
        self.in_flight -= 1
        return await work_ok(call)


def types_of(log: RunLog, step: str) -> list[str]:
    return [e.type for e in log.events("run-1") if getattr(e, "step", None) == step]


# -- a chain in one worker, and the fallbacks ------------------------------------------


async def test_a_chain_then_a_fan_out_then_a_join_runs_each_step_once_in_order() -> None:
    steps = [
        Step("s0", "work", ("i0",)),
        Step("s1", "work", ("i1",), after=("s0",)),
        Step("s2", "work", ("i2",), after=("s1",)),
        *(Step(f"f{k}", "work", (f"i{k}",), after=("s2",)) for k in range(3, 7)),
        Step("j", "work", ("i7",), after=("f3", "f4", "f5", "f6")),
    ]
    count = InFlight()
    fake = FakeInvoker(count)
    log, state = h.start_run(h.bound(h.plan(steps), catalog=h.CATALOG), run_id="run-1")
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state, max_parallel=2).run()
    assert outcome.state == "succeeded"
    called = [c.step for c in fake.calls]
    assert sorted(called) == sorted(s.id for s in steps)  # each step once
    assert called[:3] == ["s0", "s1", "s2"]
    assert called[-1] == "j"
    assert count.peak == 2  # the fan-out used both slots, never more
    events = log.events("run-1")
    ends = {e.step: e.seq for e in events if isinstance(e, StepSucceeded)}
    starts = {e.step: e.seq for e in events if isinstance(e, StepStarted)}
    for s in steps:
        assert all(ends[d] < starts[s.id] for d in s.after)


TWO_SERVERS = ToolCatalog(
    (
        h.CATALOG.servers[0],
        ("other", (ToolSpec("echo", {"type": "object", "properties": {"x": {}}}),)),
    )
)
TWO_SERVER_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {done: "$.structured.done"}
  finish:
    server: other
    tool: echo
    arguments: {x: "f ${x}"}
    outputs: {value: "$.structured.value"}
"""


async def test_a_chain_step_whose_server_is_at_its_limit_waits_in_the_queue() -> None:
    # b holds "other"'s only slot while c0 ends: c1 (on "other") cannot start in c0's
    # worker; it waits in the queue and starts when b ends
    steps = [
        Step("b", "finish", ("i0",)),
        Step("c0", "work", ("i1",)),
        Step("c1", "finish", ("i1",), after=("c0",)),
    ]
    release = anyio.Event()
    on_other = 0
    peak_other = 0

    async def handler(call: ToolCall) -> ToolResult:
        nonlocal on_other, peak_other
        if call.server == "other":
            on_other += 1
            peak_other = max(peak_other, on_other)
        if call.step == "b":
            await release.wait()
        if call.step == "c0":
            release.set()  # b wakes only after c0's worker has dispatched c1
        if call.server == "other":
            on_other -= 1
        return await work_ok(call)

    b = h.bound(h.plan(steps), TWO_SERVER_BINDINGS, TWO_SERVERS)
    log, state = h.start_run(b)
    runner = Runner(FakeInvoker(handler), log, state, server_limits={"other": 1})
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "succeeded"
    assert peak_other == 1
    events = log.events("run-1")
    b_end = next(e.seq for e in events if isinstance(e, StepSucceeded) and e.step == "b")
    c0_end = next(e.seq for e in events if isinstance(e, StepSucceeded) and e.step == "c0")
    c1_start = next(e.seq for e in events if isinstance(e, StepStarted) and e.step == "c1")
    assert c0_end < b_end < c1_start


async def test_a_long_queue_starts_in_plan_order_under_the_global_limit() -> None:
    count = InFlight()
    fake = FakeInvoker(count)
    log, state = h.start_run(h.bound(h.wide(20)))
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state, max_parallel=3).run()
    assert outcome.state == "succeeded"
    assert count.peak == 3
    assert [c.step for c in fake.calls] == [f"s{k}" for k in range(20)]


async def test_cancel_while_a_chain_step_runs_in_the_first_steps_worker() -> None:
    async def hold_s1(call: ToolCall) -> ToolResult:
        if call.step == "s1":
            await anyio.sleep_forever()
        return await work_ok(call)

    fake = FakeInvoker(hold_s1)
    log, state = h.start_run(h.bound(h.chain(3)))
    runner = Runner(fake, log, state)

    async def s1_called() -> None:
        while len(fake.calls) < 2:  # wait for each call's start
            await fake.started.wait()

    outcome = await h.run_until(runner, s1_called, lambda: runner.cancel("user asked"))
    assert outcome.state == "cancelled"
    assert types_of(log, "s0") == ["StepStarted", "StepSucceeded"]
    assert types_of(log, "s1") == ["StepStarted"]
    assert types_of(log, "s2") == []
    assert [e.type for e in log.events("run-1")][-2:] == ["RunCancelled", "RunFinished"]


async def test_a_chain_step_that_times_out_is_retried_with_the_same_key() -> None:
    calls: list[ToolCall] = []

    async def slow_first_s1(call: ToolCall) -> ToolResult:
        calls.append(call)
        if call.step == "s1" and call.attempt == 1:
            await anyio.sleep_forever()
        return await work_ok(call)

    text = h.BINDINGS.replace("    retries: 2\n", "    retries: 2\n    timeout: 0.05\n")
    log, state = h.start_run(h.bound(h.chain(3), text))

    async def no_sleep(_: float) -> None:
        return None

    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(slow_first_s1), log, state, sleep=no_sleep).run()
    assert outcome.state == "succeeded"
    assert [(c.step, c.attempt) for c in calls] == [("s0", 1), ("s1", 1), ("s1", 2), ("s2", 1)]
    assert {c.key for c in calls if c.step == "s1"} == {"run-1/s1"}
    (retry,) = [e for e in log.events("run-1") if isinstance(e, StepRetrying)]
    assert (retry.step, retry.error_class, retry.attempt) == ("s1", "timeout", 1)
    (end,) = [e for e in log.events("run-1") if isinstance(e, StepSucceeded) and e.step == "s1"]
    assert end.attempt == 2


async def test_a_tool_error_of_a_chain_step_is_classified_and_retried() -> None:
    async def error_once(call: ToolCall) -> ToolResult:
        if call.step == "s1" and call.attempt == 1:
            return ToolResult(None, "busy", is_error=True, retryable=True)
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.chain(2)))

    async def no_sleep(_: float) -> None:
        return None

    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(error_once), log, state, sleep=no_sleep).run()
    assert outcome.state == "succeeded"
    (retry,) = [e for e in log.events("run-1") if isinstance(e, StepRetrying)]
    assert (retry.step, retry.error_class, retry.message) == ("s1", "tool_error", "busy")


async def test_a_cancellation_nobody_asked_for_in_a_chain_step_is_a_protocol_error() -> None:
    async def leaky(call: ToolCall) -> ToolResult:
        if call.step == "s1":
            raise asyncio.CancelledError  # a pool bug, in the step the first worker kept
        return await work_ok(call)

    log, state = h.start_run(h.bound(h.chain(3)))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(leaky), log, state, max_replans=0).run()
    assert outcome.state == "failed"
    failed = [e for e in log.events("run-1") if isinstance(e, StepFailed)]
    assert [(e.step, e.error_class) for e in failed] == [("s1", "protocol_error")]
    assert types_of(log, "s2") == []


class FakeKeepingNothing:
    """Answers as ``work_ok`` and keeps no call (a ``FakeInvoker`` keeps each call, with
    its progress callback, which refers to the runner)."""

    async def invoke(self, call: ToolCall) -> ToolResult:
        return await work_ok(call)


async def test_a_finished_run_leaves_no_reference_cycle() -> None:
    log, state = h.start_run(h.bound(h.chain(3)))
    invoker = FakeKeepingNothing()
    runner = Runner(invoker, log, state)
    # the runner is the invoker's only holder: the invoker goes when the runner does (a
    # weak reference to the runner itself is not possible in the compiled build)
    alive = weakref.ref(invoker)
    del invoker
    gc.disable()
    try:
        with anyio.fail_after(10):
            outcome = await runner.run()
        assert outcome.state == "succeeded"
        assert alive() is not None
        del runner
        assert alive() is None  # freed by its reference count, not by the collector
    finally:
        gc.enable()


OUTPUT_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {all: "$.structured.items[*].n", second: "$.structured.items[1].n"}
"""


async def test_outputs_with_paths_that_are_not_simple_are_still_extracted() -> None:
    async def items(call: ToolCall) -> ToolResult:
        return ToolResult({"items": [{"n": 1}, {"n": 2}]}, "")

    log, state = h.start_run(h.bound(h.chain(2), OUTPUT_BINDINGS))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(items), log, state).run()
    assert outcome.state == "succeeded"
    assert outcome.outputs["s1"] == {"all": [1, 2], "second": 2}


async def test_an_output_holding_a_tuple_reaches_the_step_that_refers_to_it() -> None:
    # a tool invoker of the Python API may answer with tuples for arrays; the runner
    # passes such a value on as it is, in the compiled build as in the sources
    seen: list[dict[str, Any]] = []

    async def answer(call: ToolCall) -> ToolResult:
        seen.append(dict(call.arguments))
        if call.tool == "work":
            return ToolResult({"done": ("a", 1), "key": call.key}, "")
        return ToolResult({"value": call.arguments["x"]}, "")

    steps = [Step("s0", "work", ("i0",)), Step("s1", "finish", ("i0",), after=("s0",))]
    log, state = h.start_run(h.bound(h.plan(steps)))
    with anyio.fail_after(10):
        outcome = await Runner(FakeInvoker(answer), log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    assert seen[1] == {"x": ("a", 1)}
    assert outcome.outputs["s0"] == {"done": ("a", 1), "key": "run-1/s0"}
    assert outcome.outputs["s1"] == {"value": ("a", 1)}


# -- the fast pieces against the plain ones ----------------------------------------------


RESULT = ToolResult({"a": {"b": [10, {"c": "x"}]}, "n": None}, "[1, 2]")


@pytest.mark.parametrize(
    "path",
    [
        "$.structured.a.b[0]",
        "$.structured.a.b[1].c",
        "$.structured.n",
        "$.json[1]",
        "$.text",
        "$['structured']['a']",
        "$.structured.a.b[2]",  # out of range
        "$.structured.missing",
        "$.text.length",  # a string has no keys
        "$.json.x",  # a list has no keys
        "$.structured.a[0]",  # a dict has no indices
    ],
)
def test_pick_gives_what_extract_gives_for_simple_paths(path: str) -> None:
    outputs = (("v", path), ("w", "$.is_error"))
    paths = _result_paths(outputs)
    assert paths is not None
    try:
        expected = extract(outputs, RESULT.document())
    except Exception:
        assert _pick_result(RESULT, paths) is None  # extract then gives the error
    else:
        assert _pick_result(RESULT, paths) == expected


def test_a_path_that_is_not_simple_or_not_below_a_document_field_takes_extract() -> None:
    assert _result_paths((("a", "$.structured.x"), ("b", "$..x"))) is None
    assert _result_paths((("a", "$.x"),)) is None  # no such field: extract says so
    assert _result_paths((("a", "$"),)) is None  # the whole document
    assert _result_paths(()) == ()


STATES = st.sampled_from(list(StepState))


def _apply(update: Callable[[RunState, Any], None], run: RunState, event: Any) -> object:
    """The state after ``update``, or the message of the error it raised."""
    try:
        update(run, event)
    except ExecutionError as error:
        return error.message
    return run


@given(
    current=st.none() | STATES,
    known=st.integers(0, 3),
    attempt=st.integers(1, 4),
    last_seq=st.integers(0, 10),
    seq=st.integers(1, 12),
)
def test_the_step_events_own_updates_agree_with_apply_event(
    current: StepState | None, known: int, attempt: int, last_seq: int, seq: int
) -> None:
    def fresh() -> RunState:
        run = RunState("r", last_seq=last_seq, order=["p"])
        if current is not None:
            run.states["s"] = current
        if known:
            run.attempts["s"] = known
        return run

    started = StepStarted(
        run_id="r", seq=seq, time="t", step="s", action="a", attempt=attempt, key="r/s"
    )
    ended = StepSucceeded(
        run_id="r", seq=seq + 1, time="t", step="s", action="a", attempt=attempt, outputs={"v": 1}
    )
    plain = _apply(apply_event, fresh(), started)
    assert _apply(apply_step_started, fresh(), started) == plain
    plain = _apply(apply_event, fresh(), ended)
    assert _apply(apply_step_succeeded, fresh(), ended) == plain


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(
    structured=st.none() | st.dictionaries(st.text(), JSON, max_size=4),
    text=st.text(),
    is_error=st.booleans(),
    retryable=st.booleans(),
    limit=st.sampled_from([0, 60, 400, 600, 2000, 65536]),
)
def test_pack_result_packs_as_pack_of_to_dict(
    structured: dict[str, object] | None, text: str, is_error: bool, retryable: bool, limit: int
) -> None:
    result = ToolResult(structured, text, is_error, retryable)  # type: ignore[arg-type]
    quick = Emitter(MemoryRunLog(), "r", inline_limit=limit)
    plain = Emitter(MemoryRunLog(), "r", inline_limit=limit)
    assert quick.pack_result(result) == plain.pack(result.to_dict())


@given(
    st.integers(min_value=1_700_000_000 * 10**9, max_value=2_000_000_000 * 10**9)
    | st.sampled_from([1767225600 * 10**9, 1767225601_999_999_999, 1767225602_000_000_000])
)
def test_stamp_writes_the_time_as_iso_time_does(ns: int) -> None:
    # the second as ``iso_time`` writes it, then the milliseconds cut (not rounded)
    second = ns // 10**9
    expected = iso_time(datetime.fromtimestamp(second, UTC))[:-4]
    expected += f"{ns // 10**6 % 1000:03d}Z"
    real = time.time_ns
    emitter = Emitter(MemoryRunLog(), "r")
    try:
        time.time_ns = lambda: ns - 1500 * 10**6  # the emitter reads ``time.time_ns()``
        emitter.stamp()  # an earlier second first: the one after is written anew
        time.time_ns = lambda: ns
        assert emitter.stamp() == expected
        assert emitter.stamp() == expected  # the same second again, from what it kept
    finally:
        time.time_ns = real


def test_tool_call_and_tool_result_of_equal_their_dataclass_constructors() -> None:
    async def progress(p: float, t: float | None, m: str | None) -> None:
        return None

    made = tool_call("s", "t", {"x": 1}, "r/s1", "s1", 2, 0.5, progress, {"k": "v"})
    plain = ToolCall("s", "t", {"x": 1}, "r/s1", "s1", 2, 0.5, progress, {"k": "v"})
    assert made == plain
    assert (made.on_progress, made.meta) == (progress, {"k": "v"})
    assert replace(made, attempt=3).attempt == 3
    assert ToolResult.of({"a": 1}, "t", True, False) == ToolResult({"a": 1}, "t", True, False)


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_millis_is_the_duration_in_milliseconds_to_the_microsecond(seconds: float) -> None:
    assert abs(_millis(seconds) - seconds * 1000) <= 0.0005 + 1e-9 * seconds * 1000
    assert _millis(seconds) == round(_millis(seconds), 3)


def test_whether_arguments_hold_a_reference_is_worked_out_once_per_arguments_object() -> None:
    shared: dict[str, JSONValue] = {"x": 7}
    known: dict[int, tuple[JSONValue, bool]] = {}
    assert _is_static(shared, known)
    assert _is_static(shared, known)  # the second step sharing it: from ``known``
    assert list(known) == [id(shared)]
    assert not _is_static({"name": "${x}"}, known)
    assert not _is_static({"a": ["b", {"c": "${run.id}"}]}, known)
    assert _is_static({"a": ["$", "{x}"]}, known)
