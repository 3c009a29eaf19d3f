"""HTML to located blocks, with the standard library's ``html.parser``.

Only the main content counts: when the page marks it (``<main>``, or an element
with ``role="main"`` as Sphinx writes it), text outside it is dropped; scripts,
styles, navigation, headers, footers and sidebars are always dropped. Block
elements (paragraphs, list items, definition terms, headings, ``pre``, table
cells) end a block. A ``<section id>`` or a definition term ``<dt id>`` sets
the anchor of the blocks inside it, so each documented function or class is its
own unit. The title comes from ``<title>`` (a trailing "— X.Y documentation"
gives the version); the date from a ``<meta>`` date, or a "Last updated on"
line (in the footer too).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from html.parser import HTMLParser

from plansmith.domains.research._documents import Block, ParsedDoc
from plansmith.domains.research.verify import parse_date
from plansmith.domains.research.verify._words import word_set

__all__ = ["parse_html"]

_BLOCK_TAGS = word_set(
    """address article aside blockquote body caption dd details dialog div dl dt fieldset
    figcaption figure form h1 h2 h3 h4 h5 h6 hr li main ol p pre section summary table tbody
    td tfoot th thead tr ul br"""
)
_SKIP_TAGS = frozenset(
    ["script", "style", "noscript", "template", "svg", "nav", "header", "footer", "button", "head"]
)
_SKIP_CLASSES = frozenset(
    [
        "sphinxsidebar",
        "related",
        "footer",
        "headerlink",
        "breadcrumbs",
        "navigation",
        "toctree-wrapper",
    ]
)
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
_DATE_META = word_set(
    """date dcterms.date dc.date dcterms.modified article:published_time
    article:modified_time citation_publication_date last-modified"""
)
_VERSION_META = frozenset(["version", "dcterms.hasversion", "software-version"])
_LAST_UPDATED = re.compile(r"(?:Last updated|Last modified|Updated) on ([^.]{4,40}\d)")
_TITLE_VERSION = re.compile(r"(\d+(?:\.\d+){1,3})\s+documentation\s*$", re.IGNORECASE)


@dataclass(slots=True)
class _Open:
    tag: str
    skip: bool = False
    main: bool = False
    anchor: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[_Open] = []
        self.blocks: list[tuple[Block, bool]] = []  # (block, inside main)
        self.parts: list[str] = []
        self.first = 0
        self.last = 0
        self.heading = 0
        self.heading_anchor = ""
        self.pre = 0
        self.title: list[str] = []
        self.in_title = False
        self.meta: dict[str, str] = {}
        self.aside: deque[str] = deque(maxlen=200)  # the tail: footers come last
        self.saw_main = False

    def _skipping(self) -> bool:
        return any(o.skip for o in self.stack)

    def _anchor(self) -> str:
        for o in reversed(self.stack):
            if o.anchor:
                return o.anchor
        return self.heading_anchor

    def _in_main(self) -> bool:
        return any(o.main for o in self.stack)

    def flush(self) -> None:
        raw = "".join(self.parts)
        self.parts = []
        text = raw.replace("\u00b6", "")
        text = text.strip("\n") if self.pre else " ".join(text.split())
        if text.strip():
            block = Block(text, self.first, self.last, self.heading, self._anchor())
            self.blocks.append((block, self._in_main()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "meta":
            key = (a.get("name") or a.get("property") or a.get("http-equiv") or "").lower()
            if key and a.get("content"):
                self.meta.setdefault(key, a["content"])
        if tag == "title":
            self.in_title = True
        if tag in _BLOCK_TAGS:
            self.flush()
        if tag in _VOID:
            return
        classes = set(a.get("class", "").split())
        entry = _Open(tag)
        entry.skip = tag in _SKIP_TAGS or bool(classes & _SKIP_CLASSES)
        entry.skip = entry.skip or a.get("role") == "navigation"
        entry.main = tag == "main" or a.get("role") == "main"
        self.saw_main = self.saw_main or entry.main
        ident = a.get("id", "")
        if ident and (tag in ("section", "article") or (tag == "div" and "section" in classes)):
            entry.anchor = ident
        if tag == "dt" and ident:
            for o in reversed(self.stack):  # the definition list item holds the anchor
                if o.tag == "dl":
                    o.anchor = ident
                    break
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = int(tag[1])
            if ident:
                self.heading_anchor = ident
        if tag == "pre":
            self.pre += 1
        self.stack.append(entry)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _BLOCK_TAGS:
            self.flush()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = 0
        if tag == "pre" and self.pre:
            self.pre -= 1
        for i in range(len(self.stack) - 1, max(-1, len(self.stack) - 64), -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self._skipping():
            self.aside.append(data)
            return
        stripped = data.strip()
        if not stripped:
            if self.parts:
                self.parts.append(data)
            return
        line, _ = self.getpos()
        lead = data.index(stripped[0])
        start = line + data.count("\n", 0, lead)
        end = line + data.count("\n", 0, data.rindex(stripped[-1]))
        if not "".join(self.parts).strip():
            self.first = start
        self.last = end
        self.parts.append(data)


def _title_and_version(raw: str) -> tuple[str, str | None]:
    title = " ".join(raw.split())
    parts = [p.strip() for p in re.split(r"\s[\u2014|]\s", title)]
    version = None
    if len(parts) > 1 and "documentation" in parts[-1].lower():
        m = _TITLE_VERSION.search(parts[-1])
        version = m.group(1) if m else None
        title = " \u2014 ".join(parts[:-1])
    return title, version


def parse_html(text: str, fallback_title: str = "") -> ParsedDoc:
    """Blocks, title, date and version of an HTML page (malformed HTML is read as it comes)."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    reader.flush()
    blocks = tuple(b for b, main in reader.blocks if main or not reader.saw_main)
    title, version = _title_and_version("".join(reader.title))
    if not title:
        heads = [b.text for b in blocks if b.level]
        title = heads[0] if heads else fallback_title
    for key in _VERSION_META:
        version = version or reader.meta.get(key)
    date = None
    for key in _DATE_META:
        found = parse_date(reader.meta.get(key))
        if found is not None:
            date = found.iso
            break
    if date is None:
        pool = " ".join(b.text for b in blocks[-40:]) + " " + " ".join(reader.aside)
        m = _LAST_UPDATED.search(" ".join(pool.split()))
        found = parse_date(m.group(1)) if m else None
        date = found.iso if found else None
    return ParsedDoc("html", title, blocks, date, version)
