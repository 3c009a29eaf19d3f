"""The compiled build's C extension (``_native.c``, built by hatch_build.py), or None.

A plain install has no extension: the planner runs its Python code, which gives
the same plans byte for byte (tests/test_build.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import TypeVar

__all__ = ["native", "native_available", "offsets"]

T = TypeVar("T")


def _load() -> ModuleType | None:
    try:
        from plansmith.planning import _native  # noqa: PLC0415
    except ImportError:  # a plain install: pure Python
        return None
    return _native


native = _load()
"""The extension module (``Hff``, ``Successors``), or None."""


def native_available() -> bool:
    """Whether this install has the C extension (the compiled build)."""
    return native is not None


def offsets(lists: Iterable[Iterable[T]]) -> tuple[list[int], list[T]]:
    """``lists`` flattened as the extension takes them: the items in order, and each
    list's start in them (one more start at the end: the number of items)."""
    starts: list[int] = []
    items: list[T] = []
    for part in lists:
        starts.append(len(items))
        items.extend(part)
    starts.append(len(items))
    return starts, items
