"""The corpus index: a SQLite database with an FTS5 table of passages.

:func:`index_folder` walks a source's root and brings the index up to date,
incrementally: a file whose modification time and size are unchanged is not
read; one whose time changed but whose SHA-256 is the same is only touched;
a changed file is parsed again and its passages replaced; a file no longer
there is dropped with its passages. When the parser itself changed
(:data:`PARSER_VERSION`), every file is parsed again. Folders whose name starts with ``.`` or
``_`` (hidden, and Sphinx's ``_sources``/``_static``) are skipped, and so are
paths matching an ``exclude`` glob.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from plansmith.domains.research._documents import ParsedDoc, kind_of
from plansmith.domains.research._parse_html import parse_html
from plansmith.domains.research._parse_text import parse_markdown, parse_text
from plansmith.domains.research._passages import doc_id_of, passages_of
from plansmith.domains.research._wire import IndexReport
from plansmith.errors import InputError, Location

__all__ = [
    "SCHEMA_VERSION",
    "PARSER_VERSION",
    "MAX_BYTES",
    "connect",
    "index_folder",
    "index_source",
    "parse_file",
]

SCHEMA_VERSION = "1"
#: bump when parsing or passage cutting changes: every file is then parsed again
PARSER_VERSION = "3"
MAX_BYTES = 16 * 1024 * 1024
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
  id TEXT PRIMARY KEY, path TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, title TEXT NOT NULL,
  date TEXT, date_source TEXT NOT NULL, version TEXT, mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL, sha256 TEXT NOT NULL, passages INTEGER NOT NULL,
  indexed_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS passages(
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL,
  ordinal INTEGER NOT NULL, section TEXT NOT NULL, anchor TEXT NOT NULL,
  line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, spans TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id, ordinal);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
  title, section, body, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS idempotency(
  tool TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY(tool, key));
"""

_PARSERS: dict[str, Callable[[str, str], ParsedDoc]] = {
    "html": parse_html,
    "markdown": parse_markdown,
    "text": parse_text,
}


def connect(db: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) the index at ``db``, in WAL mode for concurrent readers."""
    path = Path(db)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
    except (OSError, sqlite3.Error) as error:
        raise InputError(
            f"cannot open the corpus index {path}: {error}",
            location=Location(str(path)),
            hint="pass --db a writable file path (it is created if missing)",
        ) from None
    conn.row_factory = sqlite3.Row
    return conn


def parse_file(path: Path, kind: str, data: bytes) -> ParsedDoc:
    """Parse ``data`` (the bytes of ``path``) with the reader for ``kind``."""
    text = data.decode("utf-8-sig", errors="replace")
    return _PARSERS[kind](text, path.stem)


def _walk(root: Path, exclude: Sequence[str]) -> list[tuple[str, Path, str]]:
    found: list[tuple[str, Path, str]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            full = Path(folder) / name
            rel = full.relative_to(root).as_posix()
            kind = kind_of(name)
            if kind is None or name.startswith("."):
                continue
            if any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) for g in exclude):
                continue
            found.append((rel, full, kind))
    return found


def _delete(conn: sqlite3.Connection, doc_id: str) -> None:
    conn.execute(
        "DELETE FROM passages_fts WHERE rowid IN (SELECT rowid FROM passages WHERE doc_id = ?)",
        (doc_id,),
    )
    conn.execute("DELETE FROM passages WHERE doc_id = ?", (doc_id,))
    conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))


def _insert(
    conn: sqlite3.Connection, rel: str, doc: ParsedDoc, *, st: os.stat_result, sha: str, now: str
) -> int:
    doc_id = doc_id_of(rel)
    passages = passages_of(rel, doc)
    date, date_source = doc.date, "document"
    if date is None:
        date = dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).date().isoformat()
        date_source = "mtime"
    conn.execute(
        "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (doc_id, rel, doc.kind, doc.title, date, date_source, doc.version, st.st_mtime_ns,
         st.st_size, sha, len(passages), now),
    )  # fmt: skip
    for p in passages:
        cur = conn.execute(
            "INSERT INTO passages(id, doc_id, ordinal, section, anchor, line_start, line_end,"
            " spans) VALUES (?,?,?,?,?,?,?,?)",
            (p.id, doc_id, p.ordinal, p.section, p.anchor, p.line_start, p.line_end,
             json.dumps(p.spans)),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO passages_fts(rowid, title, section, body) VALUES (?,?,?,?)",
            (cur.lastrowid, doc.title, p.section, p.text),
        )
    return len(passages)


def index_folder(
    conn: sqlite3.Connection,
    root: str | Path,
    *,
    source: str,
    exclude: Sequence[str] = (),
    clock: Callable[[], float] = time.perf_counter,
) -> IndexReport:
    """Bring the index up to date with the files under ``root`` (see the module)."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise InputError(
            f"the corpus root {base} is not a folder",
            location=Location(str(root)),
            hint="pass --root a folder of HTML, Markdown or text documents",
        )
    began = clock()
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    counts = dict.fromkeys(("added", "updated", "touched", "unchanged", "removed"), 0)
    skipped: list[str] = []
    seen: set[str] = set()
    # what the index holds is read under the write lock: another process indexing the
    # same folder into the same file (two corpus servers started at once) has committed
    # by then, and its documents are known, not inserted twice
    conn.execute("BEGIN IMMEDIATE")
    try:
        known = {
            r["path"]: (r["id"], r["mtime_ns"], r["size"], r["sha256"])
            for r in conn.execute("SELECT id, path, mtime_ns, size, sha256 FROM documents")
        }
        stale_parser = conn.execute("SELECT value FROM meta WHERE key = 'parser'").fetchone()
        if stale_parser is None or stale_parser[0] != PARSER_VERSION:
            known = {path: (doc_id, -1, -1, "") for path, (doc_id, *_r) in known.items()}
        for rel, full, kind in _walk(base, exclude):
            try:
                st = full.stat()
            except OSError as error:
                skipped.append(f"{rel}: {error.strerror or error}")
                continue
            old = known.get(rel)
            if old is not None and (old[1], old[2]) == (st.st_mtime_ns, st.st_size):
                seen.add(rel)
                counts["unchanged"] += 1
                continue
            if st.st_size > MAX_BYTES:
                skipped.append(f"{rel}: larger than {MAX_BYTES} bytes")
                continue
            try:
                data = full.read_bytes()
            except OSError as error:
                skipped.append(f"{rel}: {error.strerror or error}")
                continue
            seen.add(rel)
            sha = hashlib.sha256(data).hexdigest()
            if old is not None and old[3] == sha:
                conn.execute(
                    "UPDATE documents SET mtime_ns = ?, size = ? WHERE id = ?",
                    (st.st_mtime_ns, st.st_size, old[0]),
                )
                counts["touched"] += 1
                continue
            if old is not None:
                _delete(conn, old[0])
            _insert(conn, rel, parse_file(full, kind, data), st=st, sha=sha, now=now)
            counts["updated" if old is not None else "added"] += 1
        for rel, (doc_id, *_rest) in known.items():
            if rel not in seen:
                _delete(conn, doc_id)
                counts["removed"] += 1
        report = _report(conn, counts, skipped, clock() - began)
        meta = {"schema": SCHEMA_VERSION, "parser": PARSER_VERSION}
        meta |= {"source": source, "root": str(base)}
        meta["last_index"] = report.model_dump_json()
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return report


def _report(
    conn: sqlite3.Connection, counts: dict[str, int], skipped: list[str], seconds: float
) -> IndexReport:
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    passages = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
    return IndexReport(
        documents=documents,
        passages=passages,
        skipped=skipped,
        seconds=round(seconds, 4),
        **counts,
    )


def index_source(
    root: str | Path, db: str | Path, *, source: str, exclude: Sequence[str] = ()
) -> IndexReport:
    """Bring the index at ``db`` up to date with ``root`` (open, index, close)."""
    conn = connect(db)
    try:
        return index_folder(conn, root, source=source, exclude=exclude)
    finally:
        conn.close()
