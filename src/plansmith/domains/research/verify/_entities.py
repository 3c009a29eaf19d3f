"""Named entities and sentences of evidence text.

An entity is what a claim is about: a code name (``math.isqrt``,
``asyncio.TaskGroup``, anything in backticks, ``snake_case`` or ``name()``), or
a capitalised name with an optional version or number (``SQLite``, ``Python 3.10``,
``Protocol 4``).
:func:`entity_key` normalises a mention so that two sources' mentions of the
same thing compare equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plansmith.domains.research.verify._words import word_set

__all__ = ["Entity", "find_entities", "entity_key", "sentences"]

_CODE_PATTERNS = (
    re.compile(r"`(?P<name>[^`\n]{1,80})`"),
    re.compile(r"(?<![\w./-])(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?(?![\w/-])"),
    re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\(\)"),
    re.compile(r"(?<![\w.])(?P<name>[a-z][a-z0-9]*_[a-z0-9_]+)\b"),
    re.compile(r"(?<![\w.])(?P<name>[a-z]+[0-9]+[a-z0-9]*)\b"),
    re.compile(r"(?<![\w.-])(?P<name>[a-z_][a-z0-9_]*)(?=\s+(?:module|package)\b)"),
)
_PROPER = re.compile(
    r"(?<![\w.])(?P<name>[A-Z][\w+#-]*(?:\s+[A-Z][\w+#-]*){0,3}(?:\s+\d+(?:\.\d+){0,3})?)(?![\w.]\w)"
)
# capitalised words that start sentences or name value kinds, not entities
_NOT_NAMES = word_set(
    """a an the this that these those it its in on at of for from to by with as and or but if
    when while where which what who how why is are was were be been new changed deprecated
    added removed see note notes warning default defaults since version versions release
    released date also however there then thus each every all any some no not return returns
    raise raises use using example examples changes available last updated you we they our
    your january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""
)
_SUFFIXES = (" module", " function", " class", " method", " package", " library")


@dataclass(frozen=True, slots=True)
class Entity:
    """A mention of a named thing: its text, its normalised key, and its span."""

    text: str
    key: str
    start: int
    end: int


def entity_key(text: str) -> str:
    """The comparison key of a mention: lower case, without backticks, ``()``, a leading
    "the", a trailing "module"/"function"/..., or a ``module-`` anchor prefix."""
    key = " ".join(text.strip().strip("`").split()).lower()
    key = key.removeprefix("module-").removeprefix("the ")
    if key.endswith("()"):
        key = key[:-2]
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            key = key[: -len(suffix)]
    return key.strip(" .,:;")


def _trim_proper(text: str, start: int) -> tuple[str, int] | None:
    words = text.split()
    while words and words[0].lower().strip("-") in _NOT_NAMES:
        skipped = text.index(words[0]) + len(words[0])
        start += skipped
        text = text[skipped:]
        skipped_ws = len(text) - len(text.lstrip())
        start += skipped_ws
        text = text.lstrip()
        words = text.split()
    if not words or words[0][0].isdigit():
        return None
    return text, start


def find_entities(text: str, *, exclude: tuple[tuple[int, int], ...] = ()) -> list[Entity]:
    """Entity mentions in ``text``, not overlapping ``exclude`` spans (the values)."""
    taken: list[tuple[int, int]] = list(exclude)
    found: list[Entity] = []

    def free(s: int, e: int) -> bool:
        return not any(s < te and ts < e for ts, te in taken)

    for pattern in _CODE_PATTERNS:
        for m in pattern.finditer(text):
            name = m.group("name")
            if all(len(part) < 2 for part in name.split(".")) or not free(*m.span()):
                continue
            taken.append(m.span())
            found.append(Entity(name, entity_key(name), m.start(), m.end()))
    for m in _PROPER.finditer(text):
        trimmed = _trim_proper(m.group("name"), m.start())
        if trimmed is None:
            continue
        name, start = trimmed
        end = start + len(name)
        if not free(start, end):
            continue
        taken.append((start, end))
        found.append(Entity(name, entity_key(name), start, end))
    return sorted(found, key=lambda e: e.start)


_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"')\]\u201d\u2019]*[ \t]+(?=[\"'(\[\u201c\u2018]?[A-Z0-9`*_])|\s*\n\s*"
)
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.")


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text``: each ``text[s:e]`` is a sentence, stripped.

    A line break always ends a sentence: the corpus joins blocks (paragraphs,
    list items, headings) with one, and the readers join a paragraph's lines.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        before = text[max(0, m.start() - 8) : m.start()].lower()
        if before.endswith(_ABBREVIATIONS) or re.search(r"\b[A-Z]\.$", text[: m.start()]):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        chunk = text[s:e]
        lead = len(chunk) - len(chunk.lstrip())
        trail = len(chunk) - len(chunk.rstrip())
        if e - trail > s + lead:
            out.append((s + lead, e - trail))
    return out
