"""A bio_opentrons run goes through ``Engine.run_plan``: it holds the run's lease while it
runs on the simulator and is traced when tracing is on (scenario_1, 56 steps)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from _labclient import SKIP_REASON

from plansmith.engine import Engine
from plansmith.execution import Event, Lease

pytest.importorskip("gtpyhop")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from plansmith.execution import TraceSetup

pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=str(SKIP_REASON))


def test_a_bio_run_holds_its_lease_while_it_runs_and_is_traced(tmp_path: Path) -> None:
    from plansmith.domains.lab.sim import run_bio

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    other = Engine(tmp_path)  # a second engine on the same run log
    assert other.leases is not None
    leases = other.leases
    held: dict[str, Lease | None] = {}

    def on_event(event: Event) -> None:
        if event.type in ("RunStarted", "StepStarted") and event.type not in held:
            held[event.type] = leases.holder(event.run_id)

    tracing = TraceSetup(provider, ("memory",))  # the lab engine's tracing, given
    run = anyio.run(
        lambda: run_bio("scenario_1", home=tmp_path, subscribe=on_event, tracing=tracing)
    )
    assert run.stats.state == "succeeded", run.stats.reason
    assert run.stats.commands is not None
    assert run.stats.commands > 0
    for lease in held.values():
        assert lease is not None
        assert lease.owner != other.engine_id
    assert set(held) == {"RunStarted", "StepStarted"}
    assert leases.holder(run.run_id) is None  # released at the end
    other.close()
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["plansmith.run"]
    assert len([s for s in spans if s.parent is not None]) == run.stats.steps == 56
