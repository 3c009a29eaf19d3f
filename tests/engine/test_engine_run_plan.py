"""``Engine.run_plan``: a plan made elsewhere runs like ``Engine.run``'s (same events),
under the run's lease, traced when tracing is on, on started servers or tools at hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import _engine_helpers as eh
import anyio
import pytest

from _shared_servers import COUNTER
from plansmith.binding import load_bindings
from plansmith.engine import Engine, RunInputs, RunTools, load_problem_files, make_plan
from plansmith.errors import ApprovalRequiredError, ExecutionError, RunLeasedError
from plansmith.execution import Event, RunOutcome, ToolCall, ToolResult
from plansmith.model import Domain, Plan
from plansmith.servers import load_servers

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeBlockingInvoker:
    """Answers every call with ``done`` and ``value``; the first call waits for
    ``release`` after setting ``entered``."""

    def __init__(self, *, block: bool = True) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        if not block:
            self.release.set()
        self.calls: list[ToolCall] = []

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        self.entered.set()
        await self.release.wait()
        return ToolResult(structured={"done": f"done-{call.step}", "value": "v"})


def planned(inputs: RunInputs) -> tuple[Plan, Domain]:
    problem = load_problem_files(inputs.domain, inputs.problem)
    return make_plan(problem), problem.domain


def with_broken_server(inputs: RunInputs, tmp: Path) -> Path:
    """``inputs``' servers and one more, ``broken``, whose command does not exist."""
    servers = {
        "mcpServers": {
            "counter": {"command": sys.executable, "args": [str(COUNTER)]},
            "broken": {"command": str(tmp / "no-such-server")},
        }
    }
    path = tmp / "servers-plus.json"
    path.write_text(json.dumps(servers))
    return path


async def test_run_plan_records_the_events_of_run_and_starts_only_the_servers_used(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=2)
    plan, domain = planned(inputs)
    config = load_servers(with_broken_server(inputs, tmp_path))  # `broken` would not start
    engine = Engine(tmp_path / "home")
    by_plan: list[Event] = []
    by_files: list[Event] = []
    with anyio.fail_after(60):
        outcome = await engine.run_plan(
            plan,
            domain,
            load_bindings(inputs.bindings),
            config,
            inputs={"plan": "made elsewhere"},
            approve=True,
            max_parallel=1,
            subscribe=by_plan.append,
        )
        from_files = await engine.run(
            inputs, approve=True, max_parallel=1, subscribe=by_files.append
        )
    info = engine.log.run(outcome.run_id)
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    assert from_files.state == "succeeded", from_files.reason
    assert [e.type for e in by_plan] == [e.type for e in by_files]
    assert [e.type for e in by_plan][:4] == [
        "RunCreated",
        "PlanReady",
        "PlanApproved",
        "RunStarted",
    ]
    assert by_plan[0].inputs == {"plan": "made elsewhere"}  # type: ignore[attr-defined]
    assert info.inputs == {"plan": "made elsewhere"}
    assert by_plan[1].plan_hash == by_files[1].plan_hash == plan.hash  # type: ignore[attr-defined]


async def test_run_plan_holds_the_runs_lease_while_it_runs(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    engine, other = Engine(tmp_path / "home"), Engine(tmp_path / "home")
    assert engine.leases is not None
    assert other.leases is not None
    plan, bound, catalog = await engine.check(inputs)
    fake = FakeBlockingInvoker()
    outcomes: list[RunOutcome] = []

    async def run() -> None:
        outcomes.append(
            await engine.run_plan(
                plan,
                planned(inputs)[1],
                load_bindings(inputs.bindings),
                RunTools(catalog, fake),
                inputs={"plan": "made elsewhere"},
                run_id="r-plan",
                approve=True,
            )
        )

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await fake.entered.wait()
            lease = other.leases.holder("r-plan")
            assert lease is not None
            assert lease.owner == engine.engine_id
            with pytest.raises(RunLeasedError, match="r-plan is driven by engine"):
                await other.resume("r-plan", approve=True)
            fake.release.set()
    assert outcomes[0].state == "succeeded", outcomes[0].reason
    assert other.leases.holder("r-plan") is None  # released when the run ended
    assert len(fake.calls) == len(bound.steps)
    engine.close()
    other.close()


async def test_run_plan_is_traced_when_tracing_is_on(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )

    from plansmith.execution import TraceSetup

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inputs = eh.write_inputs(tmp_path, n=2)
    plan, domain = planned(inputs)
    engine = Engine(tmp_path / "home", tracing=TraceSetup(provider, ("memory",)))
    fake = FakeBlockingInvoker(block=False)
    _, _, catalog = await engine.check(inputs)
    with anyio.fail_after(60):
        outcome = await engine.run_plan(
            plan,
            domain,
            load_bindings(inputs.bindings),
            RunTools(catalog, fake),
            inputs={"plan": "made elsewhere"},
            approve=True,
        )
    engine.close()
    assert outcome.state == "succeeded", outcome.reason
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["plansmith.run"]
    steps = [s for s in spans if s.parent is not None]
    assert len(steps) == len(plan.steps) == 4
    metas: list[Any] = [c.meta for c in fake.calls]  # the tracing invoker wrapped the fake
    assert all(m and "traceparent" in json.dumps(m) for m in metas)


async def test_a_run_of_a_plan_made_elsewhere_cannot_be_resumed_from_files(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    plan, domain = planned(inputs)
    engine = Engine(tmp_path / "home")
    with anyio.fail_after(60):
        with pytest.raises(ApprovalRequiredError) as asked:  # summarise is tier write
            await engine.run_plan(
                plan,
                domain,
                load_bindings(inputs.bindings),
                load_servers(inputs.servers),
                inputs={"plan": "made elsewhere"},
                run_id="r-await",
            )
        types = [e.type for e in engine.log.events("r-await")]
        with pytest.raises(ExecutionError, match="cannot be resumed") as resumed:
            await engine.resume("r-await", approve=True)
    engine.close()
    assert types == ["RunCreated", "PlanReady", "AwaitingApproval"]
    # what it says to do can be done: not `plansmith resume`, which cannot resume it
    assert asked.value.hint is not None
    assert "plansmith resume" not in asked.value.hint
    assert "run the plan again with approve=True" in asked.value.hint
    assert resumed.value.location is None  # a run id is no step
    code, out, _ = eh.invoke("show", "r-await", "--home", str(tmp_path / "home"))
    assert code == 0
    assert "cannot be resumed: run the plan again with approve=True" in out
