"""Research quality on the labelled evaluation set: citations, conflicts, verdicts.

The set is ``tests/domains/research/data/eval/questions.json``: questions over Debian's
python3-doc HTML (the real corpus) and two small planted folders next to it (``notes``
and ``blog``, made up, contradicting each other and the docs on purpose). Each
question is labelled with the pages a good answer cites, the conflicts that must be
flagged, and whether any source can answer it. Every question is run through the
engine (``ResearchService``: one real corpus server per source, 0 LLM calls), one
after the other, with the default budget. Figures, per category and in total:

* citation recall@5: of the labelled pages, the share among the first five distinct
  pages the report cites (in reading order); precision@5: of those five, the share
  that are labelled (questions with labelled pages only);
* conflict recall: labelled conflicts flagged disputed; false conflicts: disputed
  groups that are no planted conflict at all; conflict precision: flagged groups
  that are planted, of all flagged;
* verdict: "answered" when the findings quote a passage or point to a dispute,
  else "unanswerable"; accuracy against the label;
* searches sent and seconds per question.

Usage: .venv/bin/python bench/bench_research.py [--root DIR] [--only ID,ID] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from plansmith.domains.research import PYTHON_DOCS_EXCLUDES, find_python_docs
from plansmith.domains.research.desk import ResearchService, SourceQuota
from plansmith.engine import Engine

DATA = Path(__file__).resolve().parent.parent / "tests/domains/research/data/eval"
CITED = re.compile(r"^\s*- .*?\u201c.*\u201d \((?P<source>[^():]+): (?P<path>[^:()]+):\d+-\d+, ")
_TOP = ("## Findings", "## Comparison")


def cited_pages(markdown: str) -> list[str]:
    """``source:path`` of every citation, distinct, in reading order."""
    pages: list[str] = []
    for line in markdown.splitlines():
        m = CITED.match(line)
        if m:
            page = f"{m['source']}:{m['path']}"
            if page not in pages:
                pages.append(page)
    return pages


def verdict(markdown: str) -> str:
    """``answered`` when the findings quote a passage or point to a dispute."""
    for head in _TOP:
        if head in markdown:
            body = markdown.split(head, 1)[1].split("\n## ", 1)[0]
            lines = body.splitlines()
            if any(CITED.match(x) or "Sources disagree on" in x for x in lines):
                return "answered"
    return "unanswerable"


def score(
    q: dict[str, Any], report: dict[str, Any], planted: set[tuple[str, str]]
) -> dict[str, Any]:
    """The figures of one question from its report (markdown and trace)."""
    top = cited_pages(report["markdown"])[:5]
    wanted = [set(c.split("|")) for c in q["cite"]]
    allowed = set().union(*wanted) if wanted else set()
    flagged = {
        (g["entity"], g["attribute"])
        for g in report["trace"].get("conflicts", [])
        if g["label"] == "disputed" and any(c["kind"] == "value" for c in g["conflicts"])
    }
    labelled = {(e, a) for e, a in q["conflicts"]}
    return {
        "id": q["id"],
        "category": q["category"],
        "recall5": (sum(1 for alts in wanted if alts & set(top)) / len(wanted)) if wanted else None,
        "precision5": (sum(1 for p in top if p in allowed) / len(top)) if wanted and top else None,
        "conflicts_labelled": len(labelled),
        "conflicts_found": len(labelled & flagged),
        "flagged": len(flagged),
        "flagged_planted": len(flagged & planted),
        "false_conflicts": sorted(flagged - planted),
        "false_detail": [
            c["detail"]
            for g in report["trace"].get("conflicts", [])
            if (g["entity"], g["attribute"]) in flagged - planted
            for c in g["conflicts"]
        ],
        "missed": sorted(labelled - flagged),
        "verdict": verdict(report["markdown"]),
        "verdict_ok": verdict(report["markdown"])
        == ("answered" if q["answerable"] else "unanswerable"),
        "top5": top,
    }


async def _run(root: Path, questions: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    planted = {(e, a) for q in questions for e, a in q["conflicts"]}
    engine = Engine(home)
    sources = {"python-docs": root, "notes": DATA / "notes", "blog": DATA / "blog"}
    service = ResearchService(
        engine,
        sources,
        excludes={"python-docs": PYTHON_DOCS_EXCLUDES},
        quota=SourceQuota(4, 400),
    )
    rows: list[dict[str, Any]] = []
    async with service:
        await service.servers.pool()  # index every source before the clock starts
        for q in questions:
            t0 = time.perf_counter()
            handle = service.start_research(q["question"], owner="local")
            status = await service.wait(handle.run_id, owner="local")
            seconds = time.perf_counter() - t0
            report = service.get_research_report(handle.run_id, owner="local")
            row = score(q, {"markdown": report.markdown, "trace": report.trace}, planted)
            row.update(searches=status.searches, seconds=round(seconds, 3), state=status.state)
            rows.append(row)
            print(
                f"{q['id']:<10} {status.state:<9} r@5={row['recall5']} "
                f"conflicts {row['conflicts_found']}/{row['conflicts_labelled']} "
                f"false={len(row['false_conflicts'])} {row['verdict']:<12} "
                f"{status.searches:>2} searches {seconds:.2f} s",
                file=sys.stderr,
            )
    engine.close()
    return rows


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a group of rows."""
    r5 = [r["recall5"] for r in rows if r["recall5"] is not None]
    p5 = [r["precision5"] for r in rows if r["precision5"] is not None]
    labelled = sum(r["conflicts_labelled"] for r in rows)
    flagged = sum(r["flagged"] for r in rows)
    return {
        "questions": len(rows),
        "recall5": _mean(r5),
        "precision5": _mean(p5),
        "conflict_recall": round(sum(r["conflicts_found"] for r in rows) / labelled, 3)
        if labelled
        else None,
        "conflict_precision": round(sum(r["flagged_planted"] for r in rows) / flagged, 3)
        if flagged
        else None,
        "false_conflicts": sum(len(r["false_conflicts"]) for r in rows),
        "verdict_accuracy": _mean([1.0 if r["verdict_ok"] else 0.0 for r in rows]),
        "searches_mean": _mean([float(r["searches"]) for r in rows]),
        "seconds_mean": _mean([float(r["seconds"]) for r in rows]),
        "seconds_p_max": max((r["seconds"] for r in rows), default=None),
    }


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="python3-doc's HTML folder (default: found)")
    parser.add_argument("--only", help="question ids, comma-separated")
    parser.add_argument("--json", help="write the figures and every row here too")
    args = parser.parse_args()
    root = args.root or find_python_docs()
    if root is None:
        sys.exit("python3-doc is not installed (apt-get install -y python3-doc)")
    data = json.loads((DATA / "questions.json").read_text(encoding="utf-8"))
    questions = data["questions"]
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        rows = anyio.run(_run, Path(root), questions, Path(tmp) / "home")
        total = time.perf_counter() - t0
    categories = list(dict.fromkeys(r["category"] for r in rows))
    figures = {c: summary([r for r in rows if r["category"] == c]) for c in categories}
    figures["all"] = summary(rows)
    non_planted = [r for r in rows if not r["conflicts_labelled"]]
    figures["all"]["flagged_on_non_planted"] = sum(r["flagged"] for r in non_planted)
    figures["all"]["false_on_non_planted"] = sum(len(r["false_conflicts"]) for r in non_planted)
    figures["all"]["wall_seconds"] = round(total, 1)
    cols = [
        "questions",
        "recall5",
        "precision5",
        "conflict_recall",
        "conflict_precision",
        "false_conflicts",
        "verdict_accuracy",
        "searches_mean",
        "seconds_mean",
    ]
    print("| category | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name, f in figures.items():
        print(f"| {name} | " + " | ".join(_fmt(f[c]) for c in cols) + " |")
    a = figures["all"]
    print(
        f"\non the {len(non_planted)} questions with no labelled conflict: "
        f"{a['flagged_on_non_planted']} groups flagged, {a['false_on_non_planted']} of them "
        f"no planted conflict; wall time {total:.1f} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
