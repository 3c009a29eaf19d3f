"""The report writer and the trace: citations, disputed claims, coverage, JSON."""

from __future__ import annotations

import json
import re

from plansmith.domains.research import (
    Budget,
    CallRecord,
    ResearchTrace,
    SubquestionRecord,
    Usage,
    research_problem,
    write_report,
)
from plansmith.domains.research.verify import Evidence

CITED = re.compile(r"^\s*- .*?\u201c(?P<quote>.*)\u201d \((?P<cite>[^()]*)\)$")


def _trace(limited: bool = False) -> ResearchTrace:
    problem = research_problem(
        "What is tomllib?", ["docs", "notes"], Budget(max_subtasks=4, max_searches=8)
    )
    docs = "tomllib — Parse TOML files\nNew in version 3.11.\nThis module parses TOML files."
    notes = "The `tomllib` module was added in Python 3.10.\nIt reads TOML, it does not write it."
    spans = ((0, 169, 169), (27, 170, 170), (47, 172, 172))
    evidence = (
        Evidence("docs", "library/tomllib.html", "pa", docs, 169, 192, "module-tomllib",
                 "2026-10-07", "tomllib", "tomllib", "sq1", spans),
        Evidence("notes", "stdlib.md", "pb", notes, 20, 23, "tomllib", "2024-05-01",
                 "notes", "tomllib", "sq4", ((0, 20, 20), (47, 23, 23))),
        Evidence("docs", "library/tomllib.html", "pc", "Parsing a TOML file: use tomllib.load().",
                 224, 226, "examples", "2026-10-07", "tomllib", "Examples", "sq2"),
    )  # fmt: skip
    subs = tuple(
        SubquestionRecord(s.id, s.text, s.facet, s.query, "answered") for s in problem.subquestions
    )
    calls = (
        CallRecord("sq1", "docs", "search", "tomllib", hits=2),
        CallRecord("sq1", "notes", "search", "tomllib", ok=False, error="timeout"),
    )
    usage = Usage(4, 8, 2.5, limited, ("max_searches reached",) if limited else ())
    return ResearchTrace("r-1", problem, subs, calls, evidence, usage)


def test_every_quoted_line_cites_source_path_lines_and_passage_and_quotes_exactly() -> None:
    trace = _trace()
    report = write_report(trace)
    texts = {(e.source, e.path, e.passage): e for e in trace.evidence}
    quoted = [m for m in map(CITED.match, report.markdown.splitlines()) if m]
    assert len(quoted) >= 5
    assert "\u201c" not in "".join(
        line for line in report.markdown.splitlines() if not CITED.match(line)
    )
    for m in quoted:
        source, rest = m["cite"].split(": ", 1)
        where, passage = rest.split(", ")
        path, lines = where.rsplit(":", 1)
        first, last = map(int, lines.split("-"))
        e = texts[(source, path, passage)]
        assert m["quote"] in " ".join(e.text.split())
        assert e.line_start <= first <= last <= e.line_end
    assert {c.quote for c in report.citations} >= {"New in version 3.11."}


def test_sections_are_in_order_and_disputed_claims_have_their_own() -> None:
    report = write_report(_trace())
    assert report.sections == (
        "Background",
        "Findings",
        "Evidence chain",
        "Disputed claims",
        "Conclusions and recommendations",
        "Coverage and budget",
    )
    disputed = report.markdown.split("## Disputed claims")[1].split("## Conclusions")[0]
    assert "### tomllib: added_in" in disputed
    assert (
        "docs says 3.11: \u201cNew in version 3.11.\u201d (docs: library/tomllib.html:170-170, pa)"
        in disputed
    )
    assert "notes says 3.10:" in disputed
    conclusions = report.markdown.split("## Conclusions and recommendations")[1]
    assert "1 claims are disputed" in conclusions
    elsewhere = report.markdown.replace(disputed, "")
    assert "New in version 3.11." not in elsewhere  # no other section quotes a disputed claim
    assert "added in Python 3.10" not in elsewhere


def test_coverage_limited_is_said_when_the_budget_cut_the_run() -> None:
    full, cut = write_report(_trace()), write_report(_trace(limited=True))
    assert "overage limited" not in full.markdown
    assert not full.coverage_limited
    assert cut.coverage_limited
    assert "**Coverage limited**: max_searches reached" in cut.markdown
    assert "- Coverage limited: max_searches reached." in cut.markdown
    assert "- Budget used: 4 of 4 subtasks, 8 of 8 searches, 2.5 of 300 seconds." in cut.markdown
    assert "- search on notes: failed: timeout." in cut.markdown


def test_the_trace_round_trips_through_json_with_its_conflicts() -> None:
    trace = _trace(limited=True)
    data = json.loads(json.dumps(trace.to_json()))
    assert data["format"] == "plansmith.research-trace"
    assert [c["label"] for c in data["conflicts"]] == ["disputed"]
    assert data["conflicts"][0]["claims"][0]["lines"] == [170, 170]
    again = ResearchTrace.from_json(data)
    assert again.to_json() == trace.to_json()
    assert write_report(again).markdown == write_report(trace).markdown
