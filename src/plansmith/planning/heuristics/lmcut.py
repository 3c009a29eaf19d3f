"""LM-cut (Helmert & Domshlak 2009): the sum of the costs of disjunctive action
landmarks, found as cuts in the justification graph of hmax. Admissible, and
never below hmax.

The relaxed task has two artificial facts: one true in every state (the
precondition of operators without one) and the goal fact, added by a goal
operator of cost 0 whose preconditions are the goal facts. Each round:

1. hmax with a precondition choice function: an operator's *supporter* is a
   precondition of maximal hmax cost (the last one settled).
2. The goal zone: the goal fact, and backwards from it the supporters of the
   operators of remaining cost 0 that add a fact of the zone.
3. From the state's facts, forwards along supporters without entering the goal
   zone: the operators so triggered that add a fact of the zone form the cut
   (every relaxed plan uses one of them; each costs more than 0).
4. The value grows by the cheapest cut operator's cost, which every cut
   operator loses; hmax is updated incrementally (costs only decrease).

The rounds stop when the goal fact costs 0. A state whose goal is unreachable
even with delete effects ignored is a dead end (``inf``). Negative
preconditions and negative goals are ignored, as in the other relaxations.
Operators with the same preconditions share one hmax *group*; operators that
add nothing new are dropped, and of those with equal preconditions and add
effects only the cheapest is kept.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush

from plansmith.model import Number
from plansmith.planning._task import GroundTask, bits
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["lmcut"]


def lmcut(task: GroundTask) -> Evaluator[int]:
    """The LM-cut evaluator of ``task`` (no preferred operators)."""
    relaxed = _Relaxed(task)

    def evaluate(state: int) -> Evaluation:
        return relaxed.value(state), ()

    return evaluate


class _Relaxed:
    """The relaxed operators of a task, grouped by precondition, with the indexes
    the rounds need. ``value`` keeps its per-state costs in local lists."""

    def __init__(self, task: GroundTask) -> None:
        n = len(task.facts)
        self.always, self.goal = n, n + 1  # the artificial facts
        cheapest: dict[tuple[tuple[int, ...], tuple[int, ...]], Number] = {}
        for op in task.operators:
            pre = op.pre_facts or (n,)
            eff = tuple(f for f in op.add_facts if not op.pre & (1 << f))
            if eff and op.cost < cheapest.get((pre, eff), math.inf):
                cheapest[(pre, eff)] = op.cost
        cheapest[(tuple(bits(task.goal)) or (n,), (n + 1,))] = 0
        members: dict[tuple[int, ...], list[int]] = {}
        self.effects: list[tuple[int, ...]] = []
        self.base_cost: list[float] = []
        for (pre, eff), cost in cheapest.items():
            members.setdefault(pre, []).append(len(self.effects))
            self.effects.append(eff)
            self.base_cost.append(float(cost))
        self.group_pre = list(members)
        self.group_ops = [tuple(ops) for ops in members.values()]
        # each operator of a group with the mask of its effects
        self.group_masks = [
            tuple((o, sum(1 << e for e in self.effects[o])) for o in ops) for ops in self.group_ops
        ]
        self.group_of = [0] * len(self.effects)
        self.pre_of: list[list[int]] = [[] for _ in range(n + 2)]
        self.achievers: list[list[int]] = [[] for _ in range(n + 2)]
        for q, pre in enumerate(self.group_pre):
            for o in self.group_ops[q]:
                self.group_of[o] = q
            for f in pre:
                self.pre_of[f].append(q)
        for o, eff in enumerate(self.effects):
            for f in eff:
                self.achievers[f].append(o)
        self.group_size = [len(pre) for pre in self.group_pre]
        self.everything = (1 << (n + 2)) - 1

    def value(self, state: int) -> float:
        """The sum of the cuts' costs (``inf``: the goal is unreachable)."""
        goal = self.goal
        start = [*bits(state), self.always]
        cost = self.base_cost[:]
        h, supp, supp_cost, supported = self._hmax(start, cost)
        if h[goal] == math.inf:
            return math.inf
        total = 0.0
        while h[goal] > 0:
            cut = self._cut(start, cost, supp, supported)
            m = min(cost[o] for o in cut)
            total += m
            for o in cut:
                cost[o] -= m
            self._lower(cut, cost, h=h, supp=supp, supp_cost=supp_cost, supported=supported)
        return total

    def _hmax(
        self, start: list[int], cost: list[float]
    ) -> tuple[list[float], list[int], list[float], list[list[int]]]:
        """Step 1: hmax from scratch; each group's supporter and its cost, and the
        groups each fact supports."""
        group_ops, effects, pre_of = self.group_ops, self.effects, self.pre_of
        h = [math.inf] * len(pre_of)
        supp = [-1] * len(group_ops)
        supp_cost = [math.inf] * len(group_ops)
        supported: list[list[int]] = [[] for _ in pre_of]
        count = self.group_size[:]
        heap: list[tuple[float, int]] = []
        for f in start:
            h[f] = 0
            heap.append((0, f))
        while heap:
            c, f = heappop(heap)
            if c > h[f]:
                continue
            for q in pre_of[f]:
                k = count[q] - 1
                count[q] = k
                if k:
                    continue
                supp[q] = f
                supp_cost[q] = c
                supported[f].append(q)
                for o in group_ops[q]:
                    oc = c + cost[o]
                    for e in effects[o]:
                        if oc < h[e]:
                            h[e] = oc
                            heappush(heap, (oc, e))
        return h, supp, supp_cost, supported

    def _cut(
        self, start: list[int], cost: list[float], supp: list[int], supported: list[list[int]]
    ) -> list[int]:
        """Steps 2 and 3: the operators from the facts reached before the goal
        zone into the goal zone, along the supporters."""
        group_of, group_masks = self.group_of, self.group_masks
        zone = 1 << self.goal  # the goal zone, as a mask of facts
        stack = [self.goal]
        while stack:
            f = stack.pop()
            for o in self.achievers[f]:
                if not cost[o]:
                    s = supp[group_of[o]]
                    if s >= 0 and not zone >> s & 1:
                        zone |= 1 << s
                        stack.append(s)
        unseen = self.everything & ~zone  # neither in the goal zone nor reached before it
        for f in start:
            unseen &= ~(1 << f)
        stack = start[:]
        cut: list[int] = []
        while stack:
            for q in supported[stack.pop()]:
                for o, mask in group_masks[q]:
                    if mask & zone:
                        cut.append(o)
                        continue
                    new = mask & unseen
                    if new:
                        unseen ^= new
                        while new:
                            low = new & -new
                            stack.append(low.bit_length() - 1)
                            new ^= low
        return cut

    def _lower(
        self,
        cut: list[int],
        cost: list[float],
        *,
        h: list[float],
        supp: list[int],
        supp_cost: list[float],
        supported: list[list[int]],
    ) -> None:
        """Step 4: hmax after the cut operators got cheaper (costs only go down,
        so only the decreases are propagated, as Fast Downward does)."""
        group_of, group_ops, group_pre, effects = (
            self.group_of,
            self.group_ops,
            self.group_pre,
            self.effects,
        )
        heap: list[tuple[float, int]] = []
        for o in cut:
            oc = supp_cost[group_of[o]] + cost[o]
            for e in effects[o]:
                if oc < h[e]:
                    h[e] = oc
                    heappush(heap, (oc, e))
        while heap:
            c, f = heappop(heap)
            if c > h[f]:
                continue
            for q in supported[f][:]:
                old = supp_cost[q]
                if old <= c:
                    continue
                best, bc = f, c
                for p in group_pre[q]:
                    if h[p] > bc:
                        best, bc = p, h[p]
                supp_cost[q] = bc
                if best != f:
                    supp[q] = best
                    supported[f].remove(q)
                    supported[best].append(q)
                if bc < old:
                    for o in group_ops[q]:
                        oc = bc + cost[o]
                        for e in effects[o]:
                            if oc < h[e]:
                                h[e] = oc
                                heappush(heap, (oc, e))
