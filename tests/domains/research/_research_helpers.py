"""Sources for the research-run tests: real python3-doc pages (linked into a folder),
and the planted notes and blog (documents that contradict the docs on purpose)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from plansmith.domains.research import PLANTED_DIR, PYTHON_DOCS_EXCLUDES, find_python_docs

__all__ = [
    "CITED",
    "EXCLUDES",
    "PAGES",
    "PLANTED_DIR",
    "citations",
    "python_docs_subset",
    "sources",
]

CITED = re.compile(r"^\s*- .*?\u201c(?P<quote>.*)\u201d \((?P<cite>[^()]*)\)$")

PAGES = (
    "library/math.html",
    "library/sqlite3.html",
    "library/tomllib.html",
    "library/asyncio-task.html",
    "library/zoneinfo.html",
    "library/statistics.html",
    "library/json.html",
    "library/pickle.html",
    "library/marshal.html",
    "library/shelve.html",
    "library/csv.html",
    "library/functools.html",
    "whatsnew/3.7.html",
    "whatsnew/3.8.html",
    "whatsnew/3.9.html",
    "whatsnew/3.10.html",
    "whatsnew/3.11.html",
)


def python_docs_subset(into: Path, pages: tuple[str, ...] = PAGES) -> Path:
    """A folder of links to ``pages`` of the installed Python docs (skips without them)."""
    root = find_python_docs()
    if root is None:
        pytest.skip("python3-doc is not installed (apt-get install -y python3-doc)")
    for rel in pages:
        (into / rel).parent.mkdir(parents=True, exist_ok=True)
        (into / rel).symlink_to(root / rel)
    return into


def sources(tmp: Path, pages: tuple[str, ...] = PAGES) -> dict[str, Path]:
    notes, blog = tmp / "notes", tmp / "blog"
    shutil.copytree(PLANTED_DIR / "notes", notes)
    shutil.copytree(PLANTED_DIR / "blog", blog)
    docs = python_docs_subset(tmp / "python-docs", pages)
    return {"python-docs": docs, "planted-notes": notes, "planted-blog": blog}


EXCLUDES = {"python-docs": PYTHON_DOCS_EXCLUDES}


def citations(markdown: str) -> list[dict[str, Any]]:
    """Each cited quote of a report: the quote, source, path, lines and passage id."""
    out = []
    for line in markdown.splitlines():
        m = CITED.match(line)
        if m is None:
            continue
        source, rest = m["cite"].split(": ", 1)
        where, passage = rest.split(", ")
        path, lines = where.rsplit(":", 1)
        first, last = map(int, lines.split("-"))
        out.append(
            {
                "line": line,
                "quote": m["quote"],
                "source": source,
                "path": path,
                "first": first,
                "last": last,
                "passage": passage,
            }
        )
    return out
