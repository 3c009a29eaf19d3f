"""What each tool of the chaos server answers: pure functions of the arguments, so that the
suite knows every step's right output without a run to compare with.

The chaos server (``server.py``) and the suite (``bench/chaos.py``) both import this
module; it imports nothing but the standard library.
"""

from __future__ import annotations

import hashlib

__all__ = ["CHAINS", "JOINS", "combine", "fetch", "report", "transform"]

#: the objects of the chaos problem, one chain each (``problem.yaml``)
CHAINS = ("a", "b", "c", "d", "e", "f", "g", "h")
#: the pairs the first joins combine (``pair`` facts of ``problem.yaml``)
JOINS = (("a", "b"), ("c", "d"), ("e", "f"), ("g", "h"))


def _digest(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def fetch(name: str) -> str:
    """``fetch(x).data``."""
    return f"data-{name}-{_digest('fetch', name)}"


def transform(name: str, data: str) -> str:
    """``transform(x).value``, from ``fetch(x).data``."""
    return _digest("transform", name, data)


def combine(name: str, left: str, right: str) -> str:
    """``combine(x, y).digest``, from ``transform(x).value`` and ``transform(y).value``."""
    return _digest("combine", name, left, right)


def report(name: str, parts: list[str]) -> str:
    """``report().summary``, from the digests of every join."""
    return _digest("report", name, *parts)
