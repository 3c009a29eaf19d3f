"""The open list of greedy searches: a regular queue, a preferred-operator queue
and a novelty queue.

Each queue is a heap of *batches* ordered by ``(h, insertion counter)``: a
batch holds items pushed together with the same key (the successors of one
state in lazy search) and yields them in order, exactly as if each had been
pushed on its own, but at the cost of one heap operation per batch. :meth:`pop`
takes from the non-empty queue that has been used least (Fast Downward's
alternation open list); :meth:`boost` gives the preferred queue a head start
of ``amount`` pops, which greedy searches do whenever the best heuristic value
improves. The novelty queue holds the items the search found novel (see
:class:`Novelty`); it is never boosted, so it gets a fair share of the pops
however well the heuristic does, which is what pulls a search off a plateau
where the heuristic's ties all point the same wrong way.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from heapq import heappop, heappush
from typing import Generic, TypeVar, cast

__all__ = ["Alternation", "Novelty"]

T = TypeVar("T")


class Novelty:
    """Width-1 novelty per heuristic value: a state is novel for ``h`` if it holds
    a fact that no state seen before with the same ``h`` held. States and facts
    are bitsets (bit i: fact i)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[float, int] = {}

    def novel(self, h: float, states: Sequence[int]) -> list[int]:
        """The positions in ``states`` of the novel ones, each recorded as seen
        once judged, in order."""
        known = self._seen.get(h, 0)
        out: list[int] = []
        for i, facts in enumerate(states):
            if facts & ~known:
                known |= facts
                out.append(i)
        self._seen[h] = known
        return out


class Alternation(Generic[T]):
    """A regular heap and, if asked for, a preferred heap and a novelty heap,
    used in turn."""

    __slots__ = ("_counter", "_heaps", "_novel", "_preferred", "_priority")

    def __init__(self, *, preferred: bool, novel: bool = False) -> None:
        # entries: [h, counter, items, index of the next item]
        self._heaps: list[list[list[object]]] = [[]]
        self._preferred = self._novel = 0  # 0: no such heap
        if preferred:
            self._preferred = len(self._heaps)
            self._heaps.append([])
        if novel:
            self._novel = len(self._heaps)
            self._heaps.append([])
        self._priority = [0] * len(self._heaps)
        self._counter = 0

    def push(self, h: float, item: T, *, preferred: bool = False, novel: bool = False) -> None:
        """Insert ``item`` with key ``h``; preferred and novel items also go into
        their queues."""
        self.push_batch(h, (item,), (item,) if preferred else (), (item,) if novel else ())

    def push_batch(
        self,
        h: float,
        items: Sequence[T],
        preferred: Sequence[T] = (),
        novel: Sequence[T] = (),
    ) -> None:
        """Insert ``items`` in order with key ``h``; ``preferred`` and ``novel``
        (subsequences of ``items``) also go into the preferred and novelty queues."""
        self._counter += 1
        if items:
            heappush(self._heaps[0], [h, self._counter, items, 0])
        if preferred and self._preferred:
            heappush(self._heaps[self._preferred], [h, self._counter, preferred, 0])
        if novel and self._novel:
            heappush(self._heaps[self._novel], [h, self._counter, novel, 0])

    def boost(self, amount: int) -> None:
        """Give the preferred queue ``amount`` extra turns (nothing without one)."""
        if self._preferred:
            self._priority[self._preferred] -= amount

    def __bool__(self) -> bool:
        return any(self._heaps)

    def pop(self) -> T:
        """The first item of the least used non-empty queue (IndexError if all are empty)."""
        item = self._pop()
        if item is _EMPTY:
            raise IndexError("pop from an empty open list")
        return item  # type: ignore[return-value]

    def pop_unseen(self, seen: Container[object]) -> T | None:
        """:meth:`pop` until an item (a tuple) whose first element is not in ``seen``;
        None if the queues run empty first. Each item popped counts as a turn, as with
        :meth:`pop`: this is the loop of a lazy search that skips closed states, in one
        call."""
        while True:
            item = self._pop()
            if item is _EMPTY:
                return None
            if cast("tuple[object, ...]", item)[0] not in seen:
                return item  # type: ignore[return-value]

    def _pop(self) -> object:
        heaps, priority = self._heaps, self._priority
        best = -1
        for i, heap in enumerate(heaps):
            if heap and (best < 0 or priority[i] < priority[best]):
                best = i
        if best < 0:
            return _EMPTY
        priority[best] += 1
        heap = heaps[best]
        top = heap[0]
        items: Sequence[object] = top[2]  # type: ignore[assignment]
        index: int = top[3]  # type: ignore[assignment]
        if index + 1 == len(items):
            heappop(heap)
        else:
            top[3] = index + 1  # the key is unchanged: the heap stays ordered
        return items[index]


_EMPTY = object()  # what _pop returns when every queue is empty
