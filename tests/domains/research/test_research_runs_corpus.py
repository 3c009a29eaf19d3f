"""Research runs through the engine on the real corpus (python3-doc pages) and the
planted sources: one ResearchService, its corpus servers as real processes.

One scenario runs everything and records what it saw; the tests check the record:
every citation of the compare and how-to reports is fetched back from its source
and holds the quoted words at the cited lines; every planted contradiction is
flagged disputed; identical queries hit the cache; the trace is kept by run id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _research_helpers as rh
import anyio
import pytest

from plansmith.domains.research.desk import ResearchService, SourceQuota, measure_calls
from plansmith.engine import Engine

QUESTIONS = ("Compare json and pickle on security and speed", "How do I use tomllib?")
CASES = json.loads((Path(rh.PLANTED_DIR) / "cases.json").read_text(encoding="utf-8"))["cases"]


async def _check(service: ResearchService, cited: dict[str, Any]) -> dict[str, Any]:
    """Fetch the cited passage (every page of it) and check the quote, path and lines."""
    text, location = "", {}
    offset: Any = 0
    while offset is not None:
        args = {"id": cited["passage"], "offset": offset}
        key = f"check/{cited['passage']}/{offset}"
        page = await service._call_source(cited["source"], "fetch", args, key)
        data: Any = page.structured
        assert data is not None, page.text
        text += data["text"]
        offset, location = data["next_offset"], data["location"]
    return {
        **cited,
        "found": " ".join(cited["quote"].split()) in " ".join(text.split()),
        "path_ok": location["path"] == cited["path"],
        "lines_ok": location["line_start"]
        <= cited["first"]
        <= cited["last"]
        <= location["line_end"],
    }


async def _scenario(tmp: Path) -> dict[str, Any]:
    engine = Engine(tmp / "home")
    service = ResearchService(
        engine, rh.sources(tmp), excludes=rh.EXCLUDES, quota=SourceQuota(3, 200)
    )
    out: dict[str, Any] = {"research": [], "cases": []}
    async with service:  # its runs cancelled and its servers stopped at the end
        for question in QUESTIONS:
            handle = service.start_research(question, owner="local")
            status = await service.wait(handle.run_id, owner="local")
            report = service.get_research_report(handle.run_id, owner="local")
            checks = [await _check(service, c) for c in rh.citations(report.markdown)]
            events = engine.log.events(handle.run_id)
            out["research"].append(
                {
                    "handle": handle,
                    "status": status,
                    "report": report,
                    "checks": checks,
                    "events": [e.to_dict() for e in events],
                }
            )
        again = service.start_research(QUESTIONS[1], owner="local")
        out["again"] = await service.wait(again.run_id, owner="local")
        out["again_report"] = service.get_research_report(again.run_id, owner="local")
        for case in CASES:
            handle = service.start_research(
                f"What is {case['query']}?",
                sources=list(case["values"]),
                extra=[case["query"]],  # as a model would propose: "when was it released?"
                owner="local",
            )
            await service.wait(handle.run_id, owner="local")
            trace = service.get_research_report(handle.run_id, owner="local").trace
            groups = [
                g
                for g in trace["claims"]
                if g["entity"] == case["entity"] and g["attribute"] == case["attribute"]
            ]
            out["cases"].append({"case": case, "groups": groups})
    out["logs"] = {name: measure_calls(service.log_path(name)) for name in service.sources}
    reopened = ResearchService(Engine(tmp / "home"), rh.sources(tmp / "again"))
    out["reread"] = reopened.get_research_report(out["research"][1]["handle"].run_id, owner="local")
    reopened.engine.close()
    engine.close()
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result: dict[str, Any] = anyio.run(_scenario, tmp_path_factory.mktemp("research"))
    return result


def test_both_questions_run_to_a_report_through_the_engine(record: dict[str, Any]) -> None:
    kinds = [r["handle"].kind for r in record["research"]]
    assert kinds == ["compare", "explain"]
    for r in record["research"]:
        assert r["status"].state == "succeeded", r["status"]
        assert r["status"].done == r["status"].total > 0
        assert r["report"].markdown.startswith("# Research report:")
        assert not r["report"].coverage_limited


def test_the_run_log_holds_the_plan_and_a_search_step_per_source(record: dict[str, Any]) -> None:
    for r in record["research"]:
        types = [e["type"] for e in r["events"]]
        assert types[:3] == ["RunCreated", "PlanReady", "PlanApproved"]
        assert types[-1] == "RunFinished"
        searches = [
            e for e in r["events"] if e["type"] == "StepSucceeded" and e["action"] == "search"
        ]
        n_sub = len(r["handle"].subquestions)
        assert len(searches) == n_sub * 3
        assert {e["server"] for e in searches} == {"python-docs", "planted-notes", "planted-blog"}
        assert all(
            e["server"] == e["args"][1].removeprefix("src_").replace("_", "-") for e in searches
        )


def test_every_citation_resolves_to_a_real_passage_holding_the_words(
    record: dict[str, Any],
) -> None:
    for r in record["research"]:
        checks = r["checks"]
        assert len(checks) >= 8, r["report"].markdown
        bad = [c for c in checks if not (c["found"] and c["path_ok"] and c["lines_ok"])]
        assert bad == []
        assert "python-docs" in {c["source"] for c in checks}
        assert r["report"].citations == len(checks)


def test_every_quoted_sentence_carries_a_citation(record: dict[str, Any]) -> None:
    for r in record["research"]:
        for line in r["report"].markdown.splitlines():
            assert "\u201c" not in line or rh.CITED.match(line), line


def test_planted_contradictions_are_all_flagged_disputed(record: dict[str, Any]) -> None:
    planted = [c for c in record["cases"] if c["case"]["expect"] == "disputed"]
    assert len(planted) == 10
    for c in planted:
        labels = {g["label"] for g in c["groups"]}
        assert labels == {"disputed"}, c
        values = {v: sorted(s) for g in c["groups"] for v, s in g["values"].items()}
        for source, value in c["case"]["values"].items():
            assert source in values.get(value, []), c


def test_agreeing_sources_are_not_flagged(record: dict[str, Any]) -> None:
    agreed = [c for c in record["cases"] if c["case"]["expect"] == "consistent"]
    assert len(agreed) == 2
    for c in agreed:
        assert {g["label"] for g in c["groups"]} == {"consistent"}, c


def test_the_how_to_report_puts_the_planted_tomllib_version_in_disputed_claims(
    record: dict[str, Any],
) -> None:
    markdown = record["research"][1]["report"].markdown
    section = markdown.split("## Disputed claims")[1].split("## Conclusions")[0]
    assert "planted-notes says 3.10" in section
    assert "python-docs says 3.11" in section


def test_an_identical_question_is_answered_from_the_cache(record: dict[str, Any]) -> None:
    again = record["again"]
    assert again.state == "succeeded"
    assert again.searches == 0
    calls = record["again_report"].trace["calls"]
    assert calls
    assert all(c["cached"] for c in calls)
    for measured in record["logs"].values():
        assert again.run_id not in measured.per_run


def test_the_whole_trace_is_kept_and_fetched_by_run_id(record: dict[str, Any]) -> None:
    first = record["research"][1]["report"]
    trace = record["reread"].trace
    assert record["reread"].markdown == first.markdown
    assert trace["run_id"] == record["research"][1]["handle"].run_id
    for key in ("subquestions", "calls", "evidence", "claims", "conflicts", "decisions"):
        assert key in trace
    assert trace["evidence"]
    assert trace["calls"]
    assert trace["conflicts"]
    assert trace["usage"]["searches"] == record["research"][1]["status"].searches


def test_background_and_findings_state_facts_only_in_cited_quotes(
    record: dict[str, Any],
) -> None:
    uncited_allowed = ("No passage for the background", "no evidence found", "not answered")
    for r in record["research"]:
        body = r["report"].markdown.split("## Background")[1].split("## Evidence chain")[0]
        bullets = [line for line in body.splitlines() if line.startswith("- ")]
        assert bullets
        for line in bullets:
            assert rh.CITED.match(line) or any(a in line for a in uncited_allowed), line
