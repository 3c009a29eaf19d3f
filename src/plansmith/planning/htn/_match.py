"""Bindings of a method's extra parameters, found by matching its precondition.

The task's own parameters are bound by the call. Each extra parameter is bound
by matching the positive literals that mention it against the state's atoms,
in order; a parameter no positive literal binds ranges over the objects of its
type. The remaining conditions (negative literals, equalities, literals with
no free parameter) are checked on each full binding. Everything is enumerated
in a fixed order (atoms sorted, objects as declared), so plans do not depend on
hashing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product

from plansmith.model import Atom, Condition, Equality, Literal, Method, Problem, TypedName

__all__ = ["Matcher", "holds"]

Binding = dict[str, str]


def holds(cond: Condition, sub: Mapping[str, str], state: frozenset[Atom]) -> bool:
    """Whether a condition, with its terms substituted by ``sub``, holds in ``state``."""
    if isinstance(cond, Equality):
        left, right = sub.get(cond.left, cond.left), sub.get(cond.right, cond.right)
        return (left == right) == cond.positive
    atom = Atom(cond.atom.predicate, tuple(sub.get(t, t) for t in cond.atom.args))
    return (atom in state) == cond.positive


@dataclass(frozen=True, slots=True)
class _Free:
    """The method's free parameters, the conditions left to check, and the state."""

    free: dict[str, TypedName]
    checks: list[Condition]
    state: frozenset[Atom]


class Matcher:
    """Enumerates method bindings for one problem; caches an atom index per state."""

    def __init__(self, problem: Problem) -> None:
        hierarchy = problem.domain.types
        objects = problem.all_objects
        self._type_of = {o.name: o.type for o in objects}
        self._hierarchy = hierarchy
        self._of_type: dict[str, tuple[str, ...]] = {}
        self._objects = objects
        self._index_state: frozenset[Atom] | None = None
        self._index: dict[str, tuple[Atom, ...]] = {}

    def objects_of(self, type_name: str) -> tuple[str, ...]:
        found = self._of_type.get(type_name)
        if found is None:
            found = tuple(
                o.name for o in self._objects if self._hierarchy.is_subtype(o.type, type_name)
            )
            self._of_type[type_name] = found
        return found

    def _is_a(self, name: str, type_name: str) -> bool:
        kind = self._type_of.get(name)
        return kind is not None and self._hierarchy.is_subtype(kind, type_name)

    def _atoms(self, state: frozenset[Atom], predicate: str) -> tuple[Atom, ...]:
        if self._index_state is not state:
            index: dict[str, list[Atom]] = {}
            for atom in sorted(state):
                index.setdefault(atom.predicate, []).append(atom)
            self._index = {k: tuple(v) for k, v in index.items()}
            self._index_state = state
        return self._index.get(predicate, ())

    def bindings(self, method: Method, sub: Binding, state: frozenset[Atom]) -> Iterator[Binding]:
        """Every binding of ``method``'s parameters under which its precondition holds."""
        free = {p.name: p for p in method.parameters}
        if not free:
            if all(holds(c, sub, state) for c in method.precondition):
                yield sub
            return
        matching: list[Literal] = []
        checks: list[Condition] = []
        for cond in method.precondition:
            if (
                isinstance(cond, Literal)
                and cond.positive
                and any(t in free for t in cond.atom.args)
            ):
                matching.append(cond)
            elif not any(t in free for t in _terms(cond)):
                if not holds(cond, sub, state):
                    return  # a condition on bound terms fails: no binding can help
            else:
                checks.append(cond)
        yield from self._match(matching, 0, sub, _Free(free, checks, state))

    def _match(
        self, matching: list[Literal], k: int, sub: Binding, ctx: _Free
    ) -> Iterator[Binding]:
        if k == len(matching):
            rest = [p for name, p in ctx.free.items() if name not in sub]
            for values in product(*(self.objects_of(p.type) for p in rest)):
                full = sub | {p.name: v for p, v in zip(rest, values, strict=True)}
                if all(holds(c, full, ctx.state) for c in ctx.checks):
                    yield full
            return
        pattern = matching[k].atom
        for atom in self._atoms(ctx.state, pattern.predicate):
            extended = self._unify(pattern.args, atom.args, sub, ctx.free)
            if extended is not None:
                yield from self._match(matching, k + 1, extended, ctx)

    def _unify(
        self,
        pattern: tuple[str, ...],
        values: tuple[str, ...],
        sub: Binding,
        free: dict[str, TypedName],
    ) -> Binding | None:
        if len(pattern) != len(values):
            return None
        out = sub
        for term, value in zip(pattern, values, strict=True):
            bound = out.get(term)
            if bound is not None:
                if bound != value:
                    return None
            elif term in free:
                if not self._is_a(value, free[term].type):
                    return None
                out = out | {term: value}
            elif term != value:
                return None
        return out


def _terms(cond: Condition) -> tuple[str, ...]:
    if isinstance(cond, Equality):
        return (cond.left, cond.right)
    return cond.atom.args
