"""The integer task that searches and heuristics run on.

Grounding (:func:`plansmith.planning.ground`) numbers the fluent facts of a
problem ``0..n-1`` in sorted order and turns every reachable ground action into
an :class:`Operator` of bit masks over those numbers. A state is a Python
``int`` whose bit ``i`` is set when fact ``i`` holds; static facts (true in
every state) are left out. Searches and heuristics only see these integers.

:class:`TaskSpace` is the search space of a task: the initial state, the goal
test and the successors of a state. It finds the applicable operators without
testing every one of them: each operator is filed under one *key* fact of its
precondition (the one that holds in the fewest states, by a static estimate),
and a state only tests the operators filed under its true key facts.

Derived predicates: a task may have *axioms*, ground rules ``head <- condition``
as operators that add their head (cost 0; never in a plan). A state holds its
derived facts too: :func:`axiom_evaluator` recomputes them after every
operator application (and grounding did so for the initial state), stratum by
stratum, to the least fixpoint. Tasks without axioms never run this code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from plansmith.model import ActionSchema, Atom, Condition, GroundAction, Number
from plansmith.planning._compiled import native, offsets
from plansmith.planning._instantiate import instantiate

if TYPE_CHECKING:  # only the compiled build has the module
    from plansmith.planning import _native

__all__ = [
    "Operator",
    "GroundTask",
    "TaskSpace",
    "axiom_evaluator",
    "bits",
    "relaxed_operators",
]


class Operator(NamedTuple):
    """A ground action as masks over fact numbers (static facts pruned).

    An immutable named tuple rather than a frozen dataclass: tasks have
    thousands of operators and a named tuple is five times faster to build.
    ``action`` is the model's :class:`GroundAction`, instantiated when asked
    for: most operators never appear in a plan.
    """

    schema: ActionSchema
    args: tuple[str, ...]
    pre: int
    neg: int
    add: int
    delete: int
    cost: Number
    pre_facts: tuple[int, ...]
    neg_facts: tuple[int, ...]
    add_facts: tuple[int, ...]
    del_facts: tuple[int, ...]
    effects: tuple[tuple[int, int, int, int], ...] = ()
    """Conditional effects: ``(condition, negated condition, add, delete)`` masks;
    the condition includes the precondition. Each fires if its condition holds in
    the state the operator is applied in."""

    @property
    def name(self) -> str:
        return f"{self.schema.name}({', '.join(self.args)})"

    @property
    def action(self) -> GroundAction:
        """The ground action of the model (static atoms included; hidden
        parameters left out; conditional effects left out)."""
        action = instantiate(self.schema, self.args)
        if action is None:  # pragma: no cover - grounding checked the equalities
            raise AssertionError(f"{self.name} violates an equality of its schema")
        return replace(action, cost=self.cost)

    def applicable(self, state: int) -> bool:
        return state & self.pre == self.pre and not state & self.neg

    def apply(self, state: int) -> int:
        """Delete, then add: an atom both deleted and added stays true. Conditional
        effects fire on the state before."""
        if self.effects:
            return _apply_conditional(state, ~self.delete, self.add, self.effects)
        return (state & ~self.delete) | self.add


@dataclass(frozen=True, slots=True)
class GroundTask:
    """A grounded problem: facts, operators, the initial state and the goal.

    ``facts`` are the fluent atoms that can matter for the goal (fact ``i`` is
    ``facts[i]``); ``static`` holds the atoms true in every state. ``goal`` is
    the mask of the facts that must be true, ``goal_neg`` of those that must be
    false. ``unreachable_goal`` lists the goal conditions that no state
    reachable even with delete effects ignored satisfies: if it is not empty,
    the task has no plan. ``axioms`` are the ground rules of derived facts,
    ordered by stratum (``axiom_strata`` gives each one's); ``init`` holds the
    derived facts of the initial state.
    """

    facts: tuple[Atom, ...]
    operators: tuple[Operator, ...]
    init: int
    goal: int
    goal_neg: int = 0
    static: frozenset[Atom] = frozenset()
    unreachable_goal: tuple[Condition, ...] = ()
    axioms: tuple[Operator, ...] = ()
    axiom_strata: tuple[int, ...] = ()

    @property
    def unit_cost(self) -> bool:
        return all(op.cost == 1 for op in self.operators)

    def is_goal(self, state: int) -> bool:
        return state & self.goal == self.goal and not state & self.goal_neg

    def atoms(self, state: int) -> frozenset[Atom]:
        """The atoms true in ``state``: static ones and the true facts (atoms that
        cannot matter for the goal are not tracked)."""
        return self.static | {self.facts[i] for i in bits(state)}

    def mask(self, atoms: Iterable[Atom]) -> int:
        """The state of the fluent facts among ``atoms`` (others are ignored)."""
        index = {a: i for i, a in enumerate(self.facts)}
        out = 0
        for a in atoms:
            i = index.get(a)
            if i is not None:
                out |= 1 << i
        return out


def _apply_conditional(
    state: int, keep: int, add: int, effects: tuple[tuple[int, int, int, int], ...]
) -> int:
    for pre, neg, cadd, cdel in effects:
        if state & pre == pre and not state & neg:
            add |= cadd
            keep &= ~cdel
    return (state & keep) | add


Entry = tuple[int, int, int, int]  # precondition, negated precondition, head mask, head


def axiom_evaluator(task: GroundTask) -> Callable[[int], int] | None:
    """``derive(state)``: ``state`` with its derived facts recomputed (None without
    axioms). Per stratum, the axioms whose condition needs no fact of their own
    stratum are tried once; a fact derived then tries the axioms that need it."""
    if not task.axioms:
        return None
    derived = 0
    for ax in task.axioms:
        derived |= ax.add
    layers: dict[int, tuple[list[Entry], dict[int, list[Entry]], int]] = {}
    for ax, stratum in zip(task.axioms, task.axiom_strata, strict=True):
        layer = layers.setdefault(stratum, ([], {}, 0))
        layers[stratum] = (layer[0], layer[1], layer[2] | ax.add)
    for ax, stratum in zip(task.axioms, task.axiom_strata, strict=True):
        base, triggers, heads = layers[stratum]
        entry = (ax.pre, ax.neg, ax.add, ax.add_facts[0])
        same = ax.pre & heads
        if not same:
            base.append(entry)
        for f in bits(same):
            triggers.setdefault(f, []).append(entry)
    plan = [(base, triggers) for base, triggers, _ in (layers[k] for k in sorted(layers))]
    keep = ~derived

    def derive(state: int) -> int:
        state &= keep
        for base, triggers in plan:
            queue: list[int] = []
            for pre, neg, add, f in base:
                if state & pre == pre and not state & neg and not state & add:
                    state |= add
                    queue.append(f)
            while queue:
                for pre, neg, add, f in triggers.get(queue.pop(), ()):
                    if not state & add and state & pre == pre and not state & neg:
                        state |= add
                        queue.append(f)
        return state

    return derive


def bits(mask: int) -> list[int]:
    """The numbers of the set bits of ``mask``, lowest first."""
    out: list[int] = []
    append = out.append
    while mask:
        low = mask & -mask
        append(low.bit_length() - 1)
        mask ^= low
    return out


class TaskSpace:
    """The search space of a :class:`GroundTask` (states are ``int`` masks)."""

    __slots__ = (
        "_always",
        "_buckets",
        "_conditional",
        "_derive",
        "_goal",
        "_goal_neg",
        "_keys",
        "_native",
        "_ops",
        "task",
    )

    def __init__(self, task: GroundTask, *, native: bool = True) -> None:
        """``native``: generate successors in C where the install has it (the same
        successors in the same order)."""
        self.task = task
        self._derive = axiom_evaluator(task)
        self._goal = task.goal
        self._goal_neg = task.goal_neg
        ops = task.operators
        # (id, pre, neg, keep-mask, add, cost): what a successor needs, in one tuple.
        self._ops = [(i, op.pre, op.neg, ~op.delete, op.add, op.cost) for i, op in enumerate(ops)]
        # Facts that appear in many delete effects change often, and facts of
        # predicates with many ground atoms are rarely all true together: a fact
        # that is deleted a lot and shares its predicate with many others makes
        # a selective key.
        deleted = [0] * len(task.facts)
        for op in ops:
            for f in op.del_facts:
                deleted[f] += 1
        per_predicate: dict[str, int] = {}
        for atom in task.facts:
            per_predicate[atom.predicate] = per_predicate.get(atom.predicate, 0) + 1
        weight = [(per_predicate[a.predicate], deleted[i], -i) for i, a in enumerate(task.facts)]
        buckets: dict[int, list[tuple[int, int, int, int, int, Number]]] = {}
        always: list[tuple[int, int, int, int, int, Number]] = []
        # operators with conditional effects: (id, pre, neg, keep, add, cost, effects)
        self._conditional = [
            (i, op.pre, op.neg, ~op.delete, op.add, op.cost, op.effects)
            for i, op in enumerate(ops)
            if op.effects
        ]
        for entry, op in zip(self._ops, ops, strict=True):
            if op.effects:
                continue
            if not op.pre_facts:
                always.append(entry)
                continue
            key = max(op.pre_facts, key=weight.__getitem__)
            buckets.setdefault(key, []).append(entry)
        self._always = always
        self._buckets = buckets
        keys = 0
        for f in buckets:
            keys |= 1 << f
        self._keys = keys
        self._native = (
            _native_successors(task, always, buckets, self._conditional, self._derive)
            if native
            else None
        )

    def initial_state(self) -> int:
        return self.task.init

    def is_goal(self, state: int) -> bool:
        return state & self._goal == self._goal and not state & self._goal_neg

    def features(self, state: int) -> int:
        """A state is its facts' bitset already."""
        return state

    def successors(self, state: int) -> list[tuple[int, int, Number]]:
        """``(operator id, successor, cost)`` for each applicable operator, by id."""
        if self._native is not None:
            return self._native(state)
        out: list[tuple[int, int, Number]] = []
        append = out.append
        for o, pre, neg, keep, add, cost in self._always:
            if state & pre == pre and not state & neg:
                append((o, (state & keep) | add, cost))
        buckets = self._buckets
        mask = state & self._keys
        while mask:
            low = mask & -mask
            mask ^= low
            for o, pre, neg, keep, add, cost in buckets[low.bit_length() - 1]:
                if state & pre == pre and not state & neg:
                    append((o, (state & keep) | add, cost))
        if self._conditional:
            for o, pre, neg, keep, add, cost, effects in self._conditional:
                if state & pre == pre and not state & neg:
                    append((o, _apply_conditional(state, keep, add, effects), cost))
        if self._derive is not None:
            derive = self._derive
            out = [(o, derive(succ), cost) for o, succ, cost in out]
        out.sort()
        return out


def _native_successors(
    task: GroundTask,
    always: list[tuple[int, int, int, int, int, Number]],
    buckets: dict[int, list[tuple[int, int, int, int, int, Number]]],
    conditional: Sequence[object],
    derive: object,
) -> Callable[[int], list[tuple[int, int, Number]]] | None:
    """:meth:`TaskSpace.successors` in C (the compiled build's extension), for tasks
    without conditional effects or axioms; None where it does not apply."""
    if native is None or conditional or derive is not None:
        return None
    ops = task.operators
    key_start, key_ops = offsets(
        [entry[0] for entry in buckets.get(f, ())] for f in range(len(task.facts))
    )
    pre_start, pre = offsets(op.pre_facts for op in ops)
    neg_start, neg = offsets(op.neg_facts for op in ops)
    add_start, add = offsets(op.add_facts for op in ops)
    delete_start, delete = offsets(op.del_facts for op in ops)
    generator: _native.Successors = native.Successors(
        n_facts=len(task.facts),
        pre_start=pre_start,
        pre=pre,
        neg_start=neg_start,
        neg=neg,
        add_start=add_start,
        add=add,
        delete_start=delete_start,
        delete=delete,
        always=[entry[0] for entry in always],
        key_start=key_start,
        key_ops=key_ops,
        costs=[op.cost for op in ops],
    )
    return generator.successors


def relaxed_operators(
    task: GroundTask, *, partition: bool = False
) -> tuple[tuple[Operator, ...], list[int] | None]:
    """The operators the delete relaxation sees, and the operator each comes from.

    A task without conditional effects or axioms: its operators (and None).
    Otherwise, as Fast Downward relaxes them, every conditional effect is an
    operator of its own whose precondition is the operator's and the effect's
    condition, and every axiom an operator of cost 0 (origin -1: no operator of
    the task). Its
    cost: the operator's (``partition=False``; right for hmax, hadd and hFF), or
    a share of it so that the parts of an operator cost what it costs together
    (``partition=True``; what LM-cut needs to stay admissible: the whole cost on
    the base operator when it adds anything, else on its first effect).
    """
    if not task.axioms and not any(op.effects for op in task.operators):
        return task.operators, None
    out: list[Operator] = []
    origin: list[int] = []
    for o, op in enumerate(task.operators):
        base_adds = bool(op.add & ~op.pre)
        share = op.cost if not partition or base_adds else 0
        out.append(op if share == op.cost else op._replace(cost=share))
        origin.append(o)
        for k, (pre, neg, add, _) in enumerate(op.effects):
            cost = op.cost if not partition or (not base_adds and k == 0) else 0
            out.append(
                op._replace(
                    pre=pre,
                    neg=neg,
                    add=add,
                    delete=0,
                    cost=cost,
                    pre_facts=tuple(bits(pre)),
                    neg_facts=tuple(bits(neg)),
                    add_facts=tuple(bits(add)),
                    del_facts=(),
                    effects=(),
                )
            )
            origin.append(o)
    for ax in task.axioms:
        out.append(ax)
        origin.append(-1)
    return tuple(out), origin
