"""Twenty research runs at once through plansmith's MCP server (in memory), on a subset
of python3-doc and the planted notes, each source a real corpus server process.

Each source's quota is two calls at once across all runs and 60 calls per run; both
are checked from the sources' own JSONL call logs, not from plansmith's side. Each
server holds its first call until a second one comes (at most 30 s), so that the
quota is reached however the calls are scheduled. A run with a small budget is
checked from the logs too: it never searched more.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import _research_helpers as rh
import anyio
import pytest

from plansmith.domains.research.desk import ResearchService, SourceQuota, measure_calls
from plansmith.engine import Engine
from plansmith.mcp import FaceService

QUOTA = SourceQuota(max_in_flight=2, max_calls=60)
TOPICS = (
    "json",
    "pickle",
    "marshal",
    "shelve",
    "csv",
    "tomllib",
    "zoneinfo",
    "statistics",
    "functools",
    "math",
    "sqlite3",
    "asyncio",
)
QUESTIONS = (
    *(f"How do I use {t}?" for t in TOPICS),
    "Compare json and pickle on security and speed",
    "Compare csv and json on speed",
    "Compare shelve and marshal on speed",
    "Should we use tomllib or json for configuration?",
    "What is zoneinfo?",
    "What is functools.cache?",
    "How to use statistics.fmean?",
    "What is math.isqrt?",
)


# the corpus server (``python -m plansmith.domains.research.corpus_server ARGS``), whose
# first call waits, in its worker thread, until a second call has begun (or 30 s passed)
_GATED_SERVER = """\
import sys
import threading

from plansmith.domains.research import _calls
from plansmith.domains.research.corpus_server import main

second = threading.Event()
begin, run = _calls.CallLog.begin, _calls.Remembered.run


def gated_begin(self):
    started, in_flight = begin(self)
    if in_flight >= 2:
        second.set()
    return started, in_flight


def gated_run(self, tool, key, body):
    second.wait(30)
    second.set()  # only the first call waits
    return run(self, tool, key, body)


_calls.CallLog.begin = gated_begin
_calls.Remembered.run = gated_run
assert sys.argv[1:3] == ["-m", "plansmith.domains.research.corpus_server"], sys.argv
main(sys.argv[3:])
"""


def _gated_python(tmp: Path) -> str:
    """An executable that the research service runs as its ``python``: the gated server."""
    script = tmp / "gated_corpus_server"
    script.write_text(f"#!{sys.executable}\n{_GATED_SERVER}")
    script.chmod(0o755)
    return str(script)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data: dict[str, Any] = result.structured_content
    return data


async def _scenario(tmp: Path) -> dict[str, Any]:
    from mcp import Client

    from plansmith.mcp import build_face_server

    sources = rh.sources(tmp)
    del sources["planted-blog"]
    engine = Engine(tmp / "home")
    research = ResearchService(
        engine,
        sources,
        excludes=rh.EXCLUDES,
        quota=QUOTA,
        max_runs=25,
        python=_gated_python(tmp),
    )
    face = build_face_server(FaceService.on(engine, {}), env={}, research=research)
    out: dict[str, Any] = {"handles": [], "statuses": [], "reports": []}
    try:
        async with Client(face) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            out["tools"] = tools

            async def start(question: str) -> None:
                result = await client.call_tool("start_research", {"question": question})
                out["handles"].append(_data(result))

            async with anyio.create_task_group() as tg:
                for question in QUESTIONS:
                    tg.start_soon(start, question)
            for handle in out["handles"]:
                await research.wait(handle["run_id"], owner="local")
                status = await client.call_tool("get_research_status", {"run_id": handle["run_id"]})
                out["statuses"].append(_data(status))
                args = {"run_id": handle["run_id"], "include_trace": False}
                out["reports"].append(_data(await client.call_tool("get_research_report", args)))
            small = await client.call_tool(
                "start_research",
                {"question": "How do I use pathlib and glob?", "budget": {"max_searches": 3}},
            )
            out["small"] = _data(small)
            await research.wait(out["small"]["run_id"], owner="local")
            args = {"run_id": out["small"]["run_id"]}
            out["small_report"] = _data(await client.call_tool("get_research_report", args))
            out["bad_budget"] = await client.call_tool(
                "start_research", {"question": "What is json?", "budget": {"searches": 3}}
            )
            out["unknown"] = await client.call_tool("get_research_status", {"run_id": "r-nope"})
    finally:  # the face's lifespan cancelled the runs and stopped the research servers
        engine.close()
    out["logs"] = {name: measure_calls(research.log_path(name)) for name in sources}
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result: dict[str, Any] = anyio.run(_scenario, tmp_path_factory.mktemp("concurrent"))
    return result


def test_twenty_concurrent_runs_keep_within_the_quotas_measured_from_the_logs(
    record: dict[str, Any],
) -> None:
    assert {"start_research", "get_research_status", "get_research_report"} <= record["tools"]
    assert len(record["handles"]) == 20
    assert [s["state"] for s in record["statuses"]] == ["succeeded"] * 20
    for name, measured in record["logs"].items():
        assert measured.max_in_flight <= QUOTA.max_in_flight, name
        assert measured.max_overlap <= QUOTA.max_in_flight, name
        assert measured.max_in_flight == QUOTA.max_in_flight, name  # reached (the gate)
        assert max(measured.per_run.values()) <= QUOTA.max_calls, name
    docs = record["logs"]["python-docs"]
    ran = {h["run_id"] for h in record["handles"]}
    assert len(ran & set(docs.per_run)) >= 18  # nearly every run asked the docs itself


def test_every_concurrent_run_gives_a_cited_report(record: dict[str, Any]) -> None:
    for report in record["reports"]:
        assert report["state"] == "succeeded"
        assert report["markdown"].startswith("# Research report:")
        assert report["trace"] == {}
    assert sum(r["citations"] > 0 for r in record["reports"]) >= 18


def test_a_small_budget_run_never_searches_more_than_its_budget(
    record: dict[str, Any],
) -> None:
    run_id = record["small"]["run_id"]
    searched = sum(m.per_run_tool.get(run_id, {}).get("search", 0) for m in record["logs"].values())
    assert 0 < searched <= 3
    report = record["small_report"]
    assert report["coverage_limited"] is True
    assert "Coverage limited" in report["markdown"]
    assert report["trace"]["usage"]["searches"] == searched


def test_bad_requests_are_tool_errors_with_hints(record: dict[str, Any]) -> None:
    bad = record["bad_budget"]
    assert bad.is_error
    assert "InputError" in bad.content[0].text
    assert "hint:" in bad.content[0].text
    unknown = record["unknown"]
    assert unknown.is_error
    assert "RunNotFoundError" in unknown.content[0].text
