"""The SQLite FTS5 index in process: incremental re-indexing, search, fetch, metadata."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plansmith.domains.research import PLANTED_DIR
from plansmith.domains.research import _store as store
from plansmith.domains.research._index import connect, index_folder
from plansmith.errors import InputError


def _tree(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "_static").mkdir()
    (root / ".hidden").mkdir()
    (root / "a.md").write_text("# Alpha\n\nThe alpha widget frobs quickly.\n")
    (root / "sub" / "b.txt").write_text("Beta notes\n\nThe beta widget frobs slowly.\n")
    (root / "sub" / "c.html").write_text(
        "<html><head><title>Gamma</title></head><body><p>Gamma frobs.</p></body></html>"
    )
    (root / "_static" / "skip.md").write_text("# skipped\n\nfrobs\n")
    (root / ".hidden" / "skip.md").write_text("# skipped\n\nfrobs\n")
    (root / "genindex.html").write_text("<p>frobs frobs frobs</p>")
    (root / "image.png").write_bytes(b"\x89PNG")


def test_reindex_reads_only_what_changed_and_drops_what_is_gone(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    _tree(root)
    conn = connect(tmp_path / "i.sqlite")
    first = index_folder(conn, root, source="s", exclude=("genindex*",))
    assert (first.added, first.documents) == (3, 3)
    ids = {h.id for h in store.search(conn, "s", "frobs", limit=10).hits}
    again = index_folder(conn, root, source="s", exclude=("genindex*",))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 3)
    a = root / "a.md"
    os.utime(a, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns + 10**9))  # same bytes
    (root / "sub" / "b.txt").write_text("Beta notes\n\nThe beta widget now frobs fast.\n")
    (root / "sub" / "c.html").unlink()
    (root / "d.md").write_text("# Delta\n\nDelta frobs too.\n")
    third = index_folder(conn, root, source="s", exclude=("genindex*",))
    assert (third.added, third.updated, third.touched, third.removed) == (1, 1, 1, 1)
    assert third.unchanged == 0
    texts = {h.location.path: h.key_points[0].text for h in store.search(conn, "s", "frobs").hits}
    assert texts == {
        "a.md": "The alpha widget frobs quickly.",
        "sub/b.txt": "The beta widget now frobs fast.",
        "d.md": "Delta frobs too.",
    }
    alpha = store.search(conn, "s", "alpha").hits[0].id
    assert alpha in ids  # an untouched document keeps its passage ids


def test_a_missing_root_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a folder") as info:
        index_folder(connect(tmp_path / "i.sqlite"), tmp_path / "nope", source="s")
    assert info.value.hint


@pytest.fixture
def planted(tmp_path: Path) -> tuple[object, str]:
    conn = connect(tmp_path / "planted.sqlite")
    index_folder(conn, PLANTED_DIR / "notes", source="notes")
    return conn, "notes"


def test_search_ranks_all_terms_then_any_term_and_marks_the_tier(
    planted: tuple[object, str],
) -> None:
    conn, _ = planted
    both = store.search(conn, "notes", "isqrt added")  # type: ignore[arg-type]
    assert both.match == "all terms"
    assert both.hits[0].location.path == "stdlib-additions.md"
    assert both.hits[0].key_points[0].text == "The function `math.isqrt()` was added in Python 3.9."
    either = store.search(conn, "notes", "isqrt zzzunknown")  # type: ignore[arg-type]
    assert either.match == "any term"
    assert store.search(conn, "notes", "the of").match == "none"  # type: ignore[arg-type]


def test_hits_are_summaries_with_locations_not_documents(planted: tuple[object, str]) -> None:
    conn, _ = planted
    hit = store.search(conn, "notes", "tomllib").hits[0]  # type: ignore[arg-type]
    assert hit.title.startswith("PLANTED TEST DATA")
    assert (hit.date, hit.date_source) == ("2024-05-01", "document")
    lines = (PLANTED_DIR / "notes" / hit.location.path).read_text().splitlines()
    for kp in hit.key_points:
        assert kp.text in " ".join(lines[kp.line_start - 1 : kp.line_end])
    assert hit.location.uri.endswith(f"#L{hit.location.line_start}-L{hit.location.line_end}")
    assert "**tomllib**" in hit.snippet


def test_fetch_pages_through_a_passage_and_knows_its_neighbours(
    planted: tuple[object, str],
) -> None:
    conn, _ = planted
    hit = store.search(conn, "notes", "asyncio TaskGroup").hits[0]  # type: ignore[arg-type]
    whole = store.fetch(conn, "notes", hit.id)  # type: ignore[arg-type]
    assert whole.next_offset is None
    pages = []
    offset: int | None = 0
    while offset is not None:
        page = store.fetch(conn, "notes", hit.id, offset=offset, max_chars=10)  # type: ignore[arg-type]
        pages.append(page.text)
        offset = page.next_offset
    assert "".join(pages) == whole.text
    assert whole.previous is not None
    assert whole.next is not None
    with pytest.raises(InputError, match="no passage"):
        store.fetch(conn, "notes", "pnope")  # type: ignore[arg-type]


def test_metadata_of_a_document_and_of_the_source(planted: tuple[object, str]) -> None:
    conn, _ = planted
    meta = store.document_meta(conn, path="python-release-notes.md")  # type: ignore[arg-type]
    assert meta.version == "0.0-planted"
    assert meta.outline[0].section.startswith("PLANTED TEST DATA")
    by_passage = store.document_meta(conn, doc_id=meta.outline[1].passage)  # type: ignore[arg-type]
    assert by_passage.id == meta.id
    source = store.source_meta(conn, "notes")  # type: ignore[arg-type]
    assert source.documents == 3
    assert source.kinds == {"markdown": 2, "text": 1}
    assert source.last_index is not None
    with pytest.raises(InputError, match="no document"):
        store.document_meta(conn, path="nope.md")  # type: ignore[arg-type]


def test_two_indexers_of_one_file_at_once_add_each_document_once(tmp_path: Path) -> None:
    # two corpus servers started at once on one --db: the second reads what the index
    # holds under the write lock, after the first committed, and adds nothing twice
    import threading

    root = tmp_path / "docs"
    root.mkdir()
    for name in ("a", "b"):
        (root / f"{name}.md").write_text(f"# {name}\n\nthe {name} text\n")
    db = tmp_path / "i.sqlite"
    first, second = connect(db), connect(db)
    holds_lock, second_waits = threading.Event(), threading.Event()

    def on_first(sql: str) -> None:
        if sql.startswith("INSERT"):
            holds_lock.set()  # inside its transaction: it holds the write lock
        if sql == "COMMIT":
            assert second_waits.wait(30)  # commit once the second is at its BEGIN

    def on_second(sql: str) -> None:
        if sql.startswith("BEGIN"):
            second_waits.set()

    first.set_trace_callback(on_first)
    second.set_trace_callback(on_second)
    reports: dict[str, object] = {}

    def run(name: str, conn: object) -> None:
        try:
            reports[name] = index_folder(conn, root, source="s")  # type: ignore[arg-type]
        except Exception as error:
            reports[name] = error

    one = threading.Thread(target=run, args=("first", first))
    one.start()
    assert holds_lock.wait(30)
    two = threading.Thread(target=run, args=("second", second))
    two.start()
    one.join(60)
    two.join(60)
    assert getattr(reports["first"], "added", None) == 2, reports["first"]
    assert getattr(reports["second"], "unchanged", None) == 2, reports["second"]
    assert getattr(reports["second"], "added", None) == 0
