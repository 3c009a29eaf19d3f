"""A cache of source answers shared by research runs: identical queries are asked once.

The key is what the source is asked (source, query, ``also`` words, how many
hits, how many passages read). A query asked while the same one is in flight
waits for it (single flight), so twenty runs asking the same thing at once
cost the source one search. A failed or cut-short lookup is not kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["QueryKey", "QueryCache"]

QueryKey = tuple[str | int | tuple[str, ...], ...]  # source, query, also, limit, depth[, skip]


@dataclass(slots=True)
class _Slot:
    done: anyio.Event = field(default_factory=anyio.Event)
    value: dict[str, Any] | None = None


class QueryCache:
    """``await cache.get(key, compute)``: the cached answer, or ``compute()``'s (kept)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self.max_entries = max_entries
        self._slots: dict[QueryKey, _Slot] = {}
        self.hits = 0
        self.misses = 0

    def peek(self, key: QueryKey) -> dict[str, Any] | None:
        slot = self._slots.get(key)
        return slot.value if slot is not None and slot.done.is_set() else None

    async def get(
        self, key: QueryKey, compute: Callable[[], Awaitable[dict[str, Any] | None]]
    ) -> tuple[dict[str, Any] | None, bool]:
        """The answer for ``key`` and whether it came from the cache (or a query in
        flight). ``compute`` returns None when its answer must not be kept."""
        while True:
            slot = self._slots.get(key)
            if slot is None:
                break
            await slot.done.wait()
            if slot.value is not None:
                self.hits += 1
                return slot.value, True
            if self._slots.get(key) is slot:  # failed: the next caller computes again
                del self._slots[key]
        slot = _Slot()
        self._slots[key] = slot
        self.misses += 1
        try:
            slot.value = await compute()
        finally:
            if slot.value is None and self._slots.get(key) is slot:
                del self._slots[key]
            slot.done.set()
        if len(self._slots) > self.max_entries:
            oldest = next(iter(self._slots))
            if oldest != key:
                del self._slots[oldest]
        return slot.value, False
