"""Relaxed reachability by joins: which ground actions and atoms a problem can reach.

Atoms of *static* predicates (which no action changes) are known from the
start. Each fluent atom, when it is reached, *triggers* every precondition atom
of a schema it matches: the other precondition atoms are then joined, most
bound first, against the atoms processed so far through hash indexes on their
bound positions. A ground action is therefore found once its last
precondition atom is processed, and its add effects are reached in turn.
Parameters that no positive precondition binds range over the objects of their
type. Parameter types, equalities and negated static atoms are checked as soon
as their parameters are bound; negated fluent atoms are ignored (this is the
relaxation).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from itertools import product

from plansmith.model import ROOT_TYPE, Problem
from plansmith.planning._schema import AtomPattern, Fact, SchemaPattern, Term

__all__ = ["Reachability"]

Values = list[str]  # parameter values; unbound ones are not read


class _Checks:
    """What to check once some parameters are bound."""

    __slots__ = ("eqs", "negs", "types")

    def __init__(self) -> None:
        self.types: tuple[int, ...] = ()  # parameters whose type to check
        self.eqs: tuple[tuple[Term, Term, bool], ...] = ()
        self.negs: tuple[AtomPattern, ...] = ()  # negated static atoms

    def __bool__(self) -> bool:
        return bool(self.types or self.eqs or self.negs)


class _Pending:
    """The checks not placed yet while a join plan is compiled."""

    def __init__(self, pattern: SchemaPattern) -> None:
        self.types = list(range(len(pattern.domains)))
        self.eqs = list(pattern.eqs)
        self.negs = list(pattern.static_neg)

    def ready(self, bound: set[int]) -> _Checks:
        """Take out the checks whose parameters are all bound."""

        def known(terms: tuple[Term, ...]) -> bool:
            return all(not isinstance(t, int) or t in bound for t in terms)

        out = _Checks()
        out.types = tuple(v for v in self.types if v in bound)
        out.eqs = tuple(e for e in self.eqs if known(e[:2]))
        out.negs = tuple(n for n in self.negs if known(n[1]))
        self.types = [v for v in self.types if v not in bound]
        self.eqs = [e for e in self.eqs if not known(e[:2])]
        self.negs = [n for n in self.negs if not known(n[1])]
        return out


class _Step:
    """Match one precondition atom: look up candidates, bind, check."""

    __slots__ = ("binds", "checks", "consts", "index", "key", "member", "predicate", "same")

    def __init__(self, predicate: str) -> None:
        self.predicate = predicate
        self.index = -1  # which hash index to look candidates up in
        self.key: tuple[Term, ...] = ()  # terms giving the lookup key
        self.member = False  # every term bound: a membership test
        self.binds: tuple[tuple[int, int], ...] = ()  # (position, parameter)
        self.same: tuple[tuple[int, int], ...] = ()  # positions that must hold equal values
        self.consts: tuple[tuple[int, str], ...] = ()  # (position, constant), trigger only
        self.checks = _Checks()


class _Plan:
    def __init__(self, pattern: SchemaPattern, steps: list[_Step], free: list[int]) -> None:
        self.pattern = pattern
        self.steps = steps
        self.free = free  # parameters no atom binds: enumerated last
        self.final_checks = _Checks()


class Reachability:
    """The relaxed reachability fixpoint of a problem; see the module docstring.

    After :meth:`run`, ``reached`` holds the fluent facts reached, ``static``
    the facts of static predicates, and ``bindings`` the ``(schema index,
    args)`` of every ground action whose positive precondition is reached.
    """

    def __init__(self, problem: Problem) -> None:
        domain = problem.domain
        fluent = {e.atom.predicate for a in domain.actions for e in a.effect}
        fluent.update(
            e.atom.predicate for a in domain.actions for c in a.conditional for e in c.effect
        )
        self.static: set[Fact] = set()
        self.reached: set[Fact] = set()
        for atom in problem.init:
            fact = (atom.predicate, atom.args)
            (self.reached if atom.predicate in fluent else self.static).add(fact)
        self._fluent = fluent
        objects = _objects_by_type(problem)
        self.schemas = [
            SchemaPattern(i, a, [objects(p.type) for p in a.parameters], fluent)
            for i, a in enumerate(domain.actions)
        ]
        self.bindings: set[tuple[int, tuple[str, ...]]] = set()
        self._facts: dict[str, set[tuple[str, ...]]] = {}
        self._indexes: list[dict[tuple[str, ...], list[tuple[str, ...]]]] = []
        self._index_ids: dict[tuple[str, tuple[int, ...]], int] = {}
        self._by_predicate: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
        self._triggers: dict[str, list[tuple[_Step, _Plan]]] = {}
        self._initial: list[_Plan] = []
        for pattern in self.schemas:
            fluent_pos = [i for i, (p, _) in enumerate(pattern.pos) if p in fluent]
            if not fluent_pos:
                self._initial.append(self._compile(pattern, None))
            for i in fluent_pos:
                plan = self._compile(pattern, i)
                self._triggers.setdefault(pattern.pos[i][0], []).append((plan.steps[0], plan))
        for predicate, args in sorted(self.static):  # sorted: the same order in any process
            self._insert(predicate, args)

    # -- compiling join plans ---------------------------------------------------------

    def _index_id(self, predicate: str, positions: tuple[int, ...]) -> int:
        key = (predicate, positions)
        if key not in self._index_ids:
            self._index_ids[key] = len(self._indexes)
            self._indexes.append({})
            self._by_predicate.setdefault(predicate, []).append((len(self._indexes) - 1, positions))
        return self._index_ids[key]

    def _compile(self, pattern: SchemaPattern, trigger: int | None) -> _Plan:
        bound: set[int] = set()
        pending = _Pending(pattern)
        steps: list[_Step] = []
        rest = list(range(len(pattern.pos)))
        if trigger is not None:
            rest.remove(trigger)
            steps.append(self._step(pattern, trigger, bound, trigger=True))
            steps[-1].checks = pending.ready(bound)
        while rest:
            best = max(rest, key=lambda i: self._score(pattern, i, bound))
            rest.remove(best)
            steps.append(self._step(pattern, best, bound, trigger=False))
            steps[-1].checks = pending.ready(bound)
        free = [v for v in range(len(pattern.domains)) if v not in bound]
        plan = _Plan(pattern, steps, free)
        bound.update(free)
        plan.final_checks = pending.ready(bound)
        plan.final_checks.types = ()  # enumerated from their domains
        return plan

    def _score(self, pattern: SchemaPattern, i: int, bound: set[int]) -> tuple[int, ...]:
        """Join fully bound atoms first (tests), then atoms sharing a bound parameter."""
        predicate, terms = pattern.pos[i]
        known = sum(1 for t in terms if not isinstance(t, int) or t in bound)
        return (known == len(terms), known > 0, predicate not in self._fluent, known, -i)

    def _step(self, pattern: SchemaPattern, i: int, bound: set[int], *, trigger: bool) -> _Step:
        predicate, terms = pattern.pos[i]
        step = _Step(predicate)
        binds: list[tuple[int, int]] = []
        same: list[tuple[int, int]] = []
        consts: list[tuple[int, str]] = []
        first: dict[int, int] = {}
        lookup: list[int] = []
        for pos, t in enumerate(terms):
            if isinstance(t, int) and t not in bound:
                if t in first:
                    same.append((first[t], pos))
                else:
                    first[t] = pos
                    binds.append((pos, t))
            elif trigger and isinstance(t, str):
                consts.append((pos, t))
            else:
                lookup.append(pos)
        step.binds, step.same, step.consts = tuple(binds), tuple(same), tuple(consts)
        if not trigger:
            if binds:
                step.index = self._index_id(predicate, tuple(lookup))
                step.key = tuple(terms[p] for p in lookup)
            else:
                step.member = True
                step.key = terms
        bound.update(v for _, v in binds)
        return step

    # -- running ----------------------------------------------------------------------

    def _insert(self, predicate: str, args: tuple[str, ...]) -> None:
        self._facts.setdefault(predicate, set()).add(args)
        for index, positions in self._by_predicate.get(predicate, ()):
            key = tuple([args[p] for p in positions])
            bucket = self._indexes[index].get(key)
            if bucket is None:
                self._indexes[index][key] = [args]
            else:
                bucket.append(args)

    def run(self) -> None:
        """Reach every fact and ground action."""
        queue = deque(sorted(self.reached))
        for plan in self._initial:
            self._join(plan, 0, [""] * len(plan.pattern.domains), queue)
        triggers = self._triggers
        while queue:
            predicate, args = queue.popleft()
            self._insert(predicate, args)
            for step, plan in triggers.get(predicate, ()):
                vals: Values = [""] * len(plan.pattern.domains)
                if self._match(step, args, vals, plan.pattern):
                    self._join(plan, 1, vals, queue)

    def _match(
        self, step: _Step, args: tuple[str, ...], vals: Values, pattern: SchemaPattern
    ) -> bool:
        for pos, const in step.consts:
            if args[pos] != const:
                return False
        for pos, var in step.binds:
            vals[var] = args[pos]
        for a, b in step.same:
            if args[a] != args[b]:
                return False
        return not step.checks or self._check(step.checks, vals, pattern)

    def _check(self, checks: _Checks, vals: Values, pattern: SchemaPattern) -> bool:
        domains = pattern.domain_sets
        for v in checks.types:
            if vals[v] not in domains[v]:
                return False
        for left, right, positive in checks.eqs:
            if (_value(left, vals) == _value(right, vals)) != positive:
                return False
        for predicate, terms in checks.negs:
            if (predicate, tuple([_value(t, vals) for t in terms])) in self.static:
                return False
        return True

    def _join(self, plan: _Plan, k: int, vals: Values, queue: deque[Fact]) -> None:
        steps = plan.steps
        if k == len(steps):
            self._finish(plan, vals, queue)
            return
        step = steps[k]
        key = tuple([vals[t] if isinstance(t, int) else t for t in step.key])
        if step.member:
            if key in self._facts.get(step.predicate, ()) and (
                not step.checks or self._check(step.checks, vals, plan.pattern)
            ):
                self._join(plan, k + 1, vals, queue)
            return
        for args in self._indexes[step.index].get(key, ()):
            if self._match(step, args, vals, plan.pattern):
                self._join(plan, k + 1, vals, queue)

    def _finish(self, plan: _Plan, vals: Values, queue: deque[Fact]) -> None:
        pattern = plan.pattern
        checks = plan.final_checks
        if not plan.free:
            if not checks or self._check(checks, vals, pattern):
                self._emit(pattern, tuple(vals), queue)
            return
        for combo in product(*(pattern.domains[v] for v in plan.free)):
            for v, value in zip(plan.free, combo, strict=True):
                vals[v] = value
            if not checks or self._check(checks, vals, pattern):
                self._emit(pattern, tuple(vals), queue)

    def _emit(self, pattern: SchemaPattern, args: tuple[str, ...], queue: deque[Fact]) -> None:
        key = (pattern.index, args)
        if key in self.bindings:
            return
        self.bindings.add(key)
        reached = self.reached
        full = args + pattern.consts
        for p, getter in pattern.add:
            fact = (p, getter(full))
            if fact not in reached:
                reached.add(fact)
                queue.append(fact)
        for effect in pattern.effects:  # conditions ignored: an over-approximation
            for p, getter in effect.add:
                fact = (p, getter(full))
                if fact not in reached:
                    reached.add(fact)
                    queue.append(fact)


def _value(term: Term, vals: Values) -> str:
    return vals[term] if isinstance(term, int) else term


def _objects_by_type(problem: Problem) -> Callable[[str], tuple[str, ...]]:
    """The objects (constants first, in declaration order) of each type, subtypes included."""
    types = problem.domain.types
    first: dict[str, str] = {}
    for obj in problem.all_objects:
        first.setdefault(obj.name, obj.type)
    ancestors = {t: frozenset(types.ancestors(t)) for t in set(first.values())}
    cache: dict[str, tuple[str, ...]] = {}

    def objects(type_name: str) -> tuple[str, ...]:
        if type_name not in cache:
            cache[type_name] = tuple(
                name
                for name, t in first.items()
                if type_name == ROOT_TYPE or type_name in ancestors[t]
            )
        return cache[type_name]

    return objects
