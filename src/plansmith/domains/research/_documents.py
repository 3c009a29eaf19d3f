"""A parsed document: its title, date, version, and its text as located blocks.

Every reader (HTML, Markdown, plain text) turns a file into blocks: a heading,
a paragraph, a list item, a definition, a code block. Each block keeps the
line range it came from in the file and the anchor it sits under (the id of
its section or definition), so a passage built from blocks can be cited as
``path:L1-L2`` and found again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "ParsedDoc", "KINDS", "kind_of"]

#: file suffix -> reader
KINDS: dict[str, str] = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
}


def kind_of(path: str | Path) -> str | None:
    """The reader for ``path`` (``html``, ``markdown``, ``text``), or None to skip it."""
    return KINDS.get(Path(path).suffix.lower())


@dataclass(frozen=True, slots=True)
class Block:
    """A run of text from ``line_start`` to ``line_end`` (1-based, inclusive).

    ``level`` is 1-6 for a heading and 0 otherwise; ``anchor`` is the id of the
    section or definition the block belongs to ("" when there is none).
    """

    text: str
    line_start: int
    line_end: int
    level: int = 0
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class ParsedDoc:
    """A document as the index sees it. ``date`` is ISO (``YYYY[-MM[-DD]]``) or None."""

    kind: str
    title: str
    blocks: tuple[Block, ...]
    date: str | None = None
    version: str | None = None
