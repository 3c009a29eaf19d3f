"""The open list of greedy searches: a regular queue and a preferred-operator queue.

Each queue is a heap of *batches* ordered by ``(h, insertion counter)``: a
batch holds items pushed together with the same key (the successors of one
state in lazy search) and yields them in order, exactly as if each had been
pushed on its own, but at the cost of one heap operation per batch. :meth:`pop`
takes from the non-empty queue that has been used least (Fast Downward's
alternation open list); :meth:`boost` gives the preferred queue a head start
of ``amount`` pops, which greedy searches do whenever the best heuristic value
improves.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush
from typing import Generic, TypeVar

__all__ = ["Alternation"]

T = TypeVar("T")


class Alternation(Generic[T]):
    """A regular heap and, if ``preferred``, a preferred heap, used in turn."""

    __slots__ = ("_counter", "_heaps", "_priority")

    def __init__(self, *, preferred: bool) -> None:
        # entries: [h, counter, items, index of the next item]
        self._heaps: list[list[list[object]]] = [[], []] if preferred else [[]]
        self._priority = [0] * len(self._heaps)
        self._counter = 0

    def push(self, h: float, item: T, *, preferred: bool = False) -> None:
        """Insert ``item`` with key ``h``; preferred items go into both queues."""
        self.push_batch(h, (item,), (item,) if preferred else ())

    def push_batch(self, h: float, items: Sequence[T], preferred: Sequence[T] = ()) -> None:
        """Insert ``items`` in order with key ``h``; ``preferred`` (a subsequence of
        ``items``) also go into the preferred queue."""
        self._counter += 1
        if items:
            heappush(self._heaps[0], [h, self._counter, items, 0])
        if preferred and len(self._heaps) > 1:
            heappush(self._heaps[1], [h, self._counter, preferred, 0])

    def boost(self, amount: int) -> None:
        if len(self._heaps) > 1:
            self._priority[1] -= amount

    def __bool__(self) -> bool:
        return any(self._heaps)

    def pop(self) -> T:
        """The first item of the least used non-empty queue (IndexError if all are empty)."""
        heaps, priority = self._heaps, self._priority
        best = -1
        for i, heap in enumerate(heaps):
            if heap and (best < 0 or priority[i] < priority[best]):
                best = i
        if best < 0:
            raise IndexError("pop from an empty open list")
        priority[best] += 1
        heap = heaps[best]
        top = heap[0]
        items: Sequence[T] = top[2]  # type: ignore[assignment]
        index: int = top[3]  # type: ignore[assignment]
        if index + 1 == len(items):
            heappop(heap)
        else:
            top[3] = index + 1  # the key is unchanged: the heap stays ordered
        return items[index]
