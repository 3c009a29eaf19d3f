"""The engine traces a run when tracing is on: a run span, a span per step, DAG links."""

from __future__ import annotations

from pathlib import Path

import _engine_helpers as eh
import anyio
import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from plansmith.engine import Engine
from plansmith.errors import ApprovalRequiredError
from plansmith.execution import TraceSetup, tracing_from_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def in_memory_tracing() -> tuple[TraceSetup, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TraceSetup(provider, ("memory",)), exporter


def test_engine_without_otel_variables_does_not_trace(tmp_path: Path) -> None:
    assert tracing_from_env({}) is None
    engine = Engine(tmp_path / "home", tracing=None)
    engine.close()


async def test_traced_run_exports_one_span_per_step_under_the_run_span(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    tracing, exporter = in_memory_tracing()
    engine = Engine(tmp_path / "home", tracing=tracing)
    with anyio.fail_after(60):
        outcome = await engine.run(inputs, approve=True)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1
    run_span = roots[0]
    steps = [s for s in spans if s.parent is not None]
    assert len(steps) == 4  # 2 documents x (summarise, index)
    assert {s.parent.span_id for s in steps if s.parent} == {run_span.context.span_id}
    assert {s.context.trace_id for s in spans} == {run_span.context.trace_id}
    linked = [s for s in steps if s.links]
    assert linked, "an index step follows its summarise step: a DAG link"


async def test_resumed_run_is_traced_from_where_it_stopped(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    tracing, exporter = in_memory_tracing()
    engine = Engine(tmp_path / "home", tracing=tracing)
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError):
            await engine.run(inputs, run_id="r-trace")
        assert exporter.get_finished_spans() == ()
        outcome = await engine.resume("r-trace", approve=True)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    steps = [s for s in exporter.get_finished_spans() if s.parent is not None]
    assert len(steps) == 2
