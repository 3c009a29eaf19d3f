"""Queries over the corpus index: search (BM25), fetch (paged), metadata.

A query is split into terms (letters and digits; common words dropped). The
search asks, in tiers, for passages holding all terms and one of the ``also``
words, then all terms, then any term, until ``limit`` passages are found. Ranking is FTS5's BM25,
with the document title, the section path and the body weighted alike. At most
``per_document`` passages of one document are returned, so one long page does
not crowd out the others.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from plansmith.domains.research._passages import lines_of
from plansmith.domains.research._quotes import best_sentences
from plansmith.domains.research._terms import terms as split_terms
from plansmith.domains.research._wire import (
    DocumentMeta,
    FetchResult,
    Hit,
    IndexReport,
    KeyPoint,
    Location,
    OutlineEntry,
    SearchResult,
    SourceMeta,
)
from plansmith.domains.research.verify import Span
from plansmith.errors import InputError

__all__ = ["query_terms", "search", "fetch", "document_meta", "source_meta", "key_points"]

_TERM = re.compile(r"[^\W_]+")
_RANK = """
SELECT f.rowid AS rowid, p.id AS id, p.doc_id AS doc_id, bm25(passages_fts, 1.0, 1.0, 1.0) AS score
FROM passages_fts AS f JOIN passages AS p ON p.rowid = f.rowid
WHERE passages_fts MATCH ? ORDER BY score LIMIT ?
"""
_DETAIL = """
SELECT p.id, p.doc_id, p.section, p.anchor, p.line_start, p.line_end, p.spans, p.ordinal,
       d.path, d.title, d.date, d.date_source, d.version, f.body,
       snippet(passages_fts, 2, '**', '**', '…', 24) AS snip
FROM passages_fts AS f
JOIN passages AS p ON p.rowid = f.rowid
JOIN documents AS d ON d.id = p.doc_id
WHERE passages_fts MATCH ? AND f.rowid = ?
"""


def query_terms(query: str) -> list[str]:
    """The search terms of ``query``: lower case, common words dropped, in order, unique."""
    return split_terms(query)


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _location(conn: sqlite3.Connection, row: sqlite3.Row) -> Location:
    root = _meta(conn, "root") or ""
    uri = (Path(root) / row["path"]).as_uri() if root else f"file:{row['path']}"
    return Location(
        path=row["path"],
        passage=row["id"],
        section=row["section"],
        anchor=row["anchor"],
        line_start=row["line_start"],
        line_end=row["line_end"],
        uri=f"{uri}#L{row['line_start']}-L{row['line_end']}",
    )


def key_points(text: str, spans: tuple[Span, ...], terms: list[str], n: int = 3) -> list[KeyPoint]:
    """The ``n`` sentences of a passage that hold the most query terms, in reading order:
    each an exact substring of ``text`` with the lines it spans."""
    out: list[KeyPoint] = []
    for s, e in best_sentences(text, terms, n):
        first, last = lines_of(spans, s, e)
        out.append(KeyPoint(text=text[s:e], line_start=first, line_end=last))
    return out


def _spans(raw: str) -> tuple[Span, ...]:
    return tuple((int(a), int(b), int(c)) for a, b, c in json.loads(raw))


def search(
    conn: sqlite3.Connection,
    source: str,
    query: str,
    *,
    also: str = "",
    limit: int = 8,
    per_document: int = 3,
) -> SearchResult:
    """The best passages for ``query`` (see the module); passages that also hold one
    of the words of ``also`` come first."""
    words = query_terms(query)
    extra = [t for t in query_terms(also) if t not in words]
    if not words:
        return SearchResult(source=source, query=query, match="none", terms=[], hits=[])
    quoted = [f'"{t}"' for t in words]
    tiers = []
    if extra:
        tiers.append(
            (
                "all terms and one of also",
                " ".join(quoted) + " AND (" + " OR ".join(f'"{t}"' for t in extra) + ")",
            )
        )
    tiers.append(("all terms", " ".join(quoted)))
    if len(words) > 1:
        tiers.append(("any term", " OR ".join(quoted)))
    rows: list[tuple[sqlite3.Row, str]] = []  # ranked rows, and the expression that found them
    per_doc: dict[str, int] = {}
    match = "none"
    for name, expression in tiers:
        before = len(rows)
        taken = {r["id"] for r, _ in rows}
        for r in conn.execute(_RANK, (expression, limit * per_document * 4)):
            if len(rows) >= limit:
                break
            if r["id"] in taken or per_doc.get(r["doc_id"], 0) >= per_document:
                continue
            per_doc[r["doc_id"]] = per_doc.get(r["doc_id"], 0) + 1
            rows.append((r, expression))
        if len(rows) > before and match == "none":
            match = name
        if len(rows) >= limit:
            break
    terms = words + extra
    hits: list[Hit] = []
    for ranked, expression in rows:
        r = conn.execute(_DETAIL, (expression, ranked["rowid"])).fetchone()
        hits.append(
            Hit(
                id=r["id"],
                document=r["doc_id"],
                title=r["title"],
                source=source,
                date=r["date"],
                date_source=r["date_source"],
                version=r["version"],
                location=_location(conn, r),
                snippet=" ".join(r["snip"].split()),
                key_points=key_points(r["body"], _spans(r["spans"]), terms),
                score=round(float(ranked["score"]), 4),
            )
        )
    return SearchResult(source=source, query=query, match=match, terms=terms, hits=hits)


def _passage(conn: sqlite3.Connection, passage_id: str) -> sqlite3.Row:
    row = conn.execute(
        "SELECT p.*, d.path, d.title, d.date, d.version, f.body FROM passages AS p"
        " JOIN documents AS d ON d.id = p.doc_id JOIN passages_fts AS f ON f.rowid = p.rowid"
        " WHERE p.id = ?",
        (passage_id,),
    ).fetchone()
    if row is None:
        raise InputError(
            f"no passage {passage_id!r} in this source",
            hint="use an id from this source's search results (ids start with 'p')",
        )
    result: sqlite3.Row = row
    return result


def fetch(
    conn: sqlite3.Connection,
    source: str,
    passage_id: str,
    *,
    offset: int = 0,
    max_chars: int = 4000,
) -> FetchResult:
    """A page of a passage's text: ``max_chars`` characters from ``offset``."""
    row = _passage(conn, passage_id)
    body: str = row["body"]
    offset = max(0, min(offset, len(body)))
    end = min(len(body), offset + max(1, max_chars))
    near = {
        r["ordinal"]: r["id"]
        for r in conn.execute(
            "SELECT id, ordinal FROM passages WHERE doc_id = ? AND ordinal IN (?, ?)",
            (row["doc_id"], row["ordinal"] - 1, row["ordinal"] + 1),
        )
    }
    return FetchResult(
        id=row["id"],
        source=source,
        document=row["doc_id"],
        title=row["title"],
        date=row["date"],
        version=row["version"],
        location=_location(conn, row),
        text=body[offset:end],
        offset=offset,
        next_offset=end if end < len(body) else None,
        total_chars=len(body),
        spans=[list(x) for x in _spans(row["spans"])],
        previous=near.get(row["ordinal"] - 1),
        next=near.get(row["ordinal"] + 1),
    )


def document_meta(
    conn: sqlite3.Connection, *, doc_id: str | None = None, path: str | None = None
) -> DocumentMeta:
    """Title, date, version, path and outline of one document (by id, passage id or path)."""
    if doc_id and doc_id.startswith("p"):
        doc_id = _passage(conn, doc_id)["doc_id"]
    where, arg = ("id = ?", doc_id) if doc_id else ("path = ?", path)
    row = conn.execute(f"SELECT * FROM documents WHERE {where}", (arg,)).fetchone()
    if row is None:
        raise InputError(
            f"no document {doc_id or path!r} in this source",
            hint="pass a document id ('d...'), a passage id ('p...') or a path from a search hit",
        )
    outline = [
        OutlineEntry(
            passage=r["id"],
            section=r["section"],
            anchor=r["anchor"],
            line_start=r["line_start"],
            line_end=r["line_end"],
        )
        for r in conn.execute(
            "SELECT * FROM passages WHERE doc_id = ? ORDER BY ordinal LIMIT 100", (row["id"],)
        )
    ]
    fields: dict[str, Any] = {k: row[k] for k in row.keys() if k not in ("mtime_ns",)}  # noqa: SIM118
    return DocumentMeta(outline=outline, **fields)


def source_meta(conn: sqlite3.Connection, source: str) -> SourceMeta:
    """How big the source's index is, and what its last (re-)index did."""
    kinds = {r[0]: r[1] for r in conn.execute("SELECT kind, count(*) FROM documents GROUP BY kind")}
    last = _meta(conn, "last_index")
    return SourceMeta(
        source=source,
        root=_meta(conn, "root") or "",
        documents=sum(kinds.values()),
        passages=conn.execute("SELECT count(*) FROM passages").fetchone()[0],
        kinds=kinds,
        last_index=IndexReport.model_validate_json(last) if last else None,
    )
