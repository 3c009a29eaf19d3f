"""Atoms, literals, typed names and the type hierarchy: the vocabulary of domains."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from plansmith.errors import Location

__all__ = ["ROOT_TYPE", "Atom", "Literal", "Equality", "Condition", "TypedName", "TypeHierarchy"]

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
class TypedName:
    """A parameter, object or constant: a name with its type."""

    name: str
    type: str = ROOT_TYPE
    loc: Location | None = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class TypeHierarchy:
    """Types with their parents; ``object`` is the root and always present.

    ``parents`` maps each declared type (except the root) to its parent, as pairs
    sorted by name so that equal hierarchies compare and hash equal.
    """

    parents: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(mapping: dict[str, str]) -> TypeHierarchy:
        return TypeHierarchy(tuple(sorted((k, v) for k, v in mapping.items() if k != ROOT_TYPE)))

    @property
    def names(self) -> frozenset[str]:
        return frozenset({ROOT_TYPE, *(t for t, _ in self.parents)})

    def parent(self, name: str) -> str | None:
        for t, p in self.parents:
            if t == name:
                return p
        return None

    def ancestors(self, name: str) -> Iterator[str]:
        """``name`` itself, then its parent, up to the root (cycle-safe)."""
        table = dict(self.parents)
        seen: set[str] = set()
        current: str | None = name
        while current is not None and current not in seen:
            seen.add(current)
            yield current
            current = table.get(current)
        if ROOT_TYPE not in seen:
            yield ROOT_TYPE

    def is_subtype(self, name: str, ancestor: str) -> bool:
        return ancestor == ROOT_TYPE or any(t == ancestor for t in self.ancestors(name))
