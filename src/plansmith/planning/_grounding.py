"""Reachability-based grounding: a :class:`Problem` becomes an integer :class:`GroundTask`.

1. *Relaxed reachability.* Starting from the initial atoms, every action whose
   positive precondition holds among the atoms reached so far is instantiated
   and its add effects are reached too, until nothing new appears (delete
   effects and negative preconditions on changing predicates are ignored, so
   this over-approximates the reachable atoms). Instances are found by joining
   the precondition atoms (:mod:`plansmith.planning._join`), each time an atom is
   reached, never by enumerating all tuples of objects.
2. *Relevance.* Going backwards from the goal, an operator is kept only if it
   adds a fact some kept operator or the goal needs, or deletes a fact that one
   of them needs false. Dropping the others keeps every plan (see ``_relevant``).
3. *Numbering.* The remaining fluent atoms are sorted and numbered. Static
   atoms (of predicates no action changes, or initial atoms no operator
   deletes) are true in every state and are pruned from operators and states.

Derived predicates: their rules are compiled into schemas that add the derived
atom (:mod:`plansmith.planning._adl`), reached like actions in step 1; their
ground instances become the task's *axioms* (``GroundTask.axioms``), not
operators. In step 2 a derived fact that matters keeps all its axioms; their
conditions matter in the same sense (needed true) when the fact is needed
true, and in the opposite sense when it is needed false (to make it false,
some axiom's condition must become false).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from plansmith.model import Atom, Equality, Literal, Number, Problem, axiom_strata
from plansmith.planning._adl import AXIOM_PREFIX, compile_adl, needs_compiling
from plansmith.planning._instantiate import function_table
from plansmith.planning._join import Reachability
from plansmith.planning._schema import Fact, SchemaPattern
from plansmith.planning._task import GroundTask, Operator, axiom_evaluator

__all__ = ["ground"]

# a conditional effect: (condition, negated condition, adds, deletes)
Effect = tuple[list[int], list[int], list[int], list[int]]
# (schema index, args, preconditions, negated preconditions, adds, deletes,
# conditional effects), the facts as provisional numbers
Candidate = tuple[int, tuple[str, ...], list[int], list[int], list[int], list[int], list[Effect]]


def ground(problem: Problem) -> GroundTask:
    """Ground ``problem``: reachable, relevant operators over numbered fluent facts.

    ADL (quantifiers, disjunctions, conditional effects, goals beyond a
    conjunction) is compiled away first (:func:`plansmith.planning._adl.compile_adl`).
    """
    strata = axiom_strata(problem.domain.axioms) if problem.domain.axioms else None
    if needs_compiling(problem):
        problem = compile_adl(problem)
    reach = Reachability(problem)
    reach.run()
    # Reached fluent facts get provisional numbers in sorted order; the facts
    # finally kept are numbered in the same order.
    order = sorted(reach.reached)
    rid = {f: i for i, f in enumerate(order)}
    candidates = _candidates(reach, rid)

    # Initial atoms that no operator deletes are true in every state, like
    # static ones (e.g. where a hoist stands: ``at`` changes, but not for hoists).
    initial = {i for i in (rid.get((a.predicate, a.args)) for a in problem.init) if i is not None}
    constant = initial.difference(
        *(c[5] for c in candidates), *(e[3] for c in candidates for e in c[6])
    )
    if constant:
        candidates = [
            (
                index,
                args,
                [f for f in pre if f not in constant],
                neg,
                add,
                delete,
                [
                    ([f for f in cp if f not in constant], cn, ca, cd)
                    for cp, cn, ca, cd in effects
                    if constant.isdisjoint(cn)
                ],
            )
            for index, args, pre, neg, add, delete, effects in candidates
            if constant.isdisjoint(neg)
        ]
    static = reach.static | {order[i] for i in constant}
    axioms: list[Candidate] = []
    if strata is not None:
        is_axiom = [p.schema.name.startswith(AXIOM_PREFIX) for p in reach.schemas]
        axioms = [c for c in candidates if is_axiom[c[0]]]
        candidates = [c for c in candidates if not is_axiom[c[0]]]

    goal_pos: list[int] = []
    goal_neg: list[int] = []
    unreachable: list[Literal | Equality] = []
    for cond in problem.goal:
        if isinstance(cond, Equality):
            if (cond.left == cond.right) != cond.positive:
                unreachable.append(cond)
            continue
        fact = (cond.atom.predicate, cond.atom.args)
        if fact in static:
            if not cond.positive:
                unreachable.append(cond)
        elif fact in rid:
            (goal_pos if cond.positive else goal_neg).append(rid[fact])
        elif cond.positive:
            unreachable.append(cond)

    kept_ops, kept_facts, kept_axioms = _relevant(
        candidates, goal_pos, goal_neg, len(order), axioms
    )
    number = [-1] * len(order)
    facts: list[Atom] = []
    for i in sorted(kept_facts):
        number[i] = len(facts)
        facts.append(Atom(*order[i]))
    init = 0
    for i in initial:
        if number[i] >= 0:
            init |= 1 << number[i]
    functions = function_table(problem)
    task = GroundTask(
        facts=tuple(facts),
        operators=_operators(kept_ops, number, reach, functions),
        init=init,
        goal=_mask(number[i] for i in goal_pos),
        goal_neg=_mask(number[i] for i in goal_neg),
        static=frozenset(Atom(p, a) for p, a in static),
        unreachable_goal=tuple(unreachable),
    )
    if strata is None:
        return task
    ground_axioms = _operators(kept_axioms, number, reach, functions)
    layer = [strata[op.schema.name[len(AXIOM_PREFIX) :]] for op in ground_axioms]
    ranked = sorted(range(len(ground_axioms)), key=layer.__getitem__)
    task = replace(
        task,
        axioms=tuple(ground_axioms[i] for i in ranked),
        axiom_strata=tuple(layer[i] for i in ranked),
    )
    derive = axiom_evaluator(task)
    return task if derive is None else replace(task, init=derive(task.init))


def _candidates(reach: Reachability, rid: dict[Fact, int]) -> list[Candidate]:
    """Every reached ground action with its facts as provisional numbers.

    Static atoms are left out by the templates; negations and deletions of
    facts never reached are dropped.
    """
    out: list[Candidate] = []
    schemas = reach.schemas
    get = rid.get
    for index, args in sorted(reach.bindings):
        pattern = schemas[index]
        full = args + pattern.consts
        neg = [get((p, g(full)), -1) for p, g in pattern.neg] if pattern.neg else []
        delete = [get((p, g(full)), -1) for p, g in pattern.delete]
        out.append(
            (
                index,
                args,
                [rid[p, g(full)] for p, g in pattern.pre],
                [i for i in neg if i >= 0],
                [rid[p, g(full)] for p, g in pattern.add],
                [i for i in delete if i >= 0],
                _effects(pattern, full, reach, rid) if pattern.effects else [],
            )
        )
    return out


def _effects(
    pattern: SchemaPattern, full: tuple[str, ...], reach: Reachability, rid: dict[Fact, int]
) -> list[Effect]:
    """The ground conditional effects of an action that can ever fire: equalities
    and static atoms of the condition are decided here, a condition on a fact
    never reached drops the effect, a negated one is dropped itself."""
    out: list[Effect] = []
    static = reach.static
    for effect in pattern.effects:
        if any(
            ((full[a] if isinstance(a, int) else a) == (full[b] if isinstance(b, int) else b))
            != positive
            for a, b, positive in effect.eqs
        ):
            continue
        if any((p, g(full)) not in static for p, g in effect.static_pos):
            continue
        if any((p, g(full)) in static for p, g in effect.static_neg):
            continue
        pre = [rid.get((p, g(full)), -1) for p, g in effect.pre]
        if -1 in pre:
            continue
        neg = [rid.get((p, g(full)), -1) for p, g in effect.neg]
        add = [rid.get((p, g(full)), -1) for p, g in effect.add]
        delete = [rid.get((p, g(full)), -1) for p, g in effect.delete]
        out.append(
            (
                pre,
                [i for i in neg if i >= 0],
                [i for i in add if i >= 0],
                [i for i in delete if i >= 0],
            )
        )
    return out


def _operators(
    kept: list[Candidate],
    number: list[int],
    reach: Reachability,
    functions: dict[Atom, Number],
) -> tuple[Operator, ...]:
    """The operators of the kept candidates, as masks over the final fact numbers.

    Preconditions of kept operators are wanted and their negations unwanted,
    so all are numbered; effects on facts that do not matter are dropped.
    """
    size = max(number, default=-1) + 1
    power = [1 << i for i in range(size)]
    # the numbers (sorted, no repeats; facts not kept left out) and the mask
    singles: list[tuple[tuple[int, ...], int]] = [((i,), 1 << i) for i in range(size)]
    singles.append(((), 0))  # number -1: a fact not kept

    def numbered(facts: list[int]) -> tuple[tuple[int, ...], int]:
        if len(facts) == 1:
            return singles[number[facts[0]]]
        out = tuple(sorted({i for i in map(number.__getitem__, facts) if i >= 0}))
        return out, sum(map(power.__getitem__, out))

    costs = [p.schema.cost for p in reach.schemas]
    out: list[Operator] = []
    for index, args, pre, neg, add, delete, effects in kept:
        pre_f, pre_m = numbered(pre)
        add_f, add_m = numbered(add)
        neg_f, neg_m = numbered(neg) if neg else singles[-1]
        if pre_m & neg_m:
            continue  # needs a fact both true and false
        del_f, del_m = numbered(delete) if delete else singles[-1]
        if del_m & add_m:
            del_f = tuple(f for f in del_f if not add_m >> f & 1)
            del_m &= ~add_m
        conditional: list[tuple[int, int, int, int]] = []
        for cp, cn, ca, cd in effects:
            cp_m = numbered(cp)[1] if cp else 0
            cn_m = numbered(cn)[1] if cn else 0
            ca_m = numbered(ca)[1] & ~add_m if ca else 0
            cd_m = numbered(cd)[1] & ~add_m if cd else 0
            if cp_m & cn_m or (cp_m | pre_m) & neg_m or cn_m & pre_m:
                continue  # can never fire
            if ca_m | cd_m:
                conditional.append((cp_m | pre_m, cn_m, ca_m, cd_m))
        if not add_m & ~pre_m and not del_m and not conditional:
            continue  # changes no state
        cost = costs[index]
        if isinstance(cost, Atom):
            cost = _cost(cost, reach.schemas[index].substitute, args, functions)
        out.append(
            Operator(
                reach.schemas[index].schema,
                args,
                pre_m,
                neg_m,
                add_m,
                del_m,
                cost,
                pre_f,
                neg_f,
                add_f,
                del_f,
                tuple(conditional),
            )
        )
    return tuple(out)


def _relevant(
    candidates: list[Candidate],
    goal_pos: list[int],
    goal_neg: list[int],
    facts: int,
    axioms: list[Candidate] | None = None,
) -> tuple[list[Candidate], set[int], list[Candidate]]:
    """The operators that can matter for the goal, the facts they mention, and the
    axioms of the derived facts among them (see the module docstring).

    A fact is *wanted* if the goal or a kept operator needs it true, *unwanted*
    if one needs it false. An operator is kept if it adds a wanted fact or
    deletes an unwanted one. Removing the other operators from any plan leaves
    a plan: they only make wanted facts false or unwanted facts true, which
    never helps a kept operator or the goal.
    """
    adders: list[list[int]] = [[] for _ in range(facts)]
    deleters: list[list[int]] = [[] for _ in range(facts)]
    for i, (_, _, _, _, add, delete, effects) in enumerate(candidates):
        for f in add:
            adders[f].append(i)
        for f in delete:
            deleters[f].append(i)
        for _, _, ca, cd in effects:
            for f in ca:
                adders[f].append(i)
            for f in cd:
                deleters[f].append(i)
    rules: dict[int, list[int]] = {}
    for i, axiom in enumerate(axioms or ()):
        rules.setdefault(axiom[4][0], []).append(i)
    wanted: set[int] = set(goal_pos)
    unwanted: set[int] = set(goal_neg)
    kept = [False] * len(candidates)
    kept_axioms: set[int] = set()
    stack: list[tuple[int, bool]] = [(f, True) for f in goal_pos]
    stack += [(f, False) for f in goal_neg]
    while stack:
        fact, positive = stack.pop()
        if fact in rules:
            assert axioms is not None
            for i in rules[fact]:
                kept_axioms.add(i)
                _, _, pre, neg, _, _, _ = axioms[i]
                for f, sense in [(f, positive) for f in pre] + [(f, not positive) for f in neg]:
                    into = wanted if sense else unwanted
                    if f not in into:
                        into.add(f)
                        stack.append((f, sense))
            continue
        for i in (adders if positive else deleters)[fact]:
            if kept[i]:
                continue
            kept[i] = True
            _, _, pre, neg, _, _, effects = candidates[i]
            if effects:
                pre = pre + [f for e in effects for f in e[0]]
                neg = neg + [f for e in effects for f in e[1]]
            for f in pre:
                if f not in wanted:
                    wanted.add(f)
                    stack.append((f, True))
            for f in neg:
                if f not in unwanted:
                    unwanted.add(f)
                    stack.append((f, False))
    ops = [c for c, k in zip(candidates, kept, strict=True) if k]
    return ops, wanted | unwanted, [axioms[i] for i in sorted(kept_axioms)] if axioms else []


def _mask(numbers: Iterable[int]) -> int:
    out = 0
    for i in numbers:
        out |= 1 << i
    return out


def _cost(
    cost: Atom,
    substitute: dict[str, int],
    args: tuple[str, ...],
    functions: dict[Atom, Number],
) -> Number:
    """The value of a cost function atom for ``args`` (0 if unset, as ``instantiate``)."""
    key = Atom(
        cost.predicate, tuple(args[substitute[t]] if t in substitute else t for t in cost.args)
    )
    return functions.get(key, 0)
