"""Action schemas compiled for grounding: atoms as terms over parameter indexes.

A *fact* is a ground atom as ``(predicate, args)``. A *term* is a parameter
index or a constant. :class:`SchemaPattern` also keeps, for the schema's fluent
atoms, *templates* that ground them fast: ``(predicate, getter)`` where
``getter`` picks the atom's arguments out of ``args + consts`` with a C-level
``itemgetter``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from plansmith.model import ActionSchema, Equality, Literal

__all__ = ["Fact", "Term", "Getter", "Template", "AtomPattern", "SchemaPattern", "EffectPattern"]

Fact = tuple[str, tuple[str, ...]]
Term = int | str  # a parameter index, or a constant
Getter = Callable[[tuple[str, ...]], tuple[str, ...]]
Template = tuple[str, Getter]
AtomPattern = tuple[str, tuple[Term, ...]]


class EffectPattern:
    """A conditional effect of a schema: equalities, its condition's static atoms
    (checked at grounding) and templates of its fluent condition atoms and effects."""

    __slots__ = ("add", "delete", "eqs", "neg", "pre", "static_neg", "static_pos")

    def __init__(self) -> None:
        self.eqs: list[tuple[Term, Term, bool]] = []
        self.static_pos: list[Template] = []
        self.static_neg: list[Template] = []
        self.pre: list[Template] = []
        self.neg: list[Template] = []
        self.add: list[Template] = []
        self.delete: list[Template] = []


class SchemaPattern:
    """An action schema with typed parameter domains, atom patterns and templates."""

    def __init__(
        self,
        index: int,
        schema: ActionSchema,
        domains: list[tuple[str, ...]],
        fluent: set[str],
    ) -> None:
        self.index = index
        self.schema = schema
        self.substitute = {p.name: i for i, p in enumerate(schema.parameters)}
        self.domains = domains  # the objects each parameter ranges over, in order
        self.domain_sets = [frozenset(d) for d in domains]
        self.pos: list[AtomPattern] = []
        neg: list[AtomPattern] = []
        self.eqs: list[tuple[Term, Term, bool]] = []
        for cond in schema.precondition:
            if isinstance(cond, Equality):
                self.eqs.append((self._term(cond.left), self._term(cond.right), cond.positive))
            else:
                atom = (cond.atom.predicate, tuple(self._term(t) for t in cond.atom.args))
                (self.pos if cond.positive else neg).append(atom)
        self.static_neg = [a for a in neg if a[0] not in fluent]
        add = [self._atom(e.atom.predicate, e.atom.args) for e in schema.effect if e.positive]
        delete = [
            self._atom(e.atom.predicate, e.atom.args) for e in schema.effect if not e.positive
        ]
        ce_atoms: list[AtomPattern] = []
        for ce in schema.conditional:
            ce_atoms += [
                self._atom(c.atom.predicate, c.atom.args)
                for c in ce.condition
                if isinstance(c, Literal)
            ]
            ce_atoms += [self._atom(e.atom.predicate, e.atom.args) for e in ce.effect]
        consts: dict[str, int] = {}
        for _, terms in [*self.pos, *neg, *add, *delete, *ce_atoms]:
            for t in terms:
                if isinstance(t, str):
                    consts.setdefault(t, len(domains) + len(consts))
        self.consts = tuple(consts)

        def templates(atoms: list[AtomPattern]) -> list[Template]:
            return [
                (p, _getter(tuple(t if isinstance(t, int) else consts[t] for t in terms)))
                for p, terms in atoms
                if p in fluent
            ]

        self.pre = templates(self.pos)
        self.neg = templates(neg)
        self.add = templates(add)
        self.delete = templates(delete)

        def template(atom: AtomPattern) -> Template:
            p, terms = atom
            return p, _getter(tuple(t if isinstance(t, int) else consts[t] for t in terms))

        self.effects: list[EffectPattern] = []
        for ce in schema.conditional:
            pattern = EffectPattern()
            for c in ce.condition:
                if isinstance(c, Equality):
                    pattern.eqs.append((self._term(c.left), self._term(c.right), c.positive))
                elif isinstance(c, Literal):
                    ct = template(self._atom(c.atom.predicate, c.atom.args))
                    if c.atom.predicate in fluent:
                        (pattern.pre if c.positive else pattern.neg).append(ct)
                    else:
                        (pattern.static_pos if c.positive else pattern.static_neg).append(ct)
                else:  # pragma: no cover - compile_adl leaves only literals
                    raise TypeError("a conditional effect's condition must be compiled first")
            for e in ce.effect:
                et = template(self._atom(e.atom.predicate, e.atom.args))
                (pattern.add if e.positive else pattern.delete).append(et)
            self.effects.append(pattern)

    def _term(self, name: str) -> Term:
        return self.substitute.get(name, name)

    def _atom(self, predicate: str, args: tuple[str, ...]) -> AtomPattern:
        return predicate, tuple(self._term(t) for t in args)


def _getter(positions: tuple[int, ...]) -> Getter:
    """A function from ``args + consts`` to the arguments at ``positions``."""
    if not positions:
        return _empty
    if len(positions) == 1:
        single = itemgetter(positions[0])
        return lambda full: (single(full),)
    return itemgetter(*positions)


def _empty(full: tuple[str, ...]) -> tuple[str, ...]:
    return ()
