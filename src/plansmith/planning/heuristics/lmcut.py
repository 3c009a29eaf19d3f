"""LM-cut (Helmert & Domshlak 2009): the sum of the costs of disjunctive action
landmarks, found as cuts in the justification graph of hmax. Admissible, and
never below hmax.

The relaxed task has two artificial facts: one true in every state (the
precondition of operators without one) and the goal fact, added by a goal
operator of cost 0 whose preconditions are the goal facts. Each round:

1. hmax with a precondition choice function: an operator's *supporter* is a
   precondition of maximal hmax cost, the last one settled. Facts of equal cost
   are settled last in, first out (a bucket per cost for integer costs, as Fast
   Downward's bucket queue does; a heap with a push counter otherwise).
2. The goal zone: the goal fact, and backwards from it the supporters of the
   operators of remaining cost 0 that add a fact of the zone.
3. From the state's facts, forwards along supporters without entering the goal
   zone: the operators so triggered that add a fact of the zone form the cut
   (every relaxed plan uses one of them; each costs more than 0).
4. The value grows by the cheapest cut operator's cost, which every cut
   operator loses; hmax is then recomputed from scratch with the new costs.

Recomputing rather than updating hmax incrementally (Fast Downward's way) is
deliberate: an incremental update keeps an operator's old supporter on ties,
and on the shared depot and satellite tasks the supporters of a fresh
last-in-first-out exploration give much larger values (A* expansions on
depot/task03: 7 355, where the incremental version had not finished after
22 784; satellite/task05: 28 against 682; Fast Downward: 7 543 and 50),
which more than pays for the extra passes. ``cuts``
returns the landmarks themselves, for tests.

The rounds stop when the goal fact costs 0. A state whose goal is unreachable
even with delete effects ignored is a dead end (``inf``). Negative
preconditions and negative goals are ignored, as in the other relaxations.
Operators with the same preconditions share one hmax *group*, which offers
its operators' effects merged by cost; operators that add nothing new are
dropped, and of those with equal preconditions and add effects only the
cheapest is kept. Where some group adds many facts at once (a lift that can go
to every floor), hmax applies the offers as bit masks (``_hmax_masks``), with
the same settling order and so the same values.

Where every operator of a group adds one fact (the lift's moves, most of the
shared tasks' groups), the group keeps a mask of the facts it offers at each
cost: a cut moves an operator's fact from its old cost to the new one instead
of rebuilding the group's offers, and the cut itself is read off the mask of
the group's facts in the goal zone (``fact_op``). Same values and cuts; on
miconic/task30 an evaluation fell from about 34 ms to 10 ms.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush

from plansmith.model import Number
from plansmith.planning._task import GroundTask, bits, relaxed_operators
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["lmcut"]

Offers = tuple[tuple[float, tuple[int, ...], int], ...]
"""What a group adds when it fires: for each cost among its operators, the facts
they add (ascending) and their mask."""

_MANY = 8  # from groups that add this many facts at once on, hmax applies offers as masks


def lmcut(task: GroundTask) -> Evaluator[int]:
    """The LM-cut evaluator of ``task`` (no preferred operators)."""
    relaxed = _Relaxed(task)

    def evaluate(state: int) -> Evaluation:
        return relaxed.value(state), ()

    return evaluate


class _Relaxed:
    """The relaxed operators of a task, grouped by precondition, with the indexes
    the rounds need. ``value`` keeps its per-state costs in local lists."""

    def __init__(
        self, task: GroundTask, *, masks: bool | None = None, by_fact: bool = True
    ) -> None:
        """``masks``: force the mask (or the fact-list) hmax pass, else chosen by
        the widest group; ``by_fact=False`` turns the one-fact-per-operator
        shortcut off (both for tests: the values do not change)."""
        n = len(task.facts)
        self.always, self.goal = n, n + 1  # the artificial facts
        cheapest: dict[tuple[tuple[int, ...], tuple[int, ...]], Number] = {}
        for op in relaxed_operators(task, partition=True)[0]:
            pre = op.pre_facts or (n,)
            eff = tuple(f for f in op.add_facts if not op.pre & (1 << f))
            if eff and op.cost < cheapest.get((pre, eff), math.inf):
                cheapest[(pre, eff)] = op.cost
        cheapest[(tuple(bits(task.goal)) or (n,), (n + 1,))] = 0
        members: dict[tuple[int, ...], list[int]] = {}
        self.effects: list[tuple[int, ...]] = []
        base: list[Number] = []
        for (pre, eff), cost in cheapest.items():
            members.setdefault(pre, []).append(len(self.effects))
            self.effects.append(eff)
            base.append(cost)
        self.integer = all(isinstance(c, int) for c in base)
        # ints stay ints (the bucket queue indexes by cost), other costs become floats
        self.base_cost: list[float] = base if self.integer else [float(c) for c in base]
        self.group_pre = list(members)
        self.group_ops = [tuple(ops) for ops in members.values()]
        # each operator of a group with the mask of its effects, and the union
        self.group_masks = [
            tuple((o, sum(1 << e for e in self.effects[o])) for o in ops) for ops in self.group_ops
        ]
        self.op_mask = [sum(1 << e for e in eff) for eff in self.effects]
        self.group_union = [
            sum(1 << e for e in set().union(*(self.effects[o] for o in ops)))
            for ops in self.group_ops
        ]
        self.group_of = [0] * len(self.effects)
        pre_of: list[list[int]] = [[] for _ in range(n + 2)]
        self.achievers: list[list[int]] = [[] for _ in range(n + 2)]
        for q, pre in enumerate(self.group_pre):
            for o in self.group_ops[q]:
                self.group_of[o] = q
            for f in pre:
                pre_of[f].append(q)
        self.pre_of = [tuple(x) for x in pre_of]
        for o, eff in enumerate(self.effects):
            for f in eff:
                self.achievers[f].append(o)
        self.group_size = [len(pre) for pre in self.group_pre]
        # what a group offers when it fires: (cost, effects) for each cost of its
        # operators; kept per state and rebuilt for the groups a cut touches
        # offers of many facts are cheaper to apply as masks (same values); then
        # the offers need no lists of facts
        widest = max((len(eff) for eff in self.effects), default=0)
        for ops in self.group_ops:
            widest = max(widest, len(set().union(*(self.effects[o] for o in ops))))
        self.use_masks = widest >= _MANY if masks is None else masks
        self.base_offers = [self._offers(ops, self.base_cost) for ops in self.group_ops]
        # groups whose operators each add one fact (distinct facts, as equal
        # operators were merged): ``fact_op`` maps each fact to its operator, and
        # ``base_by_cost`` gives the mask of the facts offered at each cost, which a
        # cut updates in place of rebuilding the group's offers
        self.fact_op: list[dict[int, int] | None] = [
            {self.effects[o][0]: o for o in ops}
            if by_fact and all(len(self.effects[o]) == 1 for o in ops)
            else None
            for ops in self.group_ops
        ]
        self.base_by_cost: list[dict[float, int] | None] = [
            None if fo is None else self._by_cost(self.group_ops[q], self.base_cost)
            for q, fo in enumerate(self.fact_op)
        ]
        self.everything = (1 << (n + 2)) - 1
        self._inf = [math.inf] * (n + 2)

    def _by_cost(self, ops: tuple[int, ...], cost: list[float]) -> dict[float, int]:
        """The mask of the facts group ``ops`` adds at each cost."""
        by_cost: dict[float, int] = {}
        masks = self.op_mask
        for o in ops:
            by_cost[cost[o]] = by_cost.get(cost[o], 0) | masks[o]
        return by_cost

    def _offers(self, ops: tuple[int, ...], cost: list[float]) -> Offers:
        """What group ``ops`` adds when it fires, under ``cost``."""
        return self._as_offers(self._by_cost(ops, cost))

    def _as_offers(self, by_cost: dict[float, int]) -> Offers:
        if self.use_masks:  # the mask explorations read the masks only
            return tuple((w, (), mask) for w, mask in sorted(by_cost.items()))
        return tuple((w, tuple(bits(mask)), mask) for w, mask in sorted(by_cost.items()))

    def value(self, state: int) -> float:
        """The sum of the cuts' costs (``inf``: the goal is unreachable)."""
        return sum(c for _, c in self.cuts(state))

    def cuts(self, state: int) -> list[tuple[list[int], float]]:
        """The landmarks found for ``state`` (relaxed operator ids) with the cost
        each was charged; ``[([], inf)]`` if the goal is unreachable."""
        goal = self.goal
        start = [*bits(state), self.always]
        cost = self.base_cost[:]
        offers = self.base_offers[:]
        if not self.integer:
            explore = self._hmax_heap
        else:
            explore = self._hmax_masks if self.use_masks else self._hmax
        h, supp, supported = explore(start, offers)
        if h[goal] == math.inf:
            return [([], math.inf)]
        found: list[tuple[list[int], float]] = []
        group_of, group_ops, make = self.group_of, self.group_ops, self._offers
        fact_op, base_by_cost, op_mask = self.fact_op, self.base_by_cost, self.op_mask
        by_cost: dict[int, dict[float, int]] = {}  # this state's, for the groups touched
        while h[goal] > 0:
            cut = self._cut(start, cost, supp, supported)
            m = min(cost[o] for o in cut)
            found.append((cut, m))
            touched = set()
            for o in cut:
                q = group_of[o]
                touched.add(q)
                old = cost[o]
                cost[o] = old - m
                if fact_op[q] is not None:  # move the operator's fact to its new cost
                    d = by_cost.get(q)
                    if d is None:
                        d = by_cost[q] = dict(base_by_cost[q] or ())
                    bit = op_mask[o]
                    rest = d[old] ^ bit
                    if rest:
                        d[old] = rest
                    else:
                        del d[old]
                    d[old - m] = d.get(old - m, 0) | bit
            for q in touched:
                d = by_cost.get(q)
                offers[q] = make(group_ops[q], cost) if d is None else self._as_offers(d)
            h, supp, supported = explore(start, offers)
        return found

    def _hmax(
        self, start: list[int], offers: list[Offers]
    ) -> tuple[list[float], list[int], list[list[int]]]:
        """hmax with integer costs, from scratch: a bucket per cost, last in first
        out within a bucket. A group's supporter is the precondition that fired it
        (settled last, so of maximal cost); ``supported[f]``: the groups ``f`` supports."""
        pre_of = self.pre_of
        h = self._inf[:]
        supp = [-1] * len(offers)
        supported: list[list[int]] = [[] for _ in pre_of]
        count = self.group_size[:]
        for f in start:
            h[f] = 0
        buckets: list[list[int]] = [start[::-1]]
        size = 1
        c = 0
        while c < size:
            bucket = buckets[c]
            while bucket:
                f = bucket.pop()
                if h[f] < c:
                    continue
                for q in pre_of[f]:
                    k = count[q] - 1
                    count[q] = k
                    if k:
                        continue
                    supp[q] = f
                    supported[f].append(q)
                    for w, effs, _ in offers[q]:
                        oc = c + int(w)  # integer costs: an int already
                        for e in effs:
                            if oc < h[e]:
                                h[e] = oc
                                if oc >= size:
                                    buckets.extend([] for _ in range(size, oc + 1))
                                    size = oc + 1
                                buckets[oc].append(e)
            c += 1
        return h, supp, supported

    def _hmax_masks(
        self, start: list[int], offers: list[Offers]
    ) -> tuple[list[float], list[int], list[list[int]]]:
        """:meth:`_hmax` with each offer applied as a mask, for tasks whose groups
        add many facts (a lift that can go to every floor): the same values.

        ``closed`` is the mask of the facts of cost at most the current one, and
        ``pushed[k]`` of the facts pushed at cost ``k``: an offer at cost ``oc``
        only improves the facts in neither ``closed`` nor ``pushed[c + 1..oc]``."""
        pre_of = self.pre_of
        h = self._inf[:]
        supp = [-1] * len(offers)
        supported: list[list[int]] = [[] for _ in pre_of]
        count = self.group_size[:]
        closed = 0
        for f in start:
            h[f] = 0
            closed |= 1 << f
        buckets: list[list[int]] = [start[::-1]]
        pushed = [closed]
        size = 1
        c = 0
        while c < size:
            bucket = buckets[c]
            closed |= pushed[c]
            while bucket:
                f = bucket.pop()
                if h[f] < c:
                    continue
                for q in pre_of[f]:
                    k = count[q] - 1
                    count[q] = k
                    if k:
                        continue
                    supp[q] = f
                    supported[f].append(q)
                    for w, _, mask in offers[q]:
                        if not w:
                            new = mask & ~closed
                            if not new:
                                continue
                            closed |= new
                            oc = c
                            target = bucket
                        else:
                            oc = c + int(w)
                            if oc >= size:
                                buckets.extend([] for _ in range(size, oc + 1))
                                pushed.extend(0 for _ in range(size, oc + 1))
                                size = oc + 1
                            done = closed
                            for j in range(c + 1, oc + 1):
                                done |= pushed[j]
                            new = mask & ~done
                            if not new:
                                continue
                            pushed[oc] |= new
                            target = buckets[oc]
                        while new:
                            low = new & -new
                            e = low.bit_length() - 1
                            h[e] = oc
                            target.append(e)
                            new ^= low
            c += 1
        return h, supp, supported

    def _hmax_heap(
        self, start: list[int], offers: list[Offers]
    ) -> tuple[list[float], list[int], list[list[int]]]:
        """:meth:`_hmax` for other costs: a heap, last in first out among equal costs."""
        pre_of = self.pre_of
        h = self._inf[:]
        supp = [-1] * len(offers)
        supported: list[list[int]] = [[] for _ in pre_of]
        count = self.group_size[:]
        heap: list[tuple[float, int, int]] = []
        seq = 0
        for f in start:
            h[f] = 0
            seq -= 1
            heap.append((0, seq, f))
        heap.sort()
        while heap:
            c, _, f = heappop(heap)
            if c > h[f]:
                continue
            for q in pre_of[f]:
                k = count[q] - 1
                count[q] = k
                if k:
                    continue
                supp[q] = f
                supported[f].append(q)
                for w, effs, _ in offers[q]:
                    oc = c + w
                    for e in effs:
                        if oc < h[e]:
                            h[e] = oc
                            seq -= 1
                            heappush(heap, (oc, seq, e))
        return h, supp, supported

    def _cut(
        self, start: list[int], cost: list[float], supp: list[int], supported: list[list[int]]
    ) -> list[int]:
        """Steps 2 and 3: the operators from the facts reached before the goal
        zone into the goal zone, along the supporters."""
        group_of, group_masks, group_union = self.group_of, self.group_masks, self.group_union
        fact_op = self.fact_op
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
                union = group_union[q]
                hit = union & zone
                if hit and (single := fact_op[q]) is not None:
                    # one fact per operator: those adding a zone fact form the cut,
                    # the others reach their facts
                    while hit:
                        low = hit & -hit
                        cut.append(single[low.bit_length() - 1])
                        hit ^= low
                    new = union & ~zone & unseen
                    if new:
                        unseen ^= new
                        while new:
                            low = new & -new
                            stack.append(low.bit_length() - 1)
                            new ^= low
                    continue
                if hit:
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
                    continue
                new = union & unseen
                if new:
                    unseen ^= new
                    while new:
                        low = new & -new
                        stack.append(low.bit_length() - 1)
                        new ^= low
        return cut
