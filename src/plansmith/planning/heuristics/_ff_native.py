"""hFF in C, where the compiled build has it (``planning/_native.c``, ``make compiled``).

The extension implements :mod:`.ff`'s evaluator step for step for tasks whose
costs are all integers and that have no conditional effects or axioms (the
common case): the same value and the same preferred operators on every state,
so a plan is the same bytes with or without it. A plain install has no
extension and runs the Python code; :func:`native_ff` then returns None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plansmith.planning._compiled import native, offsets
from plansmith.planning._task import bits
from plansmith.planning.heuristics._relaxed import Effects, Relaxation
from plansmith.planning.search import Evaluator

if TYPE_CHECKING:  # only the compiled build has the module
    from plansmith.planning import _native

__all__ = ["native_ff"]

_MAX_COST = 1 << 40  # the extension's bound on an operator's cost


def native_ff(relaxed: Relaxation) -> Evaluator[int] | None:
    """The C evaluator of hFF over ``relaxed``, or None where it does not apply (no
    extension, a cost that is not an integer, conditional effects or axioms)."""
    if native is None or relaxed.origin is not None or not relaxed.integer:
        return None
    costs = [int(c) for c in relaxed.costs]
    if any(c >= _MAX_COST for c in costs):
        return None
    eff_fact: list[int] = []
    eff_op: list[int] = []

    def add(effects: Effects) -> tuple[int, int]:
        start = len(eff_fact)
        for g, o in effects:
            eff_fact.append(g)
            eff_op.append(o)
        return start, len(eff_fact)

    def entries(items: list[tuple[int, Effects]]) -> tuple[list[int], list[int], list[int]]:
        cost: list[int] = []
        start: list[int] = []
        end: list[int] = []
        for w, effects in items:
            s, e = add(effects)
            cost.append(w)
            start.append(s)
            end.append(e)
        return cost, start, end

    free_cost, free_start, free_end = entries([(int(w), e) for w, e in relaxed.free])
    direct_start, direct = offsets(relaxed.direct)
    direct_cost, direct_es, direct_ee = entries([(int(w), e) for w, e in direct])
    group_cost, group_es, group_ee = entries(
        [(int(w), e) for w, e in zip(relaxed.group_cost, relaxed.group_effects, strict=True)]
    )
    counted_start, counted = offsets(relaxed.counted)
    pre_start, pre = offsets(relaxed.pres)
    neg_start, neg = offsets([bits(m) for m in relaxed.neg_masks])
    hff: _native.Hff = native.Hff(
        n_facts=len(relaxed.is_goal),
        goals=list(relaxed.goals),
        eff_fact=eff_fact,
        eff_op=eff_op,
        free_cost=free_cost,
        free_start=free_start,
        free_end=free_end,
        direct_start=direct_start,
        direct_cost=direct_cost,
        direct_effect_start=direct_es,
        direct_effect_end=direct_ee,
        counted_start=counted_start,
        counted=counted,
        group_cost=group_cost,
        group_effect_start=group_es,
        group_effect_end=group_ee,
        group_size=list(relaxed.group_size),
        pre_start=pre_start,
        pre=pre,
        op_cost=costs,
        neg_start=neg_start,
        neg=neg,
    )
    return hff.evaluate
