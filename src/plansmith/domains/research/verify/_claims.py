"""Claims: (entity, attribute, value) triples read from evidence, sentence by sentence.

A value (a version, a date, a quantity) becomes a claim when the words just
before it say what it is: "new in version 3.8" (``added_in``), "released on
October 4, 2021" (``released``), "defaults to 5 seconds" (``default time``; an
amount needs words saying what it measures: "default", "timeout", "at most",
"size"...; a count likewise: "supports", "up to", "handles"...).
The entity is the nearest mention before those words, else the first one
between them and the value ("the latest version of Frobnicate is 2.5"), else a
lower-case name opening the sentence before "was", "is"... ("tomllib was added
in 3.11"), else the passage's subject when it is a definition (``math.isqrt``,
``module-json``; not a section slug such as ``api-and-feature-removals``), else
the first mention after the value, else a lower-case name opening the sentence. Values
with no such words are not claims: "Python 3.10" names a thing, it says
nothing about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from plansmith.domains.research.verify._entities import entity_key, find_entities, sentences
from plansmith.domains.research.verify._values import (
    DateValue,
    Quantity,
    VersionValue,
    find_counts,
    find_dates,
    find_quantities,
    find_versions,
)
from plansmith.domains.research.verify._words import word_set

__all__ = ["Evidence", "Claim", "ClaimKind", "MULTI_VALUED", "Span", "claims_of", "span_lines"]

ClaimKind = Literal["version", "date", "quantity", "count"]
Value = DateValue | VersionValue | Quantity

#: attributes a thing may have several values of (each value is its own claim)
MULTI_VALUED = ("changed_in",)

_VERSION_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), a)
    for p, a in (
        (r"\bnew in\b|\badded (?:in|to)\b|\bintroduced in\b|\bavailable (?:since|in)\b"
         r"|\bsince\b|\bfirst (?:appeared|available) in\b|\bappeared in\b", "added_in"),
        (r"\bchanged in\b", "changed_in"),
        (r"\bdeprecated\b", "deprecated_in"),
        (r"\bremoved\b|\bdropped in\b", "removed_in"),
        (r"\brequires?\b|\brequired\b|\bminimum\b|\bat least\b", "requires"),
        (r"\blatest\b|\bcurrent\b|\bnewest\b", "latest_version"),
    )
)  # fmt: skip
_DATE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), a)
    for p, a in (
        (r"\breleased\b|\brelease(?! notes)\b|\bcame out\b|\bshipped\b", "released"),
        (r"\bend[- ]of[- ]life\b|\beol\b|\bsupport(?:ed)? (?:ends|until)\b"
         r"|\b(?:security )?(?:fixes|support) until\b|\bretired\b", "end_of_life"),
        (r"\blast updated\b|\bupdated\b|\bpublished\b|\blast modified\b", "updated"),
        (r"\bdeprecated\b", "deprecated_on"),
    )
)  # fmt: skip
_COUNT_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), a)
    for p, a in (
        (r"\bsupports?\b|\bsupported\b|\bhandles?\b|\ballows?\b|\bspawns?\b"
         r"|\bstarts?\b|\bruns?\b|\bscales? to\b|\bserves?\b", ""),
        (r"\bup to\b|\bat most\b|\bmaximum(?: of)?\b|\bmax\b|\blimit(?:ed)? (?:to|of)\b"
         r"|\bcapped at\b|\bno more than\b", "max"),
        (r"\bat least\b|\bminimum(?: of)?\b|\bno fewer than\b", "min"),
        (r"\bdefaults? (?:to|is)\b|\bby default\b", "default"),
    )
)  # fmt: skip
_WINDOW = 48
_STOP_SUBJECTS = word_set(
    """a an the it this that these those they we you he she there here it's its one each
    all some any new added changed deprecated removed since default defaults version"""
)
_DEFAULT = re.compile(r"\bdefault", re.IGNORECASE)
_MEASURE = re.compile(
    r"\bdefault|\btimeout\b|\binterval\b|\bdelay\b|\blimit(?:ed)?\b|\bmax(?:imum)?\b"
    r"|\bmin(?:imum)?\b|\bat (?:most|least)\b|\bup to\b|\bno more than\b|\bsize\b"
    r"|\bcapacity\b|\bcaches?\b|\baccepts?\b|\blasts?\b|\bexpires? (?:after|in)\b"
    r"|\bbuffers?\b|\bretention\b|\bceiling\b|\bquota\b",
    re.IGNORECASE,
)
_QUALIFIER = re.compile(r"\s*:\s*(?P<q>[^.;]{1,120})")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "and",
        "or",
        "with",
        "its",
        "their",
        "this",
        "that",
    ]
)


Span = tuple[int, int, int]  # (offset in the text, line_start, line_end) of one block


def span_lines(spans: tuple[Span, ...], start: int, end: int) -> tuple[int, int] | None:
    """The lines covered by characters ``start:end`` of a text whose blocks are ``spans``."""
    first = last = None
    for i, (offset, ls, le) in enumerate(spans):
        stop = spans[i + 1][0] if i + 1 < len(spans) else 1 << 62
        if offset < end and start < stop:
            first = ls if first is None else first
            last = le
    return None if first is None or last is None else (first, last)


@dataclass(frozen=True, slots=True)
class Evidence:
    """A passage (or part of one) that a source returned, with where it is.

    ``text`` is the exact passage text (or an exact part of it), so that every
    sentence a claim quotes can be found in the source again. ``subject`` is what
    the passage is about (its definition anchor or section title); ``published``
    is the document's date (ISO), used by the freshness check. ``spans`` (when
    known) say which lines each block of ``text`` came from. ``source_type`` is the kind
    of document (see :mod:`plansmith.domains.research._source_types`).
    """

    source: str
    path: str
    passage: str
    text: str
    line_start: int = 0
    line_end: int = 0
    subject: str = ""
    published: str | None = None
    title: str = ""
    section: str = ""
    subquestion: str = ""
    spans: tuple[Span, ...] = ()
    source_type: str = ""  # official docs, changelog, notes, blog... ("": not known)

    def lines_of(self, quote: str) -> tuple[int, int]:
        """The lines of ``quote`` (a part of ``text``): from the spans, else the evidence's."""
        at = self.text.find(quote)
        if at >= 0 and self.spans:
            found = span_lines(self.spans, at, at + len(quote))
            if found is not None:
                return found
        return self.line_start, self.line_end


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement: ``entity`` (a key) has ``attribute`` = ``value``, says ``evidence``."""

    entity: str
    attribute: str
    kind: ClaimKind
    value: Value
    sentence: str
    evidence: Evidence
    named: bool = True  # the sentence names the entity (False: the passage's subject)

    @property
    def value_text(self) -> str:
        v = self.value
        return v.iso if isinstance(v, DateValue) else v.text

    def compatible(self, other: Claim) -> bool:
        a, b = self.value, other.value
        if isinstance(a, DateValue) and isinstance(b, DateValue):
            return a.compatible(b)
        if isinstance(a, VersionValue) and isinstance(b, VersionValue):
            return a.compatible(b)
        if isinstance(a, Quantity) and isinstance(b, Quantity):
            return a.compatible(b)
        return False


def _keyword(window: str, table: tuple[tuple[re.Pattern[str], str], ...]) -> tuple[str, int] | None:
    """The attribute whose words come last in ``window``, and where they start."""
    best: tuple[str, int] | None = None
    for pattern, attribute in table:
        for m in pattern.finditer(window):
            if best is None or m.start() > best[1]:
                best = (attribute, m.start())
    return best


def _qualifier(sentence: str, end: int) -> str:
    m = _QUALIFIER.match(sentence, end)
    if not m:
        return ""
    words = [w for w in re.findall(r"[\w./]+", m.group("q").lower()) if w not in _STOP]
    return " ".join(words[:6])


def _values(sentence: str) -> list[tuple[ClaimKind, Value]]:
    found: list[tuple[ClaimKind, Value]] = [("date", d) for d in find_dates(sentence)]
    found += [("version", v) for v in find_versions(sentence)]
    found += [("quantity", q) for q in find_quantities(sentence)]
    found += [("count", c) for c in find_counts(sentence)]
    found.sort(key=lambda kv: (kv[1].start, kv[0] == "count"))
    kept: list[tuple[ClaimKind, Value]] = []
    for kind, value in found:  # a date wins over a version or quantity in the same words
        if kept and value.start < kept[-1][1].end:
            continue
        kept.append((kind, value))
    return kept


def _attribute(kind: ClaimKind, value: Value, window: str, sentence: str) -> tuple[str, int] | None:
    if kind == "quantity":  # an amount is a claim after words that say what it measures
        assert isinstance(value, Quantity)
        measure = _MEASURE.search(window)
        if measure is None:
            return None
        prefix = "default " if _DEFAULT.search(sentence) else ""
        return prefix + value.dimension, measure.start()
    if kind == "count":  # a count is a claim only after words that say what it measures
        assert isinstance(value, Quantity)
        hit = _keyword(window, _COUNT_WORDS)
        if hit is None:
            return None
        attribute, at = hit
        return f"{attribute} {value.dimension}".strip(), at
    hit = _keyword(window, _VERSION_WORDS if kind == "version" else _DATE_WORDS)
    if hit is None:
        return None
    attribute, at = hit
    generic = ("", "v", "version", "versions", "release")
    if (
        isinstance(value, VersionValue)
        and attribute == "requires"
        and value.prefix.lower() not in generic
    ):
        attribute = f"requires:{value.prefix.lower()}"
    if kind == "version" and attribute in ("added_in", "changed_in", "deprecated_in"):
        qualifier = _qualifier(sentence, value.end)
        if qualifier:
            attribute = f"{attribute}:{qualifier}"
    return attribute, at


_FIRST_WORD = re.compile(r"^[a-z_][a-z0-9_]*\b")
_SUBJECT_VERB = re.compile(r"\s+(?:was|is|were|are|has been|had been|got|became)\b")


def _subject_word(sentence: str, keyword_at: int, *, verb: bool = False) -> str:
    """A lower-case name that opens the sentence before the claim's words ("tomllib was
    added in 3.11"): the sentence's subject, when nothing else names the entity
    (``verb``: only when a verb such as "was" follows it)."""
    m = _FIRST_WORD.match(sentence)
    if m is None or m.end() > keyword_at or m.group(0) in _STOP_SUBJECTS:
        return ""
    if verb and not _SUBJECT_VERB.match(sentence, m.end()):
        return ""
    return m.group(0)


def _subject_hint(subject: str) -> str:
    """The passage's subject as an entity: a definition ("math.isqrt", "module-json",
    "len"), not a section title made an anchor ("api-and-feature-removals")."""
    if not subject or (("-" in subject or " " in subject) and not subject.startswith("module-")):
        return ""
    return entity_key(subject)


def claims_of(evidence: Evidence) -> list[Claim]:
    """Every claim in ``evidence.text``, in reading order."""
    out: list[Claim] = []
    hint = _subject_hint(evidence.subject)
    text = evidence.text
    for s, e in sentences(text):
        sentence = text[s:e]
        values = _values(sentence)
        pending: list[tuple[ClaimKind, Value, str, int]] = []
        previous_end = 0
        for kind, value in values:
            lo = max(previous_end, value.start - _WINDOW)
            window = sentence[lo : value.start]
            previous_end = value.end
            found = _attribute(kind, value, window, sentence)
            if found is not None:
                pending.append((kind, value, found[0], lo + found[1]))
        if not pending:
            continue
        spans = tuple((v.start, v.end) for _, v, _, _ in pending)
        entities = find_entities(sentence, exclude=spans)
        for kind, value, attribute, keyword_at in pending:
            before = [x for x in entities if x.end <= keyword_at]
            between = [x for x in entities if x.start >= keyword_at and x.end <= value.start]
            after = [x for x in entities if x.start >= value.end]
            named = True
            if before or between:
                key = (before[-1] if before else between[0]).key
            else:
                key = _subject_word(sentence, keyword_at, verb=True)
                if not key and hint:
                    key, named = hint, False
                key = key or (after[0].key if after else _subject_word(sentence, keyword_at))
            if key:
                out.append(Claim(key, attribute, kind, value, sentence, evidence, named))
    return out
