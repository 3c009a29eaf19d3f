"""HTML, Markdown and plain text become located blocks and stable passages."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.domains.research import find_python_docs
from plansmith.domains.research._parse_html import parse_html
from plansmith.domains.research._parse_text import parse_markdown, parse_text
from plansmith.domains.research._passages import passages_of

PAGE = """<!DOCTYPE html>
<html><head><title>spam — Eggs and ham &#8212; Python 3.11.2 documentation</title>
<script>var x = "not text";</script></head>
<body>
<div class="related" role="navigation"><a href="x">Navigation</a></div>
<div class="body" role="main">
<section id="module-spam">
<h1>spam — Eggs and ham<a class="headerlink" href="#x">¶</a></h1>
<p>The spam module
cooks eggs.</p>
<dl class="py function">
<dt class="sig" id="spam.fry">spam.fry(egg)</dt>
<dd><p>Fry an egg.</p>
<div class="versionadded"><p><span>New in version 3.9.</span></p></div>
</dd></dl>
<p>After the function.</p>
</section>
</div>
<div class="footer">Last updated on Feb 15, 2023.</div>
</body></html>
"""


def test_html_keeps_main_content_with_lines_anchors_title_version_and_date() -> None:
    doc = parse_html(PAGE)
    assert doc.title == "spam — Eggs and ham"
    assert doc.version == "3.11.2"
    assert doc.date == "2023-02-15"
    texts = [(b.text, b.line_start, b.line_end, b.level, b.anchor) for b in doc.blocks]
    assert texts == [
        ("spam — Eggs and ham", 8, 8, 1, "module-spam"),
        ("The spam module cooks eggs.", 9, 10, 0, "module-spam"),
        ("spam.fry(egg)", 12, 12, 0, "spam.fry"),
        ("Fry an egg.", 13, 13, 0, "spam.fry"),
        ("New in version 3.9.", 14, 14, 0, "spam.fry"),
        ("After the function.", 16, 16, 0, "module-spam"),
    ]


def test_each_definition_is_its_own_passage_and_headings_join_the_next() -> None:
    passages = passages_of("library/spam.html", parse_html(PAGE))
    assert [(p.anchor, p.line_start, p.line_end) for p in passages] == [
        ("module-spam", 8, 10),
        ("spam.fry", 12, 14),
        ("module-spam", 16, 16),
    ]
    assert passages[1].text == "spam.fry(egg)\nFry an egg.\nNew in version 3.9."
    assert passages[1].spans == ((0, 12, 12), (14, 13, 13), (26, 14, 14))


def test_passage_ids_are_stable_and_survive_edits_elsewhere() -> None:
    before = passages_of("a.html", parse_html(PAGE))
    again = passages_of("a.html", parse_html(PAGE))
    edited = passages_of("a.html", parse_html(PAGE.replace("After the function.", "Changed.")))
    assert [p.id for p in before] == [p.id for p in again]
    assert [p.id for p in before] == [p.id for p in edited]
    assert (
        len({p.id for p in passages_of("b.html", parse_html(PAGE))} & {p.id for p in before}) == 0
    )


MARKDOWN = """---
title: "Notes"
date: 2024-05-01
version: 1.2
---
# Notes

First paragraph
goes on.

## Details

- item one
- item two

```python
x = 1
```
"""


def test_markdown_front_matter_headings_items_and_code_keep_their_lines() -> None:
    doc = parse_markdown(MARKDOWN)
    assert (doc.title, doc.date, doc.version) == ("Notes", "2024-05-01", "1.2")
    blocks = [(b.text, b.line_start, b.line_end, b.anchor) for b in doc.blocks]
    assert blocks == [
        ("Notes", 6, 6, "notes"),
        ("First paragraph goes on.", 8, 9, "notes"),
        ("Details", 11, 11, "details"),
        ("item one", 13, 13, "details"),
        ("item two", 14, 14, "details"),
        ("x = 1", 17, 17, "details"),
    ]


def test_plain_text_uses_its_first_line_as_title_and_a_date_line() -> None:
    doc = parse_text("Release notes\nDate: 2024-05-01\n\nBody text\nmore.\n")
    assert (doc.title, doc.date) == ("Release notes", "2024-05-01")
    assert [(b.text, b.line_start, b.line_end) for b in doc.blocks][-1] == ("Body text more.", 4, 5)


@given(
    st.lists(
        st.lists(st.from_regex(r"[A-Za-z][a-z]{0,8}", fullmatch=True), min_size=1, max_size=5).map(
            " ".join
        ),
        min_size=1,
        max_size=8,
    ),
    st.lists(st.integers(1, 3), min_size=8, max_size=8),
)
def test_every_block_is_found_on_the_lines_it_claims(paras: list[str], gaps: list[int]) -> None:
    lines: list[str] = []
    for para, gap in zip(paras, gaps, strict=False):
        lines += [""] * gap
        lines += para.split(" ", 1)  # a paragraph of one or two lines
    text = "\n".join(lines) + "\n"
    for parse in (parse_text, parse_markdown):
        for block in parse(text).blocks:
            found = " ".join(" ".join(lines[block.line_start - 1 : block.line_end]).split())
            assert found == block.text


def test_a_real_corpus_page_cites_lines_that_hold_its_words() -> None:
    root = find_python_docs()
    if root is None:
        pytest.skip("python3-doc is not installed (apt-get install -y python3-doc)")
    path = Path(root) / "library" / "math.html"
    raw = [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in path.read_text().splitlines()]
    doc = parse_html(path.read_text(encoding="utf-8"))
    assert doc.version == "3.11.2"
    isqrt = [b for b in doc.blocks if b.anchor == "math.isqrt"]
    assert isqrt[-1].text == "New in version 3.8."
    assert "New in version 3.8." in raw[isqrt[-1].line_start - 1]
    for block in doc.blocks:
        first_word = block.text.split()[0]
        assert first_word in " ".join(raw[block.line_start - 1 : block.line_end])
