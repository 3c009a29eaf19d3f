"""Step spans follow the plan's DAG (links), and each MCP call carries its attempt's
trace context in ``_meta``: with real MCP servers (in memory and over stdio)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _exec_helpers as h
import anyio
import pytest
from opentelemetry.propagators.textmap import DefaultGetter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from plansmith.binding import bind
from plansmith.execution import (
    MemoryRunLog,
    PlanReady,
    RunFinished,
    Runner,
    RunOutcome,
    StepStarted,
    ToolCall,
    ToolInvoker,
    ToolResult,
    TraceView,
    TracingInvoker,
    bound_to_dict,
    fold,
)
from plansmith.execution._emit import Emitter
from plansmith.model import Plan, Step
from plansmith.servers import InProcessServer, McpInvoker, ServerPool, ServersConfig, StdioServer

META_SERVER = Path(__file__).parents[1] / "servers" / "_servers" / "meta_server.py"

BINDINGS = """\
bindings:
  work:
    server: meta
    tool: record
    arguments: {name: "${x}"}
    outputs: {meta: "$.structured.meta"}
  alt:
    server: meta
    tool: flaky
    arguments: {name: "${x}", fails: 1}
    outputs: {meta: "$.structured.meta"}
    retries: 2
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def diamond() -> Plan:
    """a → b, a → c, {b, c} → d."""
    return h.plan(
        [
            Step("a", "work", ("i0",)),
            Step("b", "work", ("i1",), after=("a",)),
            Step("c", "work", ("i2",), after=("a",)),
            Step("d", "work", ("i3",), after=("b", "c")),
        ]
    )


def in_memory() -> InProcessServer:
    sys.path.insert(0, str(META_SERVER.parent))
    import meta_server

    meta_server._failures.clear()
    return InProcessServer("meta", meta_server.server)


def stdio(log: Path) -> StdioServer:
    return StdioServer("meta", sys.executable, (str(META_SERVER),), (("META_LOG", str(log)),))


async def run_with(
    plan: Plan,
    server: InProcessServer | StdioServer,
    view: TraceView,
    wrap: Callable[[ToolInvoker], ToolInvoker] | None,
) -> tuple[RunOutcome, Seen]:
    """Run ``plan`` over the meta server with ``view`` subscribed and the invoker wrapped."""
    seen = Seen()
    async with ServerPool(ServersConfig((server,))) as pool:
        catalog = await pool.start(("meta",))
        bound = bind(plan, h.domain(), h.bindings(BINDINGS), catalog, env={})
        log = MemoryRunLog()
        log.create_run("run-1", "2026-01-01T00:00:00.000Z", {})
        emitter = Emitter(log, "run-1")
        emitter.subscribe(view)
        emitter.emit(
            PlanReady(run_id="run-1", plan_hash=bound.plan_hash, bound=bound_to_dict(bound))
        )
        seen.inner = McpInvoker(pool)
        invoker: ToolInvoker = seen if wrap is None else wrap(seen)
        runner = Runner(invoker, log, fold("run-1", log.events("run-1")), emitter=emitter)
        with anyio.fail_after(60):
            outcome = await runner.run()
    return outcome, seen


async def traced_run(
    plan: Plan, server: InProcessServer | StdioServer, *, wrap: bool = True
) -> tuple[RunOutcome, list[ReadableSpan], Seen]:
    """Run ``plan`` over the meta server with a TraceView (and TracingInvoker) on."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    view = TraceView(provider)
    outcome, seen = await run_with(
        plan, server, view, (lambda inner: TracingInvoker(inner, view)) if wrap else None
    )
    provider.shutdown()
    return outcome, list(exporter.get_finished_spans()), seen


class Seen:
    """Keeps each call as the MCP invoker gets it, and checks the span current during it."""

    inner: ToolInvoker

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self.current: list[int] = []

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        self.current.append(get_current_span().get_span_context().span_id)
        return await self.inner.invoke(call)


def step_spans(spans: Sequence[ReadableSpan]) -> dict[str, ReadableSpan]:
    return {
        str((s.attributes or {})["plansmith.step.id"]): s
        for s in spans
        if s.name != "plansmith.run"
    }


def sent_context(meta: dict[str, Any]) -> tuple[int, int]:
    """The (trace id, span id) a ``_meta`` carries, read with the W3C propagator."""
    context = TraceContextTextMapPropagator().extract(meta, getter=DefaultGetter())
    span = get_current_span(context).get_span_context()
    assert span.is_valid
    assert span.is_remote
    return span.trace_id, span.span_id


@pytest.mark.anyio
async def test_diamond_step_spans_are_children_of_the_run_linked_along_the_dag() -> None:
    outcome, spans, _ = await traced_run(diamond(), in_memory())
    assert outcome.state == "succeeded", outcome.reason
    (run,) = [s for s in spans if s.name == "plansmith.run"]
    steps = step_spans(spans)
    assert sorted(steps) == ["a", "b", "c", "d"]
    ids = {s.context.span_id: step for step, s in steps.items()}
    edges = set()
    for step, span in steps.items():
        assert span.parent is not None
        assert span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id
        for link in span.links:
            assert (link.attributes or {})["plansmith.link"] == "after"
            assert link.context.trace_id == run.context.trace_id
            before = ids[link.context.span_id]
            assert (link.attributes or {})["plansmith.step.id"] == before
            edges.add((before, step))
    assert edges == {("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")}
    for span in steps.values():
        attributes = span.attributes or {}
        assert attributes["plansmith.step.action"] == "work"
        assert attributes["plansmith.step.server"] == "meta"
        assert attributes["plansmith.step.tool"] == "record"
        assert attributes["plansmith.step.attempt"] == 1
        assert span.status.status_code is StatusCode.OK


@pytest.mark.anyio
async def test_each_call_carries_the_traceparent_of_its_step_attempt_span() -> None:
    outcome, spans, seen = await traced_run(diamond(), in_memory())
    calls = seen.calls
    assert outcome.state == "succeeded", outcome.reason
    (run,) = [s for s in spans if s.name == "plansmith.run"]
    steps = step_spans(spans)
    assert len(calls) == 4
    for call in calls:
        assert int(call.meta["traceparent"].rsplit("-", 1)[1], 16) & 1  # sampled
        assert sent_context(dict(call.meta)) == (
            run.context.trace_id,
            steps[call.step].context.span_id,
        )
    # what the server received: its tool returns the _meta of the request
    for step in "abcd":
        received = outcome.outputs[step]
        assert isinstance(received, dict)
        meta = received["meta"]
        assert isinstance(meta, dict)
        assert meta["io.plansmith/idempotency-key"] == f"run-1/{step}"
        assert sent_context(meta) == (run.context.trace_id, steps[step].context.span_id)


@pytest.mark.anyio
async def test_step_attempt_span_is_current_while_its_call_runs() -> None:
    outcome, spans, seen = await traced_run(diamond(), in_memory())
    assert outcome.state == "succeeded", outcome.reason
    steps = step_spans(spans)
    assert seen.current == [steps[c.step].context.span_id for c in seen.calls]


@pytest.mark.anyio
async def test_stdio_server_receives_the_run_trace_and_step_span_in_meta(tmp_path: Path) -> None:
    log = tmp_path / "meta.jsonl"
    outcome, spans, _ = await traced_run(diamond(), stdio(log))
    assert outcome.state == "succeeded", outcome.reason
    (run,) = [s for s in spans if s.name == "plansmith.run"]
    steps = step_spans(spans)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(line["name"] for line in lines) == ["i0", "i1", "i2", "i3"]
    by_name = {"i0": "a", "i1": "b", "i2": "c", "i3": "d"}
    for line in lines:
        step = by_name[line["name"]]
        assert sent_context(line["meta"]) == (run.context.trace_id, steps[step].context.span_id)


@pytest.mark.anyio
async def test_retried_attempt_gets_its_own_span_linked_to_the_first_and_its_own_traceparent(
    tmp_path: Path,
) -> None:
    log = tmp_path / "meta.jsonl"
    plan = h.plan([Step("a", "work", ("i0",)), Step("r", "alt", ("i1",), after=("a",))])
    outcome, spans, _ = await traced_run(plan, stdio(log))
    assert outcome.state == "succeeded", outcome.reason
    (run,) = [s for s in spans if s.name == "plansmith.run"]
    first, second = [s for s in spans if (s.attributes or {}).get("plansmith.step.id") == "r"]
    a = step_spans(spans)["a"]
    assert (first.attributes or {})["plansmith.step.attempt"] == 1
    assert (first.attributes or {})["plansmith.step.error_class"] == "tool_error"
    assert first.status.status_code is StatusCode.ERROR
    assert (second.attributes or {})["plansmith.step.attempt"] == 2
    assert second.status.status_code is StatusCode.OK
    assert second.parent is not None
    assert second.parent.span_id == run.context.span_id
    assert first.end_time is not None
    assert second.start_time is not None
    assert second.start_time >= first.end_time
    assert {
        (str((k.attributes or {})["plansmith.link"]), k.context.span_id) for k in second.links
    } == {("after", a.context.span_id), ("previous_attempt", first.context.span_id)}
    calls = [json.loads(line) for line in log.read_text().splitlines() if "flaky" in line]
    assert [sent_context(c["meta"]) for c in calls] == [
        (run.context.trace_id, first.context.span_id),
        (run.context.trace_id, second.context.span_id),
    ]


@pytest.mark.anyio
async def test_without_the_tracing_invoker_no_trace_context_is_sent() -> None:
    outcome, _, seen = await traced_run(diamond(), in_memory(), wrap=False)
    assert outcome.state == "succeeded", outcome.reason
    assert all(dict(c.meta) == {} for c in seen.calls)
    for step in "abcd":
        received = outcome.outputs[step]
        assert isinstance(received, dict)
        assert isinstance(received["meta"], dict)
        assert "traceparent" not in received["meta"]


def test_replayed_events_give_the_same_links_as_the_live_run() -> None:
    """The links come from the events alone: a recorded diamond gives them too."""
    b = h.bound(diamond())
    events: list[Any] = [
        PlanReady(run_id="r", seq=1, plan_hash=b.plan_hash, bound=bound_to_dict(b))
    ]
    for seq, step in enumerate("abcd", start=2):
        events.append(StepStarted(run_id="r", seq=seq, step=step, action="work", key=f"r/{step}"))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    view = TraceView(provider)
    for e in events:
        view(e)
    assert view.span_for("r/d", 1) is not None
    assert view.span_for("r/d", 2) is None
    assert view.span_for("unknown", 1) is None
    view(RunFinished(run_id="r", seq=9, state="failed"))
    steps = step_spans(exporter.get_finished_spans())
    ids = {s.context.span_id: k for k, s in steps.items()}
    assert {(ids[k.context.span_id], step) for step, s in steps.items() for k in s.links} == {
        ("a", "b"),
        ("a", "c"),
        ("b", "d"),
        ("c", "d"),
    }
