"""Read a PDDL domain into a :class:`~plansmith.model.Domain`.

Supported: STRIPS, ``:typing`` (a type hierarchy rooted at ``object``, typed
constants, predicates and parameters), negative preconditions, equality and
``:action-costs``. The reader is tolerant where the input is unambiguous:
keywords and names are case-insensitive (all lower-cased), sections may come
in any order or be repeated (their contents are merged), types may be used
without declaring ``:typing``, a parent type used without its own declaration
is taken as a child of ``object``, and ``(total-cost)`` may be increased
without declaring it in ``(:functions ...)``.

Requirement flags: every PDDL flag is accepted when declared (see
:mod:`plansmith.formats._pddl_common`); only the *use* of an unsupported
feature (``when``, ``forall``, ``exists``, ``or``, ``imply``, numeric fluents
other than action costs, durative actions, derived predicates, ``either``
types, ...) raises :class:`~plansmith.errors.UnsupportedFeatureError`.

Costs: when no action of the domain increases ``(total-cost)``, every action
costs 1 (PDDL without costs counts steps). When some do, an action without an
``increase`` costs 0, as PDDL's ``:action-costs`` defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from plansmith.errors import DomainError, ParseError
from plansmith.formats._pddl_action import TOTAL_COST, parse_action
from plansmith.formats._pddl_common import (
    check_type,
    expect_list,
    expect_name,
    group_sections,
    parse_define,
    parse_requirements,
    parse_typed_list,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList, Sym, read_sexpr
from plansmith.formats._pddl_logic import RESERVED, Scope
from plansmith.formats._pddl_types import (
    ancestor_table,
    declare_names,
    parse_types,
    with_eithers,
)
from plansmith.model import ActionSchema, Domain, Predicate, TypedName

__all__ = ["parse_pddl_domain"]

_SECTIONS = (":requirements", ":types", ":constants", ":predicates", ":functions", ":action")
_REFUSED = {
    ":durative-action": ("durative actions", ":durative-actions"),
    ":derived": ("derived predicates", ":derived-predicates"),
    ":constraints": ("constraints", ":constraints"),
    ":process": ("processes (PDDL+)", ":time"),
    ":event": ("events (PDDL+)", ":time"),
    ":axiom": ("axioms", ":domain-axioms"),
    ":extends": ("domain extension", None),
}


def parse_pddl_domain(text: str, file: str | None = None) -> Domain:
    """The domain that ``text`` defines; ``file`` is used in error locations."""
    name, sections = parse_define(read_sexpr(text, file), "domain")
    by_key = group_sections(sections, "domain", _SECTIONS, _REFUSED, DomainError)

    requirements: list[str] = []
    for section in by_key[":requirements"]:
        flags = parse_requirements(section, DomainError)
        requirements += [f for f in flags if f not in requirements]
    parents = parse_types(_contents(by_key[":types"]))
    ancestors = ancestor_table(parents)
    constants = declare_names(
        _contents(by_key[":constants"]), ancestors, {}, kind="constant", error=DomainError
    )
    predicates = _predicates(_contents(by_key[":predicates"]), ancestors)
    functions = _functions(_contents(by_key[":functions"]), ancestors, predicates)
    scope = Scope(
        error=DomainError,
        ancestors=ancestors,
        predicates={p.name: p for p in predicates},
        functions={f.name: f for f in functions if f.name != TOTAL_COST},
        objects={c.name: c.type for c in constants},
        object_kind="constant",
    )
    actions: list[ActionSchema] = []
    costed: list[bool] = []
    seen: dict[str, ActionSchema] = {}
    for section in by_key[":action"]:
        action, has_cost = parse_action(section, scope)
        if action.name in seen:
            raise DomainError(
                f"duplicate action '{action.name}'",
                location=section.loc,
                hint=f"it is already defined at {seen[action.name].loc}; rename one of them",
            )
        seen[action.name] = action
        actions.append(action)
        costed.append(has_cost)
    if any(costed):
        actions = [a if c else replace(a, cost=0) for a, c in zip(actions, costed, strict=True)]
    return Domain(
        name=name.text,
        types=with_eithers(parents, ancestors),
        constants=tuple(constants),
        predicates=tuple(predicates),
        functions=tuple(functions),
        actions=tuple(actions),
        requirements=tuple(requirements),
        source=file,
    )


def _contents(sections: list[SList]) -> list[Node]:
    return [n for s in sections for n in s.items[1:]]


def _parameters(items: Sequence[Node], ancestors: dict[str, frozenset[str]]) -> list[TypedName]:
    out: list[TypedName] = []
    for sym, typ, tloc in parse_typed_list(items, "a parameter", variable=True):
        check_type(typ, ancestors, tloc, DomainError)
        out.append(TypedName(sym.text, typ, sym.loc))
    return out


def _signature(node: Node, what: str, ancestors: dict[str, frozenset[str]]) -> Predicate:
    lst = expect_list(node, f"a {what} like '(name ?x - type)'")
    if not lst.items:
        raise ParseError(
            f"empty {what} declaration '()'",
            location=lst.loc,
            hint="write '(name ?x - type ...)' or remove it",
        )
    name = expect_name(lst.items[0], f"a {what} name")
    if name.text in RESERVED:
        raise DomainError(
            f"'{name.text}' is a PDDL keyword and cannot name a {what}",
            location=name.loc,
            hint="choose another name",
        )
    return Predicate(name.text, tuple(_parameters(lst.items[1:], ancestors)), lst.loc)


def _predicates(items: Sequence[Node], ancestors: dict[str, frozenset[str]]) -> list[Predicate]:
    out: dict[str, Predicate] = {}
    for node in items:
        pred = _signature(node, "predicate", ancestors)
        if pred.name in out:
            raise DomainError(
                f"predicate '{pred.name}' declared twice",
                location=pred.loc,
                hint=f"it is first declared at {out[pred.name].loc}; remove one",
            )
        out[pred.name] = pred
    return list(out.values())


def _functions(
    items: Sequence[Node], ancestors: dict[str, frozenset[str]], predicates: list[Predicate]
) -> list[Predicate]:
    """``(:functions (total-cost) - number (f ?x - t) - number)``; only numbers."""
    out: dict[str, Predicate] = {}
    taken = {p.name: p for p in predicates}
    pending = False
    i = 0
    while i < len(items):
        node = items[i]
        if isinstance(node, Sym) and node.text == "-":
            if not pending or i + 1 >= len(items):
                raise ParseError(
                    "'-' must stand between functions and their type 'number'",
                    location=node.loc,
                    hint="write '(:functions (total-cost) - number)'",
                )
            typ = expect_name(items[i + 1], "a function type")
            if typ.text != "number":
                raise unsupported(f"functions of type '{typ.text}'", ":object-fluents", typ)
            pending = False
            i += 2
            continue
        func = _signature(node, "function", ancestors)
        clash = out.get(func.name) or taken.get(func.name)
        if clash is not None:
            raise DomainError(
                f"'{func.name}' declared twice (as a predicate or function)",
                location=func.loc,
                hint=f"it is first declared at {clash.loc}; rename one",
            )
        if func.name == TOTAL_COST and func.arity:
            raise DomainError(
                "'total-cost' takes no arguments",
                location=func.loc,
                hint="write '(total-cost)'",
            )
        out[func.name] = func
        pending = True
        i += 1
    return list(out.values())
