"""A conflict adds a follow-up search for a third source, within the budget, and the
report says what it found (a fake source per folder; no processes).

With one passage read per search, "notes" shows 2023-03-14 and "blog" 2024-09-30: a
conflict. The follow-up asks every source again and reads the passages not read yet:
the notes' second passage states 2023-03-14 in another format. With a search budget
that the planned searches use up, the follow-up is not sent, and the report says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import Budget
from plansmith.domains.research.desk import (
    QueryCache,
    ResearchRequest,
    SourceQuota,
    prepare_research,
    run_research,
)
from plansmith.engine import Engine
from plansmith.execution import MemoryRunLog, ToolResult

QUESTION = "When was Frobnicator 4.2 released?"
PASSAGES = {
    "notes": {
        "n1": "Frobnicator 4.2 was released on 2023-03-14.",
        "n2": "Frobnicator 4.2 was released on 14 March 2023, after a long beta.",
    },
    "blog": {"b1": "Frobnicator 4.2 was released on 2024-09-30."},
}


class Folders:
    """Each source's search gives its passages in order; fetch gives a passage's text."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def __call__(
        self, server: str, tool: str, arguments: dict[str, Any], key: str
    ) -> ToolResult:
        self.calls.append((server, tool, arguments))
        if tool == "search":
            hits: Any = [{"id": pid} for pid in PASSAGES[server]]
            return ToolResult(structured={"hits": hits})
        pid = arguments["id"]
        page: Any = {
            "id": pid,
            "source": server,
            "text": PASSAGES[server][pid],
            "offset": 0,
            "spans": [[0, 3, 3]],
            "location": {"path": f"{pid}.md", "line_start": 3, "line_end": 3, "section": ""},
        }
        return ToolResult(structured=page)


def _run(tmp: Path, budget: Budget) -> tuple[dict[str, Any], Folders]:
    folders = Folders()
    engine = Engine(tmp, log=MemoryRunLog())
    request = ResearchRequest(QUESTION, ("notes", "blog"), budget, depth=1)
    desk = prepare_research(
        engine,
        "r-follow",
        request,
        folders,
        cache=QueryCache(),
        quota=dict.fromkeys(("notes", "blog"), SourceQuota()),
        source_types={"notes": "notes", "blog": "blog"},
    )

    async def main() -> dict[str, Any]:
        outcome = await run_research(engine, desk)
        assert outcome.state == "succeeded", outcome.reason
        stored: dict[str, Any] = json.loads(
            (tmp / "runs" / "r-follow" / "research.json").read_text()
        )
        return stored

    return anyio.run(main), folders


def test_a_conflict_is_followed_up_and_the_third_passage_is_reported(tmp_path: Path) -> None:
    stored, folders = _run(tmp_path, Budget())
    trace, markdown = stored["trace"], stored["report"]["markdown"]
    (follow,) = trace["followups"]
    assert (follow["entity"], follow["attribute"]) == ("frobnicator 4.2", "released")
    assert follow["sources"] == ["notes", "blog"]
    assert follow["found"] == ["n2"]
    assert "notes [notes] (n2.md:3-3) says 2023-03-14" in follow["outcome"]
    (group,) = [g for g in trace["conflicts"] if g["attribute"] == "released"]
    assert group["label"] == "disputed"
    assert group["values"] == {"2023-03-14": ["notes"], "2024-09-30": ["blog"]}
    assert len(group["claims"]) == 3
    section = markdown.split("## Follow-up searches")[1].split("\n## ")[0]
    assert "fu1: conflict on frobnicator 4.2: released; searched notes, blog" in section
    assert "found: \u201cFrobnicator 4.2 was released on 14 March 2023" in section
    assert "Weighed by source type: 2023-03-14 is backed by the weightiest source type, notes" in (
        markdown
    )
    fetched = [c[2]["id"] for c in folders.calls if c[1] == "fetch"]
    assert fetched.count("n1") == 1  # the follow-up reads only passages not read yet
    assert fetched.count("b1") == 1
    assert stored["trace"]["usage"]["searches"] == 4  # 2 planned + 2 follow-up


def test_a_follow_up_beyond_the_search_budget_is_not_sent_and_the_report_says_so(
    tmp_path: Path,
) -> None:
    stored, folders = _run(tmp_path, Budget(max_searches=2))
    (follow,) = stored["trace"]["followups"]
    assert follow["sources"] == []
    assert "not searched (search budget used up (2 searches))" in follow["outcome"]
    assert sorted(c[0] for c in folders.calls if c[1] == "search") == ["blog", "notes"]
    assert stored["trace"]["usage"]["searches"] == 2
