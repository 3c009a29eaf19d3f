"""Atoms, literals, typed names and the type hierarchy: the vocabulary of domains."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from plansmith.errors import Location

__all__ = [
    "ROOT_TYPE",
    "Atom",
    "Literal",
    "Equality",
    "Condition",
    "Formula",
    "GoalPart",
    "TypedName",
    "TypeHierarchy",
    "either_type",
    "OMIT_DEFAULT",
]

# Field metadata: the canonical form (and so content hashes) leaves the field out
# while it holds its default, so that adding such a field changes no hash.
OMIT_DEFAULT = {"omit_default": True}

ROOT_TYPE = "object"


@dataclass(frozen=True, slots=True, order=True)
class Atom:
    """``predicate(arg, ...)``; arguments are parameter names, or object names once ground."""

    predicate: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(self.args)})"


@dataclass(frozen=True, slots=True)
class Literal:
    """An atom or its negation (``not pred(...)``)."""

    atom: Atom
    positive: bool = True
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"not {self.atom}"


@dataclass(frozen=True, slots=True)
class Equality:
    """``left == right`` (``positive``) or ``left != right`` between two terms."""

    left: str
    right: str
    positive: bool = True
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return f"{self.left} {'==' if self.positive else '!='} {self.right}"


Condition = Literal | Equality


@dataclass(frozen=True, slots=True)
class Formula:
    """A condition beyond a conjunction of literals, in negation normal form.

    ``kind`` is ``and``, ``or``, ``forall`` or ``exists``; ``parts`` are literals,
    (in)equalities or formulas; ``variables`` are those a quantifier binds.
    Negations are pushed to the literals and ``imply`` is written as ``or``
    when a file is read, so no other kinds exist.
    """

    kind: str
    parts: tuple[Condition | Formula, ...]
    variables: tuple[TypedName, ...] = ()
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        inner = ", ".join(str(p) for p in self.parts)
        if self.variables:
            names = " ".join(f"{v.name} - {v.type}" for v in self.variables)
            return f"{self.kind} ({names}): ({inner})"
        return f"{self.kind}({inner})"


GoalPart = Condition | Formula


@dataclass(frozen=True, slots=True)
class TypedName:
    """A parameter, object or constant: a name with its type."""

    name: str
    type: str = ROOT_TYPE
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


def either_type(members: tuple[str, ...]) -> str:
    """The name of PDDL's ``(either a b ...)``: ``(either a b)``, members sorted and
    unique; a single member names that type itself."""
    unique = sorted(set(members))
    if len(unique) == 1:
        return unique[0]
    return f"(either {' '.join(unique)})"


@dataclass(frozen=True, slots=True)
class TypeHierarchy:
    """Types with their parents; ``object`` is the root and always present.

    ``parents`` maps each declared type (except the root) to its parent, as pairs
    sorted by name so that equal hierarchies compare and hash equal. ``eithers``
    are the union types ``(either a b)`` the domain uses (name, members), sorted:
    an ``either`` type is an ancestor of each type below one of its members.
    """

    parents: tuple[tuple[str, str], ...] = ()
    eithers: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), metadata=OMIT_DEFAULT)

    @staticmethod
    def of(
        mapping: dict[str, str], eithers: dict[str, tuple[str, ...]] | None = None
    ) -> TypeHierarchy:
        return TypeHierarchy(
            tuple(sorted((k, v) for k, v in mapping.items() if k != ROOT_TYPE)),
            tuple(sorted((eithers or {}).items())),
        )

    @property
    def names(self) -> frozenset[str]:
        return frozenset({ROOT_TYPE, *(t for t, _ in self.parents), *(e for e, _ in self.eithers)})

    def parent(self, name: str) -> str | None:
        for t, p in self.parents:
            if t == name:
                return p
        return None

    def ancestors(self, name: str) -> Iterator[str]:
        """``name`` itself, then its parent, up to the root (cycle-safe), then the
        ``either`` types that hold one of these."""
        table = dict(self.parents)
        seen: set[str] = set()
        current: str | None = name
        while current is not None and current not in seen:
            seen.add(current)
            yield current
            current = table.get(current)
        if ROOT_TYPE not in seen:
            yield ROOT_TYPE
        for either, members in self.eithers:
            if either not in seen and not seen.isdisjoint(members):
                yield either

    def is_subtype(self, name: str, ancestor: str) -> bool:
        return ancestor == ROOT_TYPE or any(t == ancestor for t in self.ancestors(name))
