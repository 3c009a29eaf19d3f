"""Sources' limits over time: a rate quota per server and a circuit breaker per server.

The rate is checked on a real ``plansmith-corpus`` server from its own call log (the
times it started each call); the limiter and the breaker on their own with a fake clock
(``FakeClock``: ``sleep`` moves it on at once), and the breaker in a desk whose fake
source fails, then recovers.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.research import PLANTED_DIR, Budget
from plansmith.domains.research.desk import (
    CircuitBreaker,
    QueryCache,
    QuotaConfigError,
    RateQuota,
    ResearchDesk,
    ResearchRequest,
    ResearchService,
    SourceQuota,
    guards_for,
    parse_rate,
    prepare_research,
)
from plansmith.engine import Engine
from plansmith.errors import InputError, ToolCallError
from plansmith.execution import MemoryRunLog, ToolResult
from plansmith.servers import ServerPool, parse_servers

SOURCES = ("docs", "notes")
QUESTION = "How do I use tomllib?"


class FakeClock:
    """The limits' clock: stands still until slept on; ``sleep`` moves it on at once."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)
        await anyio.lowlevel.checkpoint()


class FakeFlakySource:
    """Every source's server: while ``down`` names it, its calls fail (a lost
    transport); otherwise search gives two passage ids and fetch the passage."""

    def __init__(self) -> None:
        self.down: set[str] = set()
        self.calls: list[tuple[str, str]] = []

    async def __call__(
        self, server: str, tool: str, arguments: dict[str, Any], key: str
    ) -> ToolResult:
        self.calls.append((server, tool))
        await anyio.lowlevel.checkpoint()
        if server in self.down:
            raise ToolCallError("transport_lost", f"{server} is down")
        if tool == "search":
            hits: Any = [{"id": f"p{server}{n}"} for n in range(2)]
            return ToolResult(structured={"hits": hits})
        page: Any = {
            "id": arguments["id"],
            "source": server,
            "text": f"The tomllib module parses TOML files ({arguments['id']}).",
            "offset": 0,
            "spans": [[0, 1, 1]],
            "date": "2023-01-01",
            "title": "tomllib",
            "location": {"path": "t.md", "line_start": 1, "line_end": 1, "section": "t"},
        }
        return ToolResult(structured=page)


def _desk(tmp: Path, source: FakeFlakySource, quota: SourceQuota, clock: FakeClock) -> ResearchDesk:
    engine = Engine(tmp, log=MemoryRunLog())
    quotas = dict.fromkeys(SOURCES, quota)
    request = ResearchRequest(QUESTION, SOURCES, Budget(), depth=2)
    return prepare_research(
        engine,
        "r-limits",
        request,
        source,
        cache=QueryCache(),
        quota=quotas,
        guards=guards_for(quotas, clock),
    )


# -- the rate quota ---------------------------------------------------------------------


def test_a_rate_quota_lets_no_more_calls_start_in_a_window_than_it_allows() -> None:
    clock = FakeClock()
    rate = RateQuota(5, 1.0, clock)
    started: list[float] = []
    waits: list[float] = []

    async def call(duration: float) -> None:
        waits.append(await rate.acquire())
        started.append(clock.now())
        await clock.sleep(duration)
        rate.release()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(17):
                tg.start_soon(call, 0.01 * (n % 3))

    anyio.run(main)
    assert len(started) == 17
    assert all(b - a >= 1.0 for a, b in zip(started, started[5:], strict=False)), started
    assert sum(1 for w in waits if w > 0) >= 12  # the first five go at once


def test_a_call_waiting_for_the_rate_is_cut_at_the_runs_deadline(tmp_path: Path) -> None:
    """One call per hour: the first search's fetch waits, and the deadline cuts it."""
    source = FakeFlakySource()
    quota = SourceQuota(max_rate=1, rate_window=3600.0)
    engine = Engine(tmp_path, log=MemoryRunLog())
    request = ResearchRequest(QUESTION, ("docs",), Budget(max_seconds=0.3), depth=1)
    desk = prepare_research(
        engine, "r-deadline", request, source, cache=QueryCache(), quota={"docs": quota}
    )

    async def main() -> dict[str, Any]:
        with anyio.fail_after(30):
            return await desk.search("sq1", "src_docs", "r-deadline/s1")

    answer = anyio.run(main)
    assert source.calls == [("docs", "search")]  # the fetch never reached the source
    assert answer["status"] == "skipped"
    assert "waiting for the rate quota of docs (1 calls per 3600 s)" in answer["reason"]


# -- the circuit breaker ----------------------------------------------------------------


def test_a_breaker_opens_refuses_half_opens_and_closes_again() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("docs", 3, 10.0, clock)
    assert not breaker.failed()
    assert not breaker.failed()
    assert breaker.refusal() is None
    assert breaker.failed()  # the third in a row
    assert breaker.state == "open"
    assert breaker.refusal() == "breaker of docs open (3 failures in a row; cool-down 10 s)"
    clock.t = 9.9
    assert breaker.refusal() is not None
    clock.t = 10.0
    assert breaker.refusal() is None  # the trial call
    assert breaker.state == "half-open"
    assert "trial call in flight" in str(breaker.refusal())
    assert breaker.failed()  # the trial failed: open again
    assert breaker.state == "open"
    clock.t = 20.0
    assert breaker.refusal() is None
    assert breaker.succeeded()
    assert breaker.state == "closed"
    assert (breaker.openings, breaker.recoveries) == (2, 1)
    assert not breaker.succeeded()  # closed already: not a recovery


def test_a_failing_source_opens_its_breaker_and_recovers_after_the_cool_down(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    source = FakeFlakySource()
    quota = SourceQuota(breaker_failures=2, breaker_cooldown=30.0)
    desk = _desk(tmp_path, source, quota, clock)
    source.down.add("docs")

    async def main() -> list[dict[str, Any]]:
        out = []
        for n, sq in enumerate(("sq1", "sq2", "sq3"), 1):  # two failures, then refused
            out.append(await desk.search(sq, "src_docs", f"r-limits/d{n}"))
        out.append(await desk.search("sq1", "src_notes", "r-limits/n1"))  # its own breaker
        source.down.clear()  # the server is back, the breaker still open
        out.append(await desk.search("sq4", "src_docs", "r-limits/d4"))
        clock.t += 30.0  # the cool-down: the next search is the trial call
        out.append(await desk.search("sq3", "src_docs", "r-limits/d5"))
        out.append(await desk.search("sq4", "src_docs", "r-limits/d6"))
        return out

    answers = anyio.run(main)
    states = [a["status"] for a in answers]
    skipped, searched = "skipped", "searched"
    assert states == [skipped, skipped, skipped, searched, skipped, searched, searched]
    assert "search failed on docs" in answers[0]["reason"]
    refused = "breaker of docs open (2 failures in a row; cool-down 30 s)"
    assert answers[2]["reason"] == answers[4]["reason"] == refused
    assert desk.skipped["sq3"][0] == refused  # the subquestion's search, skipped with why
    docs_calls = [t for s, t in source.calls if s == "docs"]
    assert docs_calls == ["search", "search"] + ["search", "fetch", "fetch"] * 2
    assert desk.searches == 5  # the refused searches cost no search of the budget

    usage = desk.trace().usage
    assert (usage.breaker_openings, usage.breaker_recoveries, usage.breaker_refusals) == (1, 1, 2)
    assert usage.breaker_events[0].startswith("breaker of docs opened at ")
    assert usage.breaker_events[1].startswith("breaker of docs closed again at ")
    assert refused in usage.reasons

    written = desk.write_report(tmp_path / "out" / "report.md")
    markdown = Path(written["report"]).read_text(encoding="utf-8")
    assert (
        "- Source limits: 0 call(s) delayed by a rate quota (0.0 s waited in all); circuit "
        "breakers opened 1 time(s), recovered 1 time(s), refused 2 search(es)."
    ) in markdown
    stored = json.loads(Path(written["trace"]).read_text(encoding="utf-8"))["trace"]["usage"]
    assert (stored["breaker_openings"], stored["breaker_recoveries"]) == (1, 1)


def test_breaker_failures_zero_sets_no_breaker(tmp_path: Path) -> None:
    source = FakeFlakySource()
    desk = _desk(tmp_path, source, SourceQuota(breaker_failures=0), FakeClock())
    source.down.add("docs")

    async def main() -> None:
        for n in range(8):
            await desk.search(f"sq{n % 4 + 1}", "src_docs", f"r-limits/z{n}")

    anyio.run(main)
    assert len(source.calls) == 8  # every search was sent, none refused
    assert desk.trace().usage.breaker_openings == 0


# -- configuration ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "hint"),
    [
        ({"max_rate": -1}, '"5/s"'),
        ({"max_rate": 5, "rate_window": 0}, '"60/min"'),
        ({"max_rate": 5, "rate_window": float("inf")}, "max_rate=0 sets no rate"),
        ({"max_rate": 2.5}, "integers"),
        ({"breaker_failures": -1}, "breaker_failures=0 sets no breaker"),
        ({"breaker_cooldown": 0}, "breaker_cooldown=30"),
        ({"max_in_flight": 0}, "at least one call"),
    ],
)
def test_a_bad_quota_is_a_typed_error_with_a_hint(limits: dict[str, Any], hint: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        SourceQuota(**limits)
    assert isinstance(caught.value, InputError)  # exit code 2, a tool error with its hint
    assert hint in str(caught.value.hint)


def test_rates_are_read_from_words() -> None:
    assert parse_rate("5/s") == (5, 1.0)
    assert parse_rate("60/min") == (60, 60.0)
    assert parse_rate("100 per 10 s") == (100, 10.0)
    assert parse_rate("2 per hour") == (2, 3600.0)
    assert SourceQuota.with_rate("60/min", max_in_flight=2) == SourceQuota(
        max_in_flight=2, max_rate=60, rate_window=60.0
    )
    for bad in ("0/s", "5/parsec", "five per second", "5/0 s", ""):
        with pytest.raises(QuotaConfigError) as caught:
            parse_rate(bad)
        assert "60/min" in str(caught.value.hint)


# -- a real corpus server under a rate quota --------------------------------------------


def test_a_server_with_a_rate_of_five_per_second_never_starts_calls_faster(
    tmp_path: Path,
) -> None:
    """Two runs at once on one server: from the server's own call log, any six calls
    in a row span at least a second."""
    notes = tmp_path / "notes"
    shutil.copytree(PLANTED_DIR / "notes", notes)
    quota = SourceQuota(max_in_flight=4, max_calls=200, max_rate=5, rate_window=1.0)
    questions = (QUESTION, "When was frobnicate released and what changed in it?")

    async def main() -> list[tuple[Any, Any]]:
        engine = Engine(tmp_path / "home")
        service = ResearchService(engine, {"notes": notes}, quota=quota, share_runs=True)
        try:
            async with service:
                handles = [service.start_research(q, max_depth=2) for q in questions]
                out = []
                with anyio.fail_after(240):
                    for handle in handles:
                        status = await service.wait(handle.run_id)
                        out.append((status, service.get_research_report(handle.run_id)))
                return out
        finally:
            engine.close()

    runs = anyio.run(main)
    assert [status.state for status, _ in runs] == ["succeeded"] * 2, runs
    log = tmp_path / "home" / "research" / "notes.calls.jsonl"
    started = sorted(json.loads(line)["started"] for line in log.read_text().splitlines())
    assert len(started) >= 12, started
    gaps = [b - a for a, b in zip(started, started[5:], strict=False)]
    assert min(gaps) >= 1.0, gaps
    usage = [report.trace["usage"] for _, report in runs]
    assert sum(u["delayed"] for u in usage) >= 1
    assert sum(u["waited"] for u in usage) > 0
    delayed = next(r for u, (_, r) in zip(usage, runs, strict=True) if u["delayed"])
    assert "- Source limits: " in delayed.markdown


# -- a real server that fails, then recovers --------------------------------------------

FLAKY_SERVER = Path(__file__).with_name("flaky_source_server.py")


def test_a_real_server_that_fails_opens_the_breaker_which_recovers_after_the_cool_down(
    tmp_path: Path,
) -> None:
    """Through the engine's server pool: two failed searches open the breaker (the
    third is refused and never reaches the server, by its own log); once the server is
    back and the cool-down over, the trial search closes it."""
    down, log = tmp_path / "down", tmp_path / "docs.calls.jsonl"
    entry = {
        "command": sys.executable,
        "args": [str(FLAKY_SERVER), "--name", "docs", "--down", str(down), "--log", str(log)],
    }
    config = parse_servers(json.dumps({"mcpServers": {"docs": entry}}), source="test")
    clock = FakeClock()
    quota = SourceQuota(breaker_failures=2, breaker_cooldown=60.0)
    engine = Engine(tmp_path / "home", log=MemoryRunLog())
    request = ResearchRequest(QUESTION, ("docs",), Budget(), depth=2)
    down.touch()

    async def main() -> list[dict[str, Any]]:
        async with ServerPool(config) as pool:
            await pool.start()

            async def call(server: str, tool: str, args: dict[str, Any], key: str) -> ToolResult:
                return await pool.call(server, tool, args, key=key)

            desk = prepare_research(
                engine,
                "r-flaky",
                request,
                call,
                cache=QueryCache(),
                quota={"docs": quota},
                guards=guards_for({"docs": quota}, clock),
            )
            out = []
            with anyio.fail_after(60):
                for n, sq in enumerate(("sq1", "sq2", "sq3"), 1):
                    out.append(await desk.search(sq, "src_docs", f"r-flaky/{n}"))
                down.unlink()  # the server is back; the breaker is still open
                out.append(await desk.search("sq3", "src_docs", "r-flaky/4"))
                clock.t += 60.0
                out.append(await desk.search("sq3", "src_docs", "r-flaky/5"))
            out.append({"usage": desk.trace().usage})
            return out

    *answers, end = anyio.run(main)
    engine.close()
    assert [a["status"] for a in answers] == ["skipped"] * 4 + ["searched"]
    assert "search failed on docs" in answers[0]["reason"]
    assert answers[2]["reason"] == "breaker of docs open (2 failures in a row; cool-down 60 s)"
    assert answers[3]["reason"] == answers[2]["reason"]
    served = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["tool"], c["outcome"]) for c in served] == [
        ("search", "error"),
        ("search", "error"),
        ("search", "ok"),
        ("fetch", "ok"),
        ("fetch", "ok"),
    ]
    usage = end["usage"]
    assert (usage.breaker_openings, usage.breaker_recoveries, usage.breaker_refusals) == (1, 1, 2)
