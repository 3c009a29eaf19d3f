"""PDDL types and typed names: the hierarchy, its ancestor table, typed declarations."""

from __future__ import annotations

from collections.abc import Sequence

from plansmith.errors import DomainError, InputError, Location, UnsupportedFeatureError
from plansmith.formats._pddl_common import check_type, parse_typed_list
from plansmith.formats._pddl_lexer import Node
from plansmith.model import ROOT_TYPE, TypedName, TypeHierarchy

__all__ = ["parse_types", "ancestor_table", "declare_names", "with_eithers"]


def parse_types(items: Sequence[Node]) -> TypeHierarchy:
    """The hierarchy of ``(:types a b - t t - object)``; a cycle or two parents is an error."""
    parents: dict[str, str] = {}
    where: dict[str, Location] = {}
    for sym, parent, ploc in parse_typed_list(items, "a type name", variable=False):
        name = sym.text
        if parent.startswith("(either "):
            raise UnsupportedFeatureError(
                f"unsupported PDDL feature: an 'either' type as the parent of '{name}'",
                location=ploc,
                hint="give each type one parent; 'either' may type predicates, "
                "parameters and variables",
            )
        if name == ROOT_TYPE:
            if parent != ROOT_TYPE:
                raise DomainError(
                    f"'{ROOT_TYPE}' is the root type and has no parent",
                    location=sym.loc,
                    hint=f"remove '- {parent}' after '{ROOT_TYPE}'",
                )
            continue
        old = parents.get(name)
        if old is not None and old != parent:
            raise DomainError(
                f"type '{name}' declared with two parents, '{old}' and '{parent}'",
                location=sym.loc,
                hint=f"it is first declared at {where[name]}; a type has one parent",
            )
        parents[name] = parent
        where.setdefault(name, sym.loc)
    for parent in sorted(set(parents.values())):
        if parent != ROOT_TYPE and parent not in parents:
            parents[parent] = ROOT_TYPE  # used as a parent without its own declaration
    for start, parent in parents.items():
        chain = [start]
        current = parent
        while current != ROOT_TYPE and current not in chain:
            chain.append(current)
            current = parents[current]
        if current == start:
            raise DomainError(
                f"type cycle: {' - '.join([*chain, start])}",
                location=where[start],
                hint="every chain of parents must end at 'object'",
            )
    return TypeHierarchy.of(parents)


def ancestor_table(types: TypeHierarchy) -> dict[str, frozenset[str]]:
    """Each type's ancestors, itself and ``object`` included."""
    return {t: frozenset(types.ancestors(t)) for t in types.names}


def with_eithers(types: TypeHierarchy, ancestors: dict[str, frozenset[str]]) -> TypeHierarchy:
    """``types`` with the ``either`` types the ancestor table gathered while reading."""
    eithers = {
        t: tuple(t[len("(either ") : -1].split()) for t in ancestors if t.startswith("(either ")
    }
    if not eithers:
        return types
    return TypeHierarchy.of(dict(types.parents), eithers)


def declare_names(
    items: Sequence[Node],
    types: dict[str, frozenset[str]],
    known: dict[str, TypedName],
    *,
    kind: str,
    error: type[InputError],
) -> list[TypedName]:
    """Typed constants or objects; ``known`` (name to declaration) is updated.

    A name declared again with the same type is kept once; with another type it
    is an error.
    """
    out: list[TypedName] = []
    for sym, typ, tloc in parse_typed_list(items, f"a {kind} name", variable=False):
        if typ.startswith("(either "):
            raise UnsupportedFeatureError(
                f"unsupported PDDL feature: {kind} '{sym.text}' of an 'either' type",
                location=tloc,
                hint=f"give each {kind} one type; 'either' may type predicates, parameters "
                "and variables",
            )
        check_type(typ, types, tloc, error)
        prev = known.get(sym.text)
        if prev is not None:
            if prev.type != typ:
                raise error(
                    f"{kind} '{sym.text}' declared twice, as '{prev.type}' and as '{typ}'",
                    location=sym.loc,
                    hint=f"it is first declared at {prev.loc}; give it one type",
                )
            continue
        name = TypedName(sym.text, typ, sym.loc)
        known[sym.text] = name
        out.append(name)
    return out
