"""Word lists written as one string (the lists of stop words and tags read better so)."""

from __future__ import annotations

__all__ = ["word_set"]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set."""
    return frozenset(text.split())
