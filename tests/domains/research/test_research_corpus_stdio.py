"""plansmith-corpus as real processes over stdio, driven by the MCP 2.x client.

Four servers, one per source: a sizeable subset of Debian's Python 3.11
documentation (python3-doc; the real files, linked into a folder), the planted
notes and the planted blog (documents that contradict it on purpose), and a
scratch folder for re-indexing. One session runs everything and records what
it saw; the tests check the record: search, fetch and metadata; idempotency;
the call logs; the planted contradictions; two research questions whose
reports must cite only passages that exist and hold the quoted words; and an
incremental re-index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from plansmith.domains.research import (
    PLANTED_DIR,
    PYTHON_DOCS_EXCLUDES,
    Budget,
    CallRecord,
    ResearchTrace,
    SubquestionRecord,
    Usage,
    evidence_from_fetch,
    find_python_docs,
    research_problem,
    write_report,
)
from plansmith.domains.research.verify import Evidence, verify

KEY = "io.plansmith/idempotency-key"
CITED = re.compile(r"^\s*- .*?\u201c(?P<quote>.*)\u201d \((?P<cite>[^()]*)\)$")
SUBSET = (
    "library/math.html",
    "library/sqlite3.html",
    "library/tomllib.html",
    "library/asyncio-task.html",
    "library/zoneinfo.html",
    "library/statistics.html",
    "library/json.html",
    "library/pickle.html",
    "library/shelve.html",
    "library/marshal.html",
    "library/dbm.html",
    "library/functools.html",
    "library/pathlib.html",
    "library/os.path.html",
    "library/contextlib.html",
    "library/datetime.html",
    "library/configparser.html",
    "library/csv.html",
    "library/copyreg.html",
    "library/struct.html",
    "whatsnew/3.7.html",
    "whatsnew/3.8.html",
    "whatsnew/3.9.html",
    "whatsnew/3.10.html",
    "whatsnew/3.11.html",
    "tutorial/inputoutput.html",
    "tutorial/datastructures.html",
    "tutorial/stdlib.html",
    "tutorial/stdlib2.html",
    "faq/library.html",
)
QUESTIONS = ("Compare json and pickle on security and speed", "How do I use tomllib?")


def _params(name: str, root: Path, state: Path, excludes: tuple[str, ...] = ()) -> Any:
    args = ["-m", "plansmith.domains.research.corpus_server", "--source", name]
    args += ["--root", str(root), "--db", str(state / f"{name}.sqlite")]
    args += ["--log", str(state / f"{name}.calls.jsonl")]
    for glob in excludes:
        args += ["--exclude", glob]
    env = {"PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(state))


async def _call(client: Client, tool: str, args: dict[str, Any], key: str | None = None) -> Any:
    meta: Any = {KEY: key} if key else None
    result = await client.call_tool(tool, args, meta=meta)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return {"error": result.is_error, "data": result.structured_content, "text": text}


async def _evidence(
    client: Client, source: str, query: str, also: str, sq: str
) -> tuple[Any, list[Evidence]]:
    found = await _call(client, "search", {"query": query, "also": also, "limit": 5})
    out: list[Evidence] = []
    for hit in found["data"]["hits"]:
        page = await _call(client, "fetch", {"id": hit["id"], "max_chars": 20000})
        out.append(evidence_from_fetch(page["data"], sq))
    return found, out


async def _research(clients: dict[str, Client], question: str) -> dict[str, Any]:
    """A minimal driver: every subquestion searches every source in parallel."""
    names = ["python-docs", "planted-notes", "planted-blog"]
    problem = research_problem(question, names, Budget(max_subtasks=8, max_searches=24))
    calls: list[CallRecord] = []
    evidence: list[Evidence] = []
    records: list[SubquestionRecord] = []
    for sq in problem.subquestions:
        found: dict[str, tuple[Any, list[Evidence]]] = {}

        async def one(
            name: str,
            sq_id: str = sq.id,
            query: str = sq.query,
            also: str = sq.also,
            into: dict[str, tuple[Any, list[Evidence]]] = found,
        ) -> None:
            into[name] = await _evidence(clients[name], name, query, also, sq_id)

        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(one, name)
        hits = 0
        for name in names:
            result, items = found[name]
            calls.append(
                CallRecord(sq.id, name, "search", sq.query, hits=len(result["data"]["hits"]))
            )
            evidence.extend(items)
            hits += len(items)
        status = "answered" if hits else "no evidence"
        records.append(
            SubquestionRecord(sq.id, sq.text, sq.facet, sq.query, status, sq.option, sq.criterion)
        )
    usage = Usage(len(records), len(calls), 0.0)
    trace = ResearchTrace("r-test", problem, tuple(records), tuple(calls), tuple(evidence), usage)
    report = write_report(trace)
    checks = []
    for line in report.markdown.splitlines():
        m = CITED.match(line)
        if m is None:
            continue
        source, rest = m["cite"].split(": ", 1)
        where, passage = rest.split(", ")
        path, lines = where.rsplit(":", 1)
        first, last = map(int, lines.split("-"))
        text = ""
        offset: int | None = 0
        location: dict[str, Any] = {}
        while offset is not None:
            page = await _call(clients[source], "fetch", {"id": passage, "offset": offset})
            text += page["data"]["text"]
            offset, location = page["data"]["next_offset"], page["data"]["location"]
        checks.append(
            {
                "line": line,
                "found": " ".join(m["quote"].split()) in " ".join(text.split()),
                "path_ok": location["path"] == path,
                "lines_ok": location["line_start"] <= first <= last <= location["line_end"],
            }
        )
    return {
        "trace": trace.to_json(),
        "report": report.markdown,
        "checks": checks,
        "kind": problem.question.kind,
    }


async def _scenario(docs: Path, state: Path) -> dict[str, Any]:
    scratch = state / "scratch"
    scratch.mkdir()
    (scratch / "keep.md").write_text("# Keep\n\nThe keep file says frobnicate.\n")
    (scratch / "change.md").write_text("# Change\n\nThe change file says frobnicate.\n")
    (scratch / "drop.txt").write_text("Drop\n\nThe drop file says frobnicate.\n")
    notes, blog = state / "notes", state / "blog"
    shutil.copytree(PLANTED_DIR / "notes", notes)
    shutil.copytree(PLANTED_DIR / "blog", blog)
    servers = {
        "python-docs": _params("python-docs", docs, state, PYTHON_DOCS_EXCLUDES),
        "planted-notes": _params("planted-notes", notes, state),
        "planted-blog": _params("planted-blog", blog, state),
        "scratch": _params("scratch", scratch, state),
    }
    out: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        clients = {}
        for name, params in servers.items():
            clients[name] = await stack.enter_async_context(
                Client(params, read_timeout_seconds=120)
            )
            await clients[name].list_tools()
        py = clients["python-docs"]
        out["tools"] = sorted(t.name for t in (await py.list_tools()).tools)
        out["search"] = await _call(py, "search", {"query": "isqrt", "limit": 3})
        first = out["search"]["data"]["hits"][0]
        out["fetch"] = await _call(py, "fetch", {"id": first["id"]})
        out["meta_doc"] = await _call(py, "metadata", {"path": first["location"]["path"]})
        out["meta_source"] = await _call(py, "metadata", {})
        out["missing"] = await _call(py, "fetch", {"id": "pnothing"})
        out["key_first"] = await _call(py, "search", {"query": "tomllib"}, key="k-1")
        out["key_again"] = await _call(py, "search", {"query": "zoneinfo"}, key="k-1")
        cases = json.loads((PLANTED_DIR / "cases.json").read_text())["cases"]
        out["cases"] = []
        for case in cases:
            evidence: list[Evidence] = []
            for source in case["values"]:
                _, items = await _evidence(
                    clients[source], source, case["query"], case["also"], case["id"]
                )
                evidence.extend(items)
            group = verify(evidence).find(case["entity"], case["attribute"])
            out["cases"].append(
                {
                    "case": case,
                    "label": group.label if group else None,
                    "values": dict(group.values) if group else {},
                }
            )
        out["research"] = [await _research(clients, q) for q in QUESTIONS]
        (scratch / "change.md").write_text(
            "# Change\n\nThe change file now says frobnicate twice.\n"
        )
        (scratch / "drop.txt").unlink()
        (scratch / "new.md").write_text("# New\n\nThe new file says frobnicate.\n")
        out["reindex"] = await _call(clients["scratch"], "reindex", {})
        out["reindex_again"] = await _call(clients["scratch"], "reindex", {})
        out["after"] = await _call(clients["scratch"], "search", {"query": "frobnicate"})
    out["logs"] = {
        name: [
            json.loads(line) for line in (state / f"{name}.calls.jsonl").read_text().splitlines()
        ]
        for name in servers
    }
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = find_python_docs()
    if root is None:
        pytest.skip("python3-doc is not installed (apt-get install -y python3-doc)")
    docs = tmp_path_factory.mktemp("python-docs")
    for rel in SUBSET:
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).symlink_to(root / rel)
    state = tmp_path_factory.mktemp("corpus-state")
    result: dict[str, Any] = anyio.run(_scenario, docs, state)
    return result


def test_the_server_offers_search_fetch_metadata_and_reindex(record: dict[str, Any]) -> None:
    assert record["tools"] == ["fetch", "metadata", "reindex", "search"]


def test_search_returns_summaries_with_locations_on_the_real_corpus(record: dict[str, Any]) -> None:
    hit = record["search"]["data"]["hits"][0]
    assert hit["location"]["path"] == "library/math.html"
    assert hit["location"]["anchor"] == "math.isqrt"
    assert hit["version"] == "3.11.2"
    assert hit["source"] == "python-docs"
    assert all(len(kp["text"]) <= 280 for kp in hit["key_points"])
    assert "New in version 3.8." in record["fetch"]["data"]["text"]
    assert record["fetch"]["data"]["location"] == hit["location"]


def test_metadata_gives_title_date_version_and_the_source_size(record: dict[str, Any]) -> None:
    doc = record["meta_doc"]["data"]["document"]
    assert (doc["title"], doc["version"], doc["path"]) == (
        "math — Mathematical functions",
        "3.11.2",
        "library/math.html",
    )
    assert doc["date"] is not None
    corpus = record["meta_source"]["data"]["corpus"]
    assert corpus["documents"] == len(SUBSET)
    assert corpus["passages"] > 1000


def test_unknown_ids_are_tool_errors_with_a_hint(record: dict[str, Any]) -> None:
    assert record["missing"]["error"]
    assert "no passage 'pnothing'" in record["missing"]["text"]
    assert "hint:" in record["missing"]["text"]


def test_the_same_idempotency_key_gets_the_first_result(record: dict[str, Any]) -> None:
    assert record["key_again"]["data"] == record["key_first"]["data"]
    assert record["key_again"]["data"]["query"] == "tomllib"
    keyed = [e for e in record["logs"]["python-docs"] if e["key"] == "k-1"]
    assert [e["replayed"] for e in keyed] == [False, True]


def test_every_call_is_logged_per_source(record: dict[str, Any]) -> None:
    for name, entries in record["logs"].items():
        assert entries
        assert all(e["source"] == name for e in entries)
        assert all(e["finished"] >= e["started"] and e["in_flight"] >= 1 for e in entries)
    tools = {e["tool"] for e in record["logs"]["python-docs"]}
    assert tools == {"search", "fetch", "metadata"}
    errors = [e for e in record["logs"]["python-docs"] if e["outcome"] == "error"]
    assert [e["arguments"]["id"] for e in errors] == ["pnothing"]


def test_planted_contradictions_are_all_flagged_disputed(record: dict[str, Any]) -> None:
    planted = [c for c in record["cases"] if c["case"]["expect"] == "disputed"]
    assert len(planted) == 10
    for c in planted:
        assert c["label"] == "disputed", c
        assert c["values"] == {v: (s,) for s, v in c["case"]["values"].items()}, c


def test_claims_the_sources_agree_on_are_consistent(record: dict[str, Any]) -> None:
    agreed = [c for c in record["cases"] if c["case"]["expect"] == "consistent"]
    assert len(agreed) == 2
    assert all(c["label"] == "consistent" for c in agreed), agreed


def test_research_reports_cite_only_passages_that_hold_the_quoted_words(
    record: dict[str, Any],
) -> None:
    assert [r["kind"] for r in record["research"]] == ["compare", "explain"]
    for research in record["research"]:
        checks = research["checks"]
        assert len(checks) >= 8, research["report"]
        bad = [c for c in checks if not (c["found"] and c["path_ok"] and c["lines_ok"])]
        assert bad == []
        sources = {c["line"].rsplit("(", 1)[1].split(":")[0] for c in checks}
        assert "python-docs" in sources


def test_research_reports_quote_nothing_without_a_citation(record: dict[str, Any]) -> None:
    for research in record["research"]:
        for line in research["report"].splitlines():
            assert "\u201c" not in line or CITED.match(line), line


def test_the_how_to_report_finds_tomllib_and_flags_the_planted_version(
    record: dict[str, Any],
) -> None:
    research = record["research"][1]
    assert "library/tomllib.html" in research["report"]
    disputed = [c for c in research["trace"]["conflicts"] if c["label"] == "disputed"]
    assert any(c["entity"] == "tomllib" and c["attribute"] == "added_in" for c in disputed)
    section = research["report"].split("## Disputed claims")[1].split("## Conclusions")[0]
    assert "planted-notes says 3.10" in section
    assert "python-docs says 3.11" in section


def test_reindex_adds_updates_and_drops_files(record: dict[str, Any]) -> None:
    report = record["reindex"]["data"]
    assert (report["added"], report["updated"], report["removed"], report["unchanged"]) == (
        1,
        1,
        1,
        1,
    )
    again = record["reindex_again"]["data"]
    assert (again["added"], again["updated"], again["removed"], again["unchanged"]) == (0, 0, 0, 3)
    paths = {h["location"]["path"] for h in record["after"]["data"]["hits"]}
    assert paths == {"keep.md", "change.md", "new.md"}
