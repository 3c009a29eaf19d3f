"""Passages: the units the corpus index searches, fetches and cites.

Blocks are grouped by section (the heading path) and anchor (the definition
or section id), and each group is cut into windows of at most ``max_chars`` at
block boundaries. A passage keeps the line range of its blocks and, per block,
where the block starts in the passage text and which lines it covers
(``spans``), so that a sentence inside it can be cited to its own lines.

Passage ids are stable: a hash of the document's path, the section path, the
anchor and the window's number within that group. Re-indexing an unchanged
document gives the same ids, and editing one section leaves the ids of the
others as they were.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from plansmith.domains.research._documents import Block, ParsedDoc
from plansmith.domains.research.verify import Span, span_lines

__all__ = ["Passage", "passages_of", "doc_id_of", "lines_of"]

MAX_CHARS = 1500


@dataclass(frozen=True, slots=True)
class Passage:
    """A window of a document: its id, section path, anchor, lines and text."""

    id: str
    ordinal: int
    section: str
    anchor: str
    line_start: int
    line_end: int
    text: str
    spans: tuple[Span, ...]


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).hexdigest()


def doc_id_of(relpath: str) -> str:
    """The stable id of the document at ``relpath`` (relative to the source's root)."""
    return "d" + _digest(relpath)


def lines_of(spans: tuple[Span, ...], start: int, end: int) -> tuple[int, int]:
    """The lines covered by characters ``start:end`` of a passage with ``spans``."""
    found = span_lines(spans, start, end)
    if found is None:
        return (spans[0][1], spans[-1][2]) if spans else (0, 0)
    return found


def _windows(blocks: list[Block], max_chars: int) -> list[list[Block]]:
    out: list[list[Block]] = [[]]
    size = 0
    for b in blocks:
        if out[-1] and size + len(b.text) + 1 > max_chars:
            out.append([])
            size = 0
        out[-1].append(b)
        size += len(b.text) + 1
    return [w for w in out if w]


def _attach_headings(
    groups: list[tuple[str, str, list[Block]]],
) -> list[tuple[str, str, list[Block]]]:
    """A group that is only headings joins the group after it (a heading followed by
    definitions or by a subheading is not a passage of its own)."""
    out: list[tuple[str, str, list[Block]]] = []
    carry: list[Block] = []
    for i, (section, anchor, blocks) in enumerate(groups):
        blocks = carry + blocks
        carry = []
        if all(b.level for b in blocks) and i + 1 < len(groups):
            carry = blocks
            continue
        out.append((section, anchor, blocks))
    return out


def passages_of(relpath: str, doc: ParsedDoc, *, max_chars: int = MAX_CHARS) -> list[Passage]:
    """The passages of ``doc`` (found at ``relpath``), in reading order."""
    groups: list[tuple[str, str, list[Block]]] = []
    headings: list[tuple[int, str]] = []
    for block in doc.blocks:
        if block.level:
            while headings and headings[-1][0] >= block.level:
                headings.pop()
            headings.append((block.level, block.text))
        section = " > ".join(h for _, h in headings)
        if block.level or not groups or groups[-1][:2] != (section, block.anchor):
            groups.append((section, block.anchor, []))
        groups[-1][2].append(block)
    groups = _attach_headings(groups)
    seen: Counter[tuple[str, str]] = Counter()
    out: list[Passage] = []
    for section, anchor, blocks in groups:
        occurrence = seen[(section, anchor)]
        seen[(section, anchor)] += 1
        for k, window in enumerate(_windows(blocks, max_chars)):
            spans: list[Span] = []
            texts: list[str] = []
            offset = 0
            for b in window:
                spans.append((offset, b.line_start, b.line_end))
                texts.append(b.text)
                offset += len(b.text) + 1
            pid = "p" + _digest(relpath, section, anchor, str(occurrence), str(k))
            out.append(
                Passage(
                    id=pid,
                    ordinal=len(out),
                    section=section,
                    anchor=anchor,
                    line_start=min(b.line_start for b in window),
                    line_end=max(b.line_end for b in window),
                    text="\n".join(texts),
                    spans=tuple(spans),
                )
            )
    return out
