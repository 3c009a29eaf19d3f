"""Terms of a query or a question: lower-case words and numbers, common words dropped."""

from __future__ import annotations

import re

from plansmith.domains.research.verify._words import word_set

__all__ = ["STOPWORDS", "terms", "stem", "similar"]

_TERM = re.compile(r"[^\W_]+")
STOPWORDS = word_set(
    """a an and are as at be by can could do does for from how i in into is it its of on or
    should that the their this to vs versus we what when where which who why will with would
    you your compare between than there these those about our us"""
)


def terms(text: str) -> list[str]:
    """The words of ``text``: lower case, common words dropped, in order, each once."""
    words = [w.lower() for w in _TERM.findall(text)]
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))


def stem(word: str) -> str:
    """A crude stem for overlap tests: the first five letters of a word."""
    return word[:5]


def similar(a: list[str], b: list[str]) -> float:
    """Jaccard similarity of two term lists, on stems."""
    sa, sb = {stem(w) for w in a}, {stem(w) for w in b}
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
