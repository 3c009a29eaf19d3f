"""Markdown and plain text to located blocks.

Markdown: an optional front matter (``---`` lines holding ``key: value``; the
keys ``title``, ``date`` and ``version`` are read), ATX headings (``#`` to
``######``; the anchor is the heading's slug, as GitHub makes it), fenced code
blocks kept whole, list items and paragraphs. Plain text: paragraphs split by
blank lines; the first line is the title. In both, ``Date:`` / ``Version:``
lines near the top and a "Last updated on" line fill in what front matter
does not say.
"""

from __future__ import annotations

import re

from plansmith.domains.research._documents import Block, ParsedDoc
from plansmith.domains.research.verify import parse_date

__all__ = ["parse_markdown", "parse_text", "slug"]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_FIELD = re.compile(r"^\s*(title|date|version|updated|last updated)\s*:\s*(.+?)\s*$", re.I)
_LAST_UPDATED = re.compile(r"(?:Last updated|Last modified|Updated) on ([^.]{4,40}\d)")


def slug(text: str) -> str:
    """The anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = re.sub(r"[^\w\- ]", "", text.lower()).strip()
    return re.sub(r"\s", "-", kept)


def _fields(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        m = _FIELD.match(line)
        if m:
            key = m.group(1).lower()
            key = "date" if key in ("updated", "last updated") else key
            out.setdefault(key, m.group(2).strip().strip("\"'"))
    return out


def _front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            return _fields(lines[1:i]), i + 1
    return {}, 0


def _finish(kind: str, blocks: list[Block], meta: dict[str, str], fallback: str) -> ParsedDoc:
    title = meta.get("title") or next((b.text for b in blocks if b.level == 1), "") or fallback
    date = parse_date(meta.get("date"))
    if date is None:
        pool = " ".join(b.text for b in blocks[:5] + blocks[-5:])
        m = _LAST_UPDATED.search(pool)
        date = parse_date(m.group(1)) if m else None
    return ParsedDoc(kind, title, tuple(blocks), date.iso if date else None, meta.get("version"))


def parse_markdown(text: str, fallback_title: str = "") -> ParsedDoc:
    """Blocks, title, date and version of a Markdown document."""
    lines = text.splitlines()
    meta, first = _front_matter(lines)
    blocks: list[Block] = []
    anchor = ""
    para: list[str] = []
    start = 0

    def flush(end: int) -> None:
        nonlocal para
        if para:
            para[0] = _ITEM.sub("", para[0], count=1)
        joined = " ".join(" ".join(p.split()) for p in para).strip()
        if joined:
            blocks.append(Block(joined, start, end, 0, anchor))
        para = []

    i = first
    while i < len(lines):
        line, number = lines[i], i + 1
        fence = _FENCE.match(line)
        if fence:
            flush(number - 1)
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(fence.group(1)):
                j += 1
            body = "\n".join(lines[i + 1 : j]).strip("\n")
            if body.strip():
                blocks.append(Block(body, i + 2, j, 0, anchor))
            i = j + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            flush(number - 1)
            anchor = slug(heading.group(2))
            blocks.append(Block(heading.group(2), number, number, len(heading.group(1)), anchor))
        elif not line.strip():
            flush(number - 1)
        else:
            if _ITEM.match(line) and para:
                flush(number - 1)
            if not para:
                start = number
            para.append(line)
        i += 1
    flush(len(lines))
    if "date" not in meta or "version" not in meta:
        meta = _fields(lines[first : first + 12]) | meta
    return _finish("markdown", blocks, meta, fallback_title)


def parse_text(text: str, fallback_title: str = "") -> ParsedDoc:
    """Paragraph blocks of a plain-text document; its first line is the title."""
    lines = text.splitlines()
    blocks: list[Block] = []
    para: list[str] = []
    start = 0
    for number, line in enumerate([*lines, ""], 1):
        if line.strip():
            if not para:
                start = number
            para.append(line)
        elif para:
            blocks.append(Block(" ".join(" ".join(para).split()), start, number - 1))
            para = []
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    meta = _fields(lines[:12])
    if first and len(first) <= 120:
        meta.setdefault("title", first)
    return _finish("text", blocks, meta, fallback_title)
