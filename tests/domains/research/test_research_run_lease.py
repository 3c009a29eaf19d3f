"""A research run goes through ``Engine.run_plan``: it holds the run's lease while it runs
(another engine on the same home cannot resume it) and is traced when tracing is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.research.desk import (
    QueryCache,
    ResearchRequest,
    SourceQuota,
    prepare_research,
    run_research,
)
from plansmith.engine import Engine
from plansmith.errors import RunLeasedError
from plansmith.execution import RunOutcome, ToolResult

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from plansmith.execution import TraceSetup

pytestmark = pytest.mark.anyio
SOURCES = ("docs", "notes")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeSource:
    """Every source: ``search`` gives one passage id, ``fetch`` its text. The first call
    sets ``entered`` and every call waits for ``release``."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()

    async def __call__(
        self, server: str, tool: str, arguments: dict[str, Any], key: str
    ) -> ToolResult:
        self.entered.set()
        await self.release.wait()
        if tool == "search":
            return ToolResult(structured={"hits": [{"id": f"p-{server}"}]})
        page: dict[str, Any] = {
            "id": arguments["id"],
            "source": server,
            "text": "The tomllib module parses TOML files.",
            "offset": 0,
            "spans": [[0, 1, 1]],
            "date": "2023-01-01",
            "title": "tomllib",
            "location": {"path": "tomllib.md", "line_start": 1, "line_end": 1},
        }
        return ToolResult(structured=page)


async def test_a_research_run_holds_its_lease_and_is_traced(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    engine = Engine(tmp_path, tracing=TraceSetup(provider, ("memory",)))
    other = Engine(tmp_path)
    assert other.leases is not None
    fake = FakeSource()
    request = ResearchRequest("How do I use tomllib?", SOURCES)
    desk = prepare_research(
        engine,
        "r-research",
        request,
        fake,
        cache=QueryCache(),
        quota=dict.fromkeys(SOURCES, SourceQuota()),
    )
    outcomes: list[RunOutcome] = []

    async def run() -> None:
        outcomes.append(await run_research(engine, desk))

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await fake.entered.wait()  # a search step is calling its source
            lease = other.leases.holder("r-research")
            assert lease is not None
            assert lease.owner == engine.engine_id
            with pytest.raises(RunLeasedError, match="r-research is driven by engine"):
                await other.resume("r-research")
            fake.release.set()
    assert outcomes[0].state == "succeeded", outcomes[0].reason
    assert other.leases.holder("r-research") is None
    events = engine.log.events("r-research")
    engine.close()
    other.close()
    types = [e.type for e in events]
    assert types[:4] == ["RunCreated", "PlanReady", "PlanApproved", "RunStarted"]
    assert events[2].by == "policy"  # type: ignore[attr-defined]
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert [s.name for s in roots] == ["plansmith.run"]
    step_spans = [s for s in spans if s.parent is not None]
    assert len(step_spans) == types.count("StepStarted") > 0
    servers = {s.attributes.get("plansmith.step.server") for s in step_spans if s.attributes}
    assert set(SOURCES) <= servers  # search steps routed to their sources' servers


async def test_a_research_plan_with_a_write_step_is_refused_before_it_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plansmith.domains.research import DOMAIN_FILE
    from plansmith.errors import ApprovalRequiredError, RunNotFoundError

    edited = tmp_path / "domain.yaml"
    text = DOMAIN_FILE.read_text(encoding="utf-8")
    edited.write_text(text.replace("tier: read", "tier: write", 1), encoding="utf-8")
    monkeypatch.setattr("plansmith.domains.research.desk._run.DOMAIN_FILE", edited)
    engine = Engine(tmp_path / "home")
    fake = FakeSource()
    request = ResearchRequest("How do I use tomllib?", SOURCES)
    quota = dict.fromkeys(SOURCES, SourceQuota())
    desk = prepare_research(engine, "r-write", request, fake, cache=QueryCache(), quota=quota)
    with anyio.fail_after(60), pytest.raises(ApprovalRequiredError, match="write steps"):
        await run_research(engine, desk)
    with pytest.raises(RunNotFoundError):  # nothing was recorded
        engine.log.run("r-write")
    assert not fake.entered.is_set()
    engine.close()
