"""The step graph of a plan: indices, a deterministic topological order, reachability.

Steps are numbered by their position in ``plan.steps``; reachability sets are
Python ints used as bitsets (bit ``i`` is step ``i``), so "is ``a`` before
``b``" is one shift and "some step between ``a`` and ``b`` adds ``p``" is one
``&`` of three masks. Nothing here depends on set iteration order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from plansmith.model import Plan

__all__ = ["StepGraph", "step_graph", "bits"]


@dataclass(frozen=True, slots=True)
class StepGraph:
    """``preds[i]``: the known direct predecessors of step ``i`` (sorted, no duplicates).

    ``order`` is a topological order that keeps the plan's own order wherever it
    can, or None when the ``after`` edges form a cycle (then ``cycle`` lists the
    step indices of one cycle, each depending on the one before it).
    ``ancestors[i]`` and ``descendants[i]`` are bitsets (empty if there is a cycle).
    """

    preds: tuple[tuple[int, ...], ...]
    order: tuple[int, ...] | None
    cycle: tuple[int, ...]
    ancestors: tuple[int, ...]
    descendants: tuple[int, ...]


def bits(mask: int) -> Iterator[int]:
    """The indices set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def step_graph(plan: Plan) -> StepGraph:
    """The graph of ``plan``'s ``after`` edges; unknown ids are left out (checked elsewhere)."""
    index: dict[str, int] = {}
    for i, s in enumerate(plan.steps):
        index.setdefault(s.id, i)
    preds = tuple(tuple(sorted({index[a] for a in s.after if a in index})) for s in plan.steps)
    order = _topological(preds)
    if len(order) < len(preds):
        return StepGraph(preds, None, _cycle(preds, set(order)), (), ())
    anc = [0] * len(preds)
    for j in order:
        mask = 0
        for p in preds[j]:
            mask |= anc[p] | (1 << p)
        anc[j] = mask
    desc = [0] * len(preds)
    for j in reversed(order):
        for p in preds[j]:
            desc[p] |= desc[j] | (1 << j)
    return StepGraph(preds, tuple(order), (), tuple(anc), tuple(desc))


def _topological(preds: Sequence[Sequence[int]]) -> list[int]:
    """Kahn's algorithm, always taking the ready step that comes first in the plan.

    Shorter than the plan when the edges form a cycle: the steps on or after a
    cycle are never ready.
    """
    n = len(preds)
    succs: list[list[int]] = [[] for _ in range(n)]
    missing = [len(p) for p in preds]
    for j, ps in enumerate(preds):
        for p in ps:
            succs[p].append(j)
    ready = [j for j in range(n) if missing[j] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        j = heapq.heappop(ready)
        order.append(j)
        for k in succs[j]:
            missing[k] -= 1
            if missing[k] == 0:
                heapq.heappush(ready, k)
    return order


def _cycle(preds: Sequence[Sequence[int]], done: set[int]) -> tuple[int, ...]:
    """One cycle among the steps not in ``done``, each depending on the one before it,
    starting from its first step in the plan.

    Every such step has a predecessor that is not done either, so walking back
    along predecessors must come round to a step already seen.
    """
    current = min(j for j in range(len(preds)) if j not in done)
    path: list[int] = []
    seen: dict[int, int] = {}
    while current not in seen:
        seen[current] = len(path)
        path.append(current)
        current = min(p for p in preds[current] if p not in done)
    loop = list(reversed(path[seen[current] :]))
    first = loop.index(min(loop))
    return tuple(loop[first:] + loop[:first])
