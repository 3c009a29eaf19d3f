"""The issue's question, end to end on real corpus servers: python3-doc pages and a NOTES
folder of two planted notes that disagree on a release date and a worker count.

"Compare asyncio and threading for I/O-bound concurrency in Python, and when was
Frobnicator 4.2 released?" must be decomposed into its two parts, search NOTES for
Frobnicator, flag both conflicts (each naming both notes and their lines), follow each
conflict up with a search for a third source, and cite the Python docs. Bad input is
refused with a typed error before any run is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _research_helpers as rh
import anyio
import pytest

from plansmith.domains.research.desk import ResearchService, SourceQuota
from plansmith.engine import Engine
from plansmith.errors import InputError, ProblemError

QUESTION = (
    "Compare asyncio and threading for I/O-bound concurrency in Python, "
    "and when was Frobnicator 4.2 released?"
)
PAGES = (
    "library/asyncio.html",
    "library/asyncio-dev.html",
    "library/asyncio-task.html",
    "library/threading.html",
    "library/concurrent.futures.html",
    "library/math.html",
    "whatsnew/3.11.html",
)
NOTES = {
    "frobnicator-a.md": "Frobnicator 4.2 was released on 2023-03-14 and supports 64 workers.\n",
    "frobnicator-b.md": "Frobnicator 4.2 was released on 2024-09-30 and supports 128 workers.\n",
}


async def _fetched(service: ResearchService, cited: dict[str, Any]) -> bool:
    """The cited passage, fetched back from its source, holds the quote at those lines."""
    text, location = "", {}
    offset: Any = 0
    while offset is not None:
        args = {"id": cited["passage"], "offset": offset}
        key = f"check/{cited['passage']}/{offset}"
        page = await service._call_source(cited["source"], "fetch", args, key)
        data: Any = page.structured
        text += data["text"]
        offset, location = data["next_offset"], data["location"]
    return (
        " ".join(cited["quote"].split()) in " ".join(text.split())
        and location["path"] == cited["path"]
        and location["line_start"] <= cited["first"] <= cited["last"] <= location["line_end"]
    )


async def _scenario(tmp: Path) -> dict[str, Any]:
    notes = tmp / "NOTES"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    docs = rh.python_docs_subset(tmp / "python-docs", PAGES)
    engine = Engine(tmp / "home")
    service = ResearchService(
        engine, {"python-docs": docs, "NOTES": notes}, excludes=rh.EXCLUDES, quota=SourceQuota(3)
    )
    out: dict[str, Any] = {}
    async with service:
        for bad in ("", "  ", "x" * 10241):
            with pytest.raises(ProblemError) as info:
                service.start_research(bad, owner="local")
            assert info.value.hint
        out["runs_after_bad_input"] = sorted((tmp / "home" / "runs").glob("*"))
        handle = service.start_research(QUESTION, owner="local")
        out["handle"] = handle
        out["status"] = await service.wait(handle.run_id, owner="local")
        report = service.get_research_report(handle.run_id, owner="local")
        out["report"] = report
        cited = rh.citations(report.markdown)
        out["cited"] = cited
        out["fetched"] = [await _fetched(service, c) for c in cited]
    engine.close()
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("compound")
    result: dict[str, Any] = anyio.run(_scenario, tmp)
    return result


def test_bad_questions_make_no_run(record: dict[str, Any]) -> None:
    assert record["runs_after_bad_input"] == []


def test_the_plan_asks_each_part_on_its_own(record: dict[str, Any]) -> None:
    handle = record["handle"]
    assert handle.kind == "compound"
    assert handle.subquestions == (
        "sq1 (part 1): How does asyncio fare on I/O-bound concurrency in Python?",
        "sq2 (part 1): How does threading fare on I/O-bound concurrency in Python?",
        "sq3 (part 2): When was Frobnicator 4.2 released?",
    )


def test_notes_are_searched_for_frobnicator_and_found(record: dict[str, Any]) -> None:
    assert record["status"].state == "succeeded"
    calls = record["report"].trace["calls"]
    on_notes = [c for c in calls if c["source"] == "NOTES" and "Frobnicator" in c["query"]]
    assert on_notes
    assert on_notes[0]["ok"]
    assert on_notes[0]["hits"] == 2


def test_both_conflicts_are_flagged_naming_both_notes_with_their_lines(
    record: dict[str, Any],
) -> None:
    trace = record["report"].trace
    disputed = {(g["entity"], g["attribute"]): g for g in trace["conflicts"]}
    for attribute, values in (
        ("released", {"2023-03-14", "2024-09-30"}),
        ("count:workers", {"64 workers", "128 workers"}),
    ):
        group = disputed["frobnicator 4.2", attribute]
        assert group["label"] == "disputed"
        assert set(group["values"]) == values
        detail = group["conflicts"][0]["detail"]
        assert "NOTES [notes] (frobnicator-a.md:1-1)" in detail
        assert "NOTES [notes] (frobnicator-b.md:1-1)" in detail
    markdown = record["report"].markdown
    section = markdown.split("## Disputed claims")[1].split("\n## ")[0]
    assert "### frobnicator 4.2: released" in section
    assert "### frobnicator 4.2: count:workers" in section
    assert "NOTES says 64 workers [notes]" in section


def test_each_conflict_is_followed_up_and_the_report_says_what_was_found(
    record: dict[str, Any],
) -> None:
    trace = record["report"].trace
    followed = {(f["entity"], f["attribute"]) for f in trace["followups"]}
    assert followed == {("frobnicator 4.2", "released"), ("frobnicator 4.2", "count:workers")}
    for f in trace["followups"]:
        assert set(f["sources"]) == {"python-docs", "NOTES"}
        assert "found no other passage" in f["outcome"]  # no third source holds it
    searches = [c for c in trace["calls"] if c["subquestion"].startswith("fu")]
    assert {c["source"] for c in searches} == {"python-docs", "NOTES"}
    assert record["status"].searches <= trace["problem"]["budget"]["max_searches"]
    assert "## Follow-up searches" in record["report"].markdown


def test_the_report_cites_the_python_docs_and_every_citation_holds(
    record: dict[str, Any],
) -> None:
    cited = record["cited"]
    assert any(c["source"] == "python-docs" for c in cited)
    assert all(record["fetched"]), [
        c["line"] for c, ok in zip(cited, record["fetched"], strict=False) if not ok
    ]
    findings = record["report"].markdown.split("## Findings")[1].split("## Evidence chain")[0]
    part1, part2 = findings.split("### Part 2")
    assert "(python-docs: library/" in part1
    assert "Frobnicator" not in part1
    assert "asyncio" not in part2
    assert "threading" not in part2


def test_a_missing_or_unreadable_source_is_refused_before_a_run(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    (tmp_path / "empty").mkdir()
    try:
        for folder in (tmp_path / "gone", tmp_path / "empty"):
            with pytest.raises(InputError) as info:
                ResearchService(engine, {"x": folder})
            assert info.value.hint
    finally:
        engine.close()
    assert not (tmp_path / "home" / "runs").exists() or not any(
        (tmp_path / "home" / "runs").iterdir()
    )
