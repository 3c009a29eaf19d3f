"""hFF: the cost of a relaxed plan, with its applicable operators as preferred operators.

The relaxed plan is extracted backwards from the goal facts along the hadd
supporters (as Fast Downward's ``ff()``): each goal fact not in the state needs
its supporter, whose preconditions not in the state are needed in turn. The
value is the total cost of the distinct operators needed, at most hadd; the
preferred operators are those of the relaxed plan applicable in the state.

The compiled build (``make compiled``) evaluates tasks of integer costs
without conditional effects or axioms in C (:mod:`._ff_native`): the same
values and preferred operators, several times faster.
"""

from __future__ import annotations

import math

from plansmith.planning._task import GroundTask
from plansmith.planning.heuristics._ff_native import native_ff
from plansmith.planning.heuristics._relaxed import Relaxation
from plansmith.planning.search import Evaluation, Evaluator

__all__ = ["ff"]


def ff(task: GroundTask, *, native: bool = True) -> Evaluator[int]:
    """The hFF evaluator of ``task``: in C where the install has it and ``native``."""
    relaxed = Relaxation(task)
    goals, pres, costs, neg_masks = relaxed.goals, relaxed.pres, relaxed.costs, relaxed.neg_masks
    explore = relaxed.explore
    if relaxed.origin is not None:
        return _ff_conditional(relaxed, relaxed.origin)
    in_c = native_ff(relaxed) if native else None
    if in_c is not None:
        return in_c

    def evaluate(state: int) -> Evaluation:
        _, supporter, reached = explore(state, additive=True)
        if not reached:
            return math.inf, ()
        plan: set[int] = set()
        preferred: set[int] = set()
        h: float = 0.0
        stack = [supporter[g] for g in goals if supporter[g] >= 0]
        while stack:
            o = stack.pop()
            if o in plan:
                continue
            plan.add(o)
            h += costs[o]
            applicable = True
            for p in pres[o]:
                s = supporter[p]
                if s >= 0:  # p is not in the state (facts of the state have no supporter)
                    applicable = False
                    if s not in plan:
                        stack.append(s)
            if applicable and not state & neg_masks[o]:
                preferred.add(o)
        return h, preferred

    return evaluate


def _ff_conditional(relaxed: Relaxation, origin: list[int]) -> Evaluator[int]:
    """hFF where conditional effects are relaxed operators of their own: the cost
    of each operator of the task is counted once, and preferred operators are the
    task's (``origin`` maps relaxed operators to them; axioms, of origin -1 and
    cost 0, are never preferred)."""
    goals, pres, costs, neg_masks = relaxed.goals, relaxed.pres, relaxed.costs, relaxed.neg_masks
    explore = relaxed.explore

    def evaluate(state: int) -> Evaluation:
        _, supporter, reached = explore(state, additive=True)
        if not reached:
            return math.inf, ()
        plan: set[int] = set()
        used: set[int] = set()
        preferred: set[int] = set()
        h: float = 0.0
        stack = [supporter[g] for g in goals if supporter[g] >= 0]
        while stack:
            o = stack.pop()
            if o in plan:
                continue
            plan.add(o)
            if origin[o] not in used:
                used.add(origin[o])
                h += costs[o]
            applicable = True
            for p in pres[o]:
                s = supporter[p]
                if s >= 0:
                    applicable = False
                    if s not in plan:
                        stack.append(s)
            if applicable and origin[o] >= 0 and not state & neg_masks[o]:
                preferred.add(origin[o])
        return h, preferred

    return evaluate
