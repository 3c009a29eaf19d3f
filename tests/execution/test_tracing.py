"""TraceView: OpenTelemetry spans from recorded events, and from a real engine run."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from _exec_helpers import bound, plan
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from plansmith.errors import InputError
from plansmith.execution import (
    Event,
    PlanReady,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunStarted,
    StepEvent,
    StepFailed,
    StepProgress,
    StepRetrying,
    StepStarted,
    StepSucceeded,
    TraceView,
    bound_to_dict,
    fold,
)
from plansmith.model import Step

SECRET = "s3cr3t-token"
S = TypeVar("S", bound=StepEvent)


def traced(events: Sequence[Event]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    view = TraceView(provider)
    for event in events:
        view(event)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def step(cls: type[S], *, step: str, action: str, run_id: str = "r1", **kw: Any) -> S:
    """A step event of ``cls`` on the counter server's ``work`` tool."""
    return cls(run_id=run_id, step=step, action=action, server="counter", tool="work", **kw)


def recorded_run() -> list[Event]:
    a: dict[str, Any] = {"step": "s1", "action": "summarise", "args": ("d0",)}
    b: dict[str, Any] = {"step": "s2", "action": "index", "args": ("d0",)}
    return [
        RunCreated(run_id="r1", seq=1, time="2026-01-02T03:04:05.000Z", inputs={"k": SECRET}),
        PlanReady(run_id="r1", seq=2, plan_hash="sha256:abc", plan={"secret": SECRET}),
        RunStarted(run_id="r1", seq=3),
        step(StepStarted, seq=4, key="k1", **a),
        step(StepProgress, seq=5, progress=0.5, message=SECRET, **a),
        step(StepSucceeded, seq=6, duration_ms=12.5, outputs={"x": SECRET}, result=SECRET, **a),
        step(StepStarted, seq=7, **b),
        step(StepRetrying, seq=8, error_class="transport", message=SECRET, **b),
        step(StepStarted, seq=9, attempt=2, **b),
        step(StepFailed, seq=10, attempt=2, error_class="tool_error", message=SECRET, **b),
        RunFinished(
            run_id="r1",
            seq=11,
            time="2026-01-02T03:04:09.000Z",
            state="failed",
            reason=f"step(s) s2 (tool_error: {SECRET}) failed and replanning is off",
        ),
    ]


def by_name(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def test_run_span_is_the_parent_of_one_span_per_step_attempt() -> None:
    spans = traced(recorded_run())
    (run,) = by_name(spans, "plansmith.run")
    steps = [s for s in spans if s is not run]
    assert [s.name for s in steps] == [
        "plansmith.step summarise",
        "plansmith.step index",
        "plansmith.step index",
    ]
    assert run.parent is None
    for s in steps:
        assert s.parent is not None
        assert s.parent.span_id == run.context.span_id
        assert s.context.trace_id == run.context.trace_id


def test_run_span_carries_id_plan_hash_state_and_failed_steps_and_errors_on_failure() -> None:
    # a failed run's reason quotes its steps' messages (a secret, here): not an attribute
    (run,) = by_name(traced(recorded_run()), "plansmith.run")
    assert dict(run.attributes or {}) == {
        "plansmith.run.id": "r1",
        "plansmith.plan.hash": "sha256:abc",
        "plansmith.run.state": "failed",
        "plansmith.run.failed_steps": ("s2",),
    }
    assert run.status.status_code is StatusCode.ERROR
    assert run.start_time is not None
    assert run.end_time is not None
    assert run.end_time - run.start_time == 4_000_000_000  # from the events' own times


def test_step_spans_carry_call_attributes_and_error_status_on_failed_attempts() -> None:
    spans = traced(recorded_run())
    ok, retried, failed = (s for s in spans if s.name.startswith("plansmith.step"))
    assert dict(ok.attributes or {}) == {
        "plansmith.run.id": "r1",
        "plansmith.step.id": "s1",
        "plansmith.step.action": "summarise",
        "plansmith.step.args": ("d0",),
        "plansmith.step.server": "counter",
        "plansmith.step.tool": "work",
        "plansmith.step.attempt": 1,
        "plansmith.step.duration_ms": 12.5,
    }
    assert ok.status.status_code is StatusCode.OK
    assert retried.attributes is not None
    assert retried.attributes["plansmith.step.attempt"] == 1
    assert retried.attributes["plansmith.step.error_class"] == "transport"
    assert retried.attributes["plansmith.step.retrying"] is True
    assert retried.status.status_code is StatusCode.ERROR
    assert failed.attributes is not None
    assert failed.attributes["plansmith.step.attempt"] == 2
    assert failed.attributes["plansmith.step.error_class"] == "tool_error"
    assert failed.attributes["plansmith.step.retrying"] is False
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "tool_error"


def test_no_input_output_result_or_message_reaches_any_span() -> None:
    for span in traced(recorded_run()):
        values = [str(v) for v in (span.attributes or {}).values()]
        values += [str(v) for e in span.events for v in (e.attributes or {}).values()]
        assert not any(SECRET in v for v in values), span.name
        assert SECRET not in (span.status.description or "")


def test_step_in_flight_at_cancel_is_ended_with_the_run() -> None:
    events = [
        RunCreated(run_id="r1", seq=1),
        RunStarted(run_id="r1", seq=2),
        step(StepStarted, seq=3, step="s1", action="summarise"),
        RunCancelled(run_id="r1", seq=4, reason="user asked"),
    ]
    spans = traced(events)
    assert len(spans) == 2
    s1, run = spans
    assert s1.name == "plansmith.step summarise"
    assert s1.status.status_code is StatusCode.ERROR
    assert (s1.attributes or {})["plansmith.step.ended_by"] == "run cancelled"
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["plansmith.run.state"] == "cancelled"
    assert (run.attributes or {})["plansmith.run.reason"] == "user asked"


def test_resumed_run_without_run_created_still_gets_a_run_span() -> None:
    events = [
        RunStarted(run_id="r2", seq=7, resumed=True),
        step(StepStarted, run_id="r2", seq=8, step="s3", action="index"),
        step(StepSucceeded, run_id="r2", seq=9, step="s3", action="index"),
        RunFinished(run_id="r2", seq=10),
    ]
    spans = traced(events)
    s3, run = spans
    assert s3.parent is not None
    assert s3.parent.span_id == run.context.span_id
    assert (run.attributes or {})["plansmith.run.resumed"] is True
    assert (run.attributes or {})["plansmith.run.state"] == "succeeded"
    assert run.status.status_code is StatusCode.OK


def test_missing_opentelemetry_is_an_input_error_with_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(InputError) as caught:
        TraceView()
    assert caught.value.hint == "pip install plansmith[otel]"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_engine_run_over_stdio_gives_one_span_per_step_under_the_run(
    tmp_path: Path,
) -> None:
    from _shared_servers import (
        INDEX,
        INDEX_BINDING,
        SUMMARISE,
        SUMMARISE_BINDING,
        docs_domain,
        problem_text,
        servers_json,
    )
    from plansmith.engine import Engine, RunInputs

    (tmp_path / "domain.yaml").write_text(docs_domain(SUMMARISE, INDEX))
    (tmp_path / "problem.yaml").write_text(problem_text(2))
    (tmp_path / "bindings.yaml").write_text("bindings:\n" + SUMMARISE_BINDING + INDEX_BINDING)
    (tmp_path / "servers.json").write_text(servers_json())
    inputs = RunInputs(
        tmp_path / "domain.yaml",
        tmp_path / "problem.yaml",
        tmp_path / "servers.json",
        tmp_path / "bindings.yaml",
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    engine = Engine(tmp_path / "home")
    try:
        with anyio.fail_after(60):
            outcome = await engine.run(inputs, approve=True, subscribe=TraceView(provider))
        started = [e for e in engine.log.events(outcome.run_id) if isinstance(e, StepStarted)]
    finally:
        engine.close()
    assert outcome.state == "succeeded", outcome.reason
    spans = exporter.get_finished_spans()
    (run,) = by_name(list(spans), "plansmith.run")
    steps = [s for s in spans if s is not run]
    assert len(steps) == len(started) >= 2
    assert sorted(str((s.attributes or {})["plansmith.step.id"]) for s in steps) == sorted(
        e.step for e in started
    )
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in steps)
    assert all(s.status.status_code is StatusCode.OK for s in steps)
    assert {(s.attributes or {})["plansmith.step.server"] for s in steps} == {"counter"}
    assert (run.attributes or {})["plansmith.run.id"] == outcome.run_id
    assert (run.attributes or {})["plansmith.plan.hash"]


def test_runner_style_retry_without_a_second_step_started_gets_a_span_after_the_delay() -> None:
    """The runner emits no StepStarted for a retry: the next attempt's span starts at the
    retry event's time plus its backoff delay, opened by its first event."""
    b: dict[str, Any] = {"step": "s2", "action": "index", "args": ("d0",)}
    events = [
        RunStarted(run_id="r1", seq=1),
        step(StepStarted, seq=2, time="2026-01-02T03:04:05.000Z", key="r1/s2", **b),
        step(StepRetrying, seq=3, time="2026-01-02T03:04:06.000Z", delay_s=0.5, **b),
        step(StepSucceeded, seq=4, time="2026-01-02T03:04:07.000Z", attempt=2, **b),
        RunFinished(run_id="r1", seq=5),
    ]
    first, second, _run = traced(events)
    assert (first.attributes or {})["plansmith.step.attempt"] == 1
    assert (second.attributes or {})["plansmith.step.attempt"] == 2
    assert second.status.status_code is StatusCode.OK
    assert first.end_time is not None
    assert second.start_time == first.end_time + 500_000_000
    assert [(k.context.span_id, (k.attributes or {})["plansmith.link"]) for k in second.links] == [
        (first.context.span_id, "previous_attempt")
    ]


def test_cancelled_run_gives_one_run_span_even_with_run_finished_after_run_cancelled() -> None:
    events = [
        RunStarted(run_id="r1", seq=1),
        RunCancelled(run_id="r1", seq=2, reason="stop"),
        RunFinished(run_id="r1", seq=3, state="cancelled", reason="stop"),
    ]
    (run,) = traced(events)
    assert (run.attributes or {})["plansmith.run.state"] == "cancelled"


def test_primed_view_links_a_resumed_step_to_predecessors_it_saw_run() -> None:
    b = bound(plan([Step("s0", "work", ("i0",)), Step("s1", "work", ("i1",), after=("s0",))]))
    state = fold(
        "r3", [PlanReady(run_id="r3", seq=1, plan_hash=b.plan_hash, bound=bound_to_dict(b))]
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    view = TraceView(provider)
    view.prime(state)  # a resume: PlanReady was written by an earlier process
    for e in [
        RunStarted(run_id="r3", seq=2, resumed=True),
        step(StepStarted, run_id="r3", seq=3, step="s0", action="work"),
        step(StepSucceeded, run_id="r3", seq=4, step="s0", action="work"),
        step(StepStarted, run_id="r3", seq=5, step="s1", action="work"),
        step(StepSucceeded, run_id="r3", seq=6, step="s1", action="work"),
        RunFinished(run_id="r3", seq=7),
    ]:
        view(e)
    s0, s1, _run = exporter.get_finished_spans()
    assert [k.context.span_id for k in s1.links] == [s0.context.span_id]
    assert not s0.links
