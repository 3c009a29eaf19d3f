"""Pick the sentences of a text that best answer a query (pure).

Used by the corpus server (a hit's key points) and by the report writer (the
quotes it cites). A quote is always an exact part of the text: a whole
sentence, or its first ``max_chars`` characters cut at a word boundary.
"""

from __future__ import annotations

import re

from plansmith.domains.research.verify import sentences

__all__ = ["MAX_QUOTE", "best_sentences", "matches", "score"]

MAX_QUOTE = 280
MIN_WORDS = 3  # shorter "sentences" (headings, signatures) are quoted only when nothing else is
_WORD = re.compile(r"[^\W_]+")


def matches(word: str, term: str) -> bool:
    """``word`` is ``term``, or one starts the other (both of four letters or more), or
    they share their first five letters."""
    if word == term:
        return True
    if len(word) >= 5 and len(term) >= 5 and word[:5] == term[:5]:
        return True  # "secure" and "security", as the index's stemmer sees them
    short = min(len(word), len(term))
    return short >= 4 and (word.startswith(term) or term.startswith(word))


def score(sentence: str, terms: list[str]) -> int:
    """How many of ``terms`` the sentence holds."""
    words = {w.lower() for w in _WORD.findall(sentence)}
    return sum(1 for t in terms if any(matches(w, t) for w in words))


def best_sentences(
    text: str, terms: list[str], n: int = 3, *, max_chars: int = MAX_QUOTE
) -> list[tuple[int, int]]:
    """Spans of the ``n`` sentences holding the most ``terms``, in reading order.

    Sentences of fewer than three words (headings) are left out when longer ones
    exist; among sentences holding as many terms, prose (ending in a stop) wins
    over signatures and titles. With no sentence holding any term, the first
    sentence alone.
    """
    scored: list[tuple[int, int, int]] = []
    for s, e in sentences(text):
        held = 2 * score(text[s:e], terms)
        prose = text[e - 1] in ".!?:"
        scored.append((held + prose if held else 0, s, e))
    full = [x for x in scored if len(text[x[1] : x[2]].split()) >= MIN_WORDS]
    best = sorted(full or scored, key=lambda x: (-x[0], x[1]))[:n]
    if best and best[0][0] == 0:
        best = best[:1]
    out: list[tuple[int, int]] = []
    for _, s, e in sorted(best, key=lambda x: x[1]):
        if e - s > max_chars:
            cut = text.rfind(" ", s, s + max_chars)
            e = cut if cut > s else s + max_chars
        out.append((s, e))
    return out
