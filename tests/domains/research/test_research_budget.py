"""Budgets, quotas and the cache of research runs, with a fake source (no processes).

The fake answers ``search`` with three passages and ``fetch`` with a passage text
about the subquestion's query; it records every call it gets, so each test counts
what reached the source.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.research import Budget
from plansmith.domains.research.desk import (
    QueryCache,
    ResearchDesk,
    ResearchRequest,
    SourceQuota,
    budget_from,
    measure_calls,
    prepare_research,
    run_research,
)
from plansmith.engine import Engine
from plansmith.errors import InputError
from plansmith.execution import MemoryRunLog, ToolResult

SOURCES = ("docs", "notes", "blog")
DEFAULT_BUDGET = Budget()
DEFAULT_QUOTA = SourceQuota()
QUESTION = "How do I use tomllib?"


class FakeSource:
    """Every source: search gives three passage ids; fetch gives the passage's text."""

    def __init__(
        self, *, block: anyio.Event | None = None, on_call: Callable[[], None] | None = None
    ) -> None:
        self.calls: list[tuple[str, str, dict[str, Any], str]] = []
        self.block = block
        self.on_call = on_call

    async def __call__(
        self, server: str, tool: str, arguments: dict[str, Any], key: str
    ) -> ToolResult:
        self.calls.append((server, tool, arguments, key))
        if self.on_call is not None:
            self.on_call()
        if self.block is not None:
            await self.block.wait()
        if tool == "search":
            hits: Any = [{"id": f"p{server}{n}"} for n in range(3)]
            return ToolResult(structured={"hits": hits})
        text = f"The tomllib module parses TOML files; see passage {arguments['id']}."
        page: Any = {
            "id": arguments["id"],
            "source": server,
            "text": text,
            "offset": 0,
            "spans": [[0, 1, 1]],
            "date": "2023-01-01",
            "title": "tomllib",
            "location": {
                "path": "tomllib.md",
                "line_start": 1,
                "line_end": 1,
                "section": "tomllib",
            },
        }
        return ToolResult(structured=page)

    def searches(self) -> list[tuple[str, str, dict[str, Any], str]]:
        return [c for c in self.calls if c[1] == "search"]


class StillUntilCalled:
    """A desk clock that stands at 0 until ``start`` (the source's first call), then runs:
    however slow the set-up, it spends none of a small time budget."""

    def __init__(self) -> None:
        self.origin: float | None = None

    def __call__(self) -> float:
        return 0.0 if self.origin is None else time.monotonic() - self.origin

    def start(self) -> None:
        if self.origin is None:
            self.origin = time.monotonic()


def _engine(tmp: Path) -> Engine:
    return Engine(tmp, log=MemoryRunLog())


def _desk(
    tmp: Path,
    fake: FakeSource,
    *,
    plan_budget: Budget = DEFAULT_BUDGET,
    run_budget: Budget | None = None,
    quota: SourceQuota = DEFAULT_QUOTA,
    cache: QueryCache | None = None,
    run_id: str = "r-test",
) -> tuple[Engine, ResearchDesk]:
    engine = _engine(tmp)
    request = ResearchRequest(QUESTION, SOURCES, plan_budget)
    quotas = dict.fromkeys(SOURCES, quota)
    desk = prepare_research(
        engine, run_id, request, fake, cache=cache or QueryCache(), quota=quotas
    )
    if run_budget is not None:  # the run's budget is smaller than the one planned with
        desk.problem = dataclasses.replace(desk.problem, budget=run_budget)
    return engine, desk


def _run(engine: Engine, desk: ResearchDesk) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        outcome = await run_research(engine, desk)
        stored = json.loads((engine.run_dir(desk.run_id) / "research.json").read_text())
        return {"state": outcome.state, **stored}

    result: dict[str, Any] = anyio.run(main)
    return result


def test_a_run_within_budget_searches_every_source_for_every_subquestion(tmp_path: Path) -> None:
    fake = FakeSource()
    engine, desk = _desk(tmp_path, fake)
    out = _run(engine, desk)
    assert out["state"] == "succeeded"
    assert len(fake.searches()) == 4 * 3
    assert out["trace"]["usage"]["limited"] is False
    assert {s["status"] for s in out["trace"]["subquestions"]} == {"answered"}
    assert "Coverage limited" not in out["report"]["markdown"]


def test_a_small_search_budget_stops_searching_and_limits_coverage(tmp_path: Path) -> None:
    fake = FakeSource()
    engine, desk = _desk(tmp_path, fake, run_budget=Budget(12, 5, 300))
    out = _run(engine, desk)
    assert out["state"] == "succeeded"
    assert len(fake.searches()) == 5  # never more than the budget, though 12 were planned
    usage = out["trace"]["usage"]
    assert usage["searches"] == 5
    assert usage["limited"] is True
    assert "search budget used up (5 searches)" in usage["reasons"]
    skipped = [c for c in out["trace"]["calls"] if not c["ok"]]
    assert len(skipped) == 12 - 5
    assert out["report"]["coverage_limited"] is True
    assert "**Coverage limited**" in out["report"]["markdown"]


def test_a_time_budget_of_zero_sends_no_search(tmp_path: Path) -> None:
    fake = FakeSource()
    engine, desk = _desk(tmp_path, fake, run_budget=Budget(12, 48, 0))
    out = _run(engine, desk)
    assert out["state"] == "succeeded"
    assert fake.calls == []
    statuses = {s["status"] for s in out["trace"]["subquestions"]}
    assert statuses == {"not searched: time budget used up (0 s)"}
    assert out["report"]["coverage_limited"] is True


def test_the_deadline_cuts_a_search_in_flight(tmp_path: Path) -> None:
    clock = StillUntilCalled()  # the 0.2 s start when the first search reaches the source
    fake = FakeSource(block=anyio.Event(), on_call=clock.start)  # the source never answers
    engine, desk = _desk(tmp_path, fake, run_budget=Budget(12, 48, 0.2))
    desk.clock, desk.started = clock, clock()
    out = _run(engine, desk)
    assert out["state"] == "succeeded"
    assert fake.searches()
    assert all(c[1] == "search" for c in fake.calls)
    assert out["trace"]["usage"]["limited"] is True
    assert any("mid-search" in r for r in out["trace"]["usage"]["reasons"])


def test_the_planned_budget_drops_subquestions_and_the_report_says_so(tmp_path: Path) -> None:
    fake = FakeSource()
    engine, desk = _desk(tmp_path, fake, plan_budget=Budget(12, 4, 300))
    assert len(desk.problem.subquestions) == 1  # 2 x 3 sources would pass 4 searches
    out = _run(engine, desk)
    assert len(fake.searches()) == 3
    assert out["trace"]["usage"]["reasons"][0] == "3 subquestion(s) dropped as over budget"
    assert out["report"]["coverage_limited"] is True


def test_a_source_quota_bounds_the_calls_of_one_run(tmp_path: Path) -> None:
    fake = FakeSource()
    engine, desk = _desk(tmp_path, fake, quota=SourceQuota(max_in_flight=2, max_calls=9))
    out = _run(engine, desk)
    per_source = Counter(c[0] for c in fake.calls)
    assert per_source == {"docs": 8, "notes": 8, "blog": 8}  # 2 searches + 6 fetches each
    reasons = out["trace"]["usage"]["reasons"]
    assert "quota of docs used up (9 calls per run)" in reasons


def test_identical_queries_of_concurrent_runs_are_asked_once(tmp_path: Path) -> None:
    fake = FakeSource()
    cache = QueryCache()
    engine, first = _desk(tmp_path / "a", fake, cache=cache, run_id="r-a")
    _, second = _desk(tmp_path / "a", fake, cache=cache, run_id="r-b")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_research, engine, first)
            tg.start_soon(run_research, engine, second)

    anyio.run(main)
    asked = Counter((c[0], c[2]["query"], c[2]["also"]) for c in fake.searches())
    assert len(asked) == 12
    assert set(asked.values()) == {1}
    cached = [c for c in second.calls + first.calls if c.cached]
    assert len(cached) == 12
    assert first.searches + second.searches == 12


def test_a_failed_lookup_is_not_cached() -> None:
    cache = QueryCache()
    answers: list[dict[str, Any] | None] = [None, {"hits": 1}]

    async def compute() -> dict[str, Any] | None:
        return answers.pop(0)

    async def main() -> list[Any]:
        key = ("s", "q", "", 5, 3)
        return [await cache.get(key, compute), await cache.get(key, compute), cache.peek(key)]

    first, second, kept = anyio.run(main)
    assert first == (None, False)
    assert second == ({"hits": 1}, False)
    assert kept == {"hits": 1}


def test_budget_objects_are_checked() -> None:
    assert budget_from({"max_searches": 3}, Budget()) == Budget(12, 3, 300.0)
    with pytest.raises(InputError, match="unknown budget key"):
        budget_from({"max_search": 3}, Budget())
    with pytest.raises(InputError, match="numbers >= 0"):
        budget_from({"max_seconds": -1}, Budget())
    with pytest.raises(InputError, match="max_in_flight >= 1"):
        SourceQuota(max_in_flight=0)


def test_calls_are_measured_from_a_source_log(tmp_path: Path) -> None:
    log = tmp_path / "docs.calls.jsonl"
    rows: list[dict[str, Any]] = [
        {"source": "docs", "tool": "search", "key": "r-1/s1/search", "started": 0, "finished": 2},
        {"source": "docs", "tool": "fetch", "key": "r-1/s1/fetch/0", "started": 1, "finished": 3},
        {"source": "docs", "tool": "search", "key": "r-2/s1/search", "started": 2, "finished": 4},
        {"source": "docs", "tool": "fetch", "key": None, "started": 1.5, "finished": 1.6},
    ]
    log.write_text("".join(json.dumps({**r, "in_flight": 1}) + "\n" for r in rows))
    measured = measure_calls(log)
    assert measured.max_overlap == 3  # at 1.5: the first search, the fetch, the keyless one
    assert measured.per_run == {"r-1": 2, "r-2": 1}
    assert measured.per_run_tool["r-1"] == {"search": 1, "fetch": 1}
    log.write_text("not json\n")
    with pytest.raises(InputError, match="not JSON"):
        measure_calls(log)
