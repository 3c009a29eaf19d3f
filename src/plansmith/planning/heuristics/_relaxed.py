"""The relaxed exploration behind hmax, hadd and hFF (delete effects ignored).

Operators with the same preconditions and cost are merged into one *group*
(in many tasks most operators share their preconditions once static facts are
pruned, e.g. all ``turn_to(s, ?to, d)`` of a satellite). Each group keeps a
count of its unsatisfied preconditions; a fact, when its cost becomes final,
decrements the counts of the groups that need it, and a group whose count
reaches zero offers the add effects of its operators. Groups with a single
precondition need no count: they fire as soon as that fact is settled.
Facts are settled in order of cost: a bucket queue (a FIFO per cost) for
integer costs, a heap otherwise. The exploration stops as soon as every goal
fact is settled. Negative preconditions are ignored.

A group costs its operators' cost plus the *sum* (hadd) or the *max* (hmax)
of its preconditions' costs. ``supporter[f]`` is the operator that gave ``f``
its cost (-1 for facts of the state and facts never reached); among
operators of equal cost, the first one (by id) supports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from heapq import heappop, heappush
from typing import cast

from plansmith.model import Number
from plansmith.planning._task import GroundTask, bits, relaxed_operators
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["Relaxation", "Exploration", "goal_cost"]

Exploration = tuple[Sequence[float], list[int], bool]
"""Fact costs, fact supporters, and whether every goal fact was reached. A fact
not reached costs ``math.inf``, or, where every cost is an integer,
:data:`UNREACHED`."""

UNREACHED = 1 << 60
"""The cost of a fact not reached in an exploration of integer costs (a larger
number than any sum of costs, and a native int of the compiled build)."""

Effects = tuple[tuple[int, int], ...]  # (fact, operator) pairs, one per fact


class Relaxation:
    """The operators of a task as precondition counters over fact numbers."""

    def __init__(self, task: GroundTask) -> None:
        ops, self.origin = relaxed_operators(task)
        n = len(task.facts)
        self.pres = [op.pre_facts for op in ops]
        self.costs = [op.cost for op in ops]
        self.neg_masks = [op.neg for op in ops]
        self.goals = bits(task.goal)
        self.is_goal = [False] * n
        for g in self.goals:
            self.is_goal[g] = True
        self.integer = all(isinstance(c, int) for c in self.costs)

        members: dict[tuple[tuple[int, ...], Number], list[int]] = {}
        for o, op in enumerate(ops):
            members.setdefault((op.pre_facts, op.cost), []).append(o)
        # free: groups without preconditions; direct[f]: groups whose only
        # precondition is f; counted[f]: ids of the other groups that need f.
        self.free: list[tuple[Number, Effects]] = []
        self.direct: list[list[tuple[Number, Effects]]] = [[] for _ in range(n)]
        counted: list[list[int]] = [[] for _ in range(n)]
        self.group_cost: list[Number] = []
        self.group_effects: list[Effects] = []
        self.group_size: list[int] = []
        for (pre, cost), group in members.items():
            effects: dict[int, int] = {}
            for o in group:
                for g in ops[o].add_facts:
                    effects.setdefault(g, o)
            entry = (cost, tuple(effects.items()))
            if not pre:
                self.free.append(entry)
            elif len(pre) == 1:
                self.direct[pre[0]].append(entry)
            else:
                for f in pre:
                    counted[f].append(len(self.group_cost))
                self.group_cost.append(cost)
                self.group_effects.append(entry[1])
                self.group_size.append(len(pre))
        self.counted = [tuple(x) for x in counted]
        self._inf = [math.inf] * n
        self._unreached = [UNREACHED] * n
        self._none = [-1] * n
        # hadd keeps, per group, the sum of its settled preconditions' costs and
        # the number still unsatisfied in one int: sum << shift | count.
        self._shift = max(self.group_size, default=1).bit_length()
        self._low = (1 << self._shift) - 1

    def explore(self, state: int, *, additive: bool) -> Exploration:
        """hadd (``additive``) or hmax costs of every fact settled before the goal."""
        if not self.integer:
            return self._heap(state, additive)
        if additive:
            return self._buckets_add(state)
        return self._buckets_max(state)

    def _start(self, state: int) -> tuple[list[int], list[int], list[list[int]]]:
        cost = self._unreached[:]
        supporter = self._none[:]
        first = bits(state)
        for f in first:
            cost[f] = 0
        buckets: list[list[int]] = [first]
        for w, effects in cast("list[tuple[int, Effects]]", self.free):
            for g, o in effects:
                if w < cost[g]:
                    cost[g] = w
                    supporter[g] = o
                    while len(buckets) <= w:
                        buckets.append([])
                    buckets[w].append(g)
        return cost, supporter, buckets

    def _buckets_add(self, state: int) -> Exploration:
        cost, supporter, buckets = self._start(state)
        left = len(self.goals)
        if not left:
            return cost, supporter, True
        packed = self.group_size[:]  # see __init__: cost sum << shift | unsatisfied count
        shift, low = self._shift, self._low
        direct = cast("list[list[tuple[int, Effects]]]", self.direct)
        group_cost = cast("list[int]", self.group_cost)
        counted, is_goal, group_effects = self.counted, self.is_goal, self.group_effects
        size = len(buckets)
        c = 0
        while c < size:
            settle = (c << shift) - 1  # add c to the sum, one less unsatisfied
            for f in buckets[c]:
                if cost[f] < c:
                    continue  # settled earlier at a lower cost
                if is_goal[f]:
                    left -= 1
                    if not left:
                        return cost, supporter, True
                for w, effects in direct[f]:
                    oc = c + w
                    for g, o in effects:
                        if oc < cost[g]:
                            cost[g] = oc
                            supporter[g] = o
                            if oc >= size:
                                buckets.extend([] for _ in range(size, oc + 9))  # some slack
                                size = len(buckets)
                            buckets[oc].append(g)
                for q in counted[f]:
                    v = packed[q] + settle
                    packed[q] = v
                    if v & low:
                        continue
                    oc = (v >> shift) + group_cost[q]
                    for g, o in group_effects[q]:
                        if oc < cost[g]:
                            cost[g] = oc
                            supporter[g] = o
                            if oc >= size:
                                buckets.extend([] for _ in range(size, oc + 9))  # some slack
                                size = len(buckets)
                            buckets[oc].append(g)
            c += 1
        return cost, supporter, False

    def _buckets_max(self, state: int) -> Exploration:
        # A deliberate near-copy of _buckets_add: this is the planner's hottest loop, and
        # sharing the relaxation step would add a Python call per relaxed effect. The two
        # differ only in how an operator's cost is formed (sum vs max of preconditions).
        cost, supporter, buckets = self._start(state)
        left = len(self.goals)
        if not left:
            return cost, supporter, True
        count = self.group_size[:]
        direct = cast("list[list[tuple[int, Effects]]]", self.direct)
        group_cost = cast("list[int]", self.group_cost)
        counted, is_goal, group_effects = self.counted, self.is_goal, self.group_effects
        size = len(buckets)
        c = 0
        while c < size:
            for f in buckets[c]:
                if cost[f] < c:
                    continue
                if is_goal[f]:
                    left -= 1
                    if not left:
                        return cost, supporter, True
                for w, effects in direct[f]:
                    oc = c + w
                    for g, o in effects:
                        if oc < cost[g]:
                            cost[g] = oc
                            supporter[g] = o
                            if oc >= size:
                                buckets.extend([] for _ in range(size, oc + 9))  # some slack
                                size = len(buckets)
                            buckets[oc].append(g)
                for q in counted[f]:
                    k = count[q] - 1
                    count[q] = k
                    if k:
                        continue
                    oc = c + group_cost[q]  # f is the costliest precondition: settled last
                    for g, o in group_effects[q]:
                        if oc < cost[g]:
                            cost[g] = oc
                            supporter[g] = o
                            if oc >= size:
                                buckets.extend([] for _ in range(size, oc + 9))  # some slack
                                size = len(buckets)
                            buckets[oc].append(g)
            c += 1
        return cost, supporter, False

    def _heap(self, state: int, additive: bool) -> Exploration:
        cost: list[float] = self._inf[:]
        supporter = self._none[:]
        heap: list[tuple[float, int]] = []
        for f in bits(state):
            cost[f] = 0
            heap.append((0, f))
        for w, effects in self.free:
            for g, o in effects:
                if w < cost[g]:
                    cost[g] = w
                    supporter[g] = o
                    heappush(heap, (w, g))
        left = len(self.goals)
        if not left:
            return cost, supporter, True
        count = self.group_size[:]
        acc: list[float] = [0.0] * len(count)
        direct, counted, is_goal = self.direct, self.counted, self.is_goal
        group_cost, group_effects = self.group_cost, self.group_effects
        while heap:
            c, f = heappop(heap)
            if cost[f] < c:
                continue
            if is_goal[f]:
                left -= 1
                if not left:
                    return cost, supporter, True
            todo = [(c + w, effects) for w, effects in direct[f]]
            for q in counted[f]:
                count[q] -= 1
                acc[q] = acc[q] + c if additive else max(acc[q], c)
                if not count[q]:
                    todo.append((acc[q] + group_cost[q], group_effects[q]))
            for oc, effects in todo:
                for g, o in effects:
                    if oc < cost[g]:
                        cost[g] = oc
                        supporter[g] = o
                        heappush(heap, (oc, g))
        return cost, supporter, False


def goal_cost(task: GroundTask, *, additive: bool) -> Evaluator[int]:
    """hadd (``additive``: the sum of the goal facts' costs) or hmax (the costliest goal
    fact) of ``task``, as an evaluator without preferred operators."""
    relaxed = Relaxation(task)
    goals, explore = relaxed.goals, relaxed.explore
    total: Callable[[Iterable[float]], float] = sum if additive else partial(max, default=0)

    def evaluate(state: int) -> Evaluation:
        cost, _, reached = explore(state, additive=additive)
        if not reached:
            return math.inf, ()
        return float(total(cost[g] for g in goals)), ()

    return evaluate
