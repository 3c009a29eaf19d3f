"""Read a PDDL domain into a :class:`~plansmith.model.Domain`.

Supported: STRIPS, ``:typing`` (a type hierarchy rooted at ``object``, typed
constants, predicates and parameters), negative preconditions, equality,
``:action-costs``, ADL (quantifiers, disjunctions, conditional effects,
``either`` types) and ``:derived-predicates``: ``(:derived (p ?x ...) CONDITION)``
with ``p`` declared in ``(:predicates ...)``, the condition read like a
precondition; the rules must be stratifiable (no derived predicate depends on
its own negation), and a derived predicate may not appear in an effect or in a
problem's init. The reader is tolerant where the input is unambiguous:
keywords and names are case-insensitive (all lower-cased), sections may come
in any order or be repeated (their contents are merged), types may be used
without declaring ``:typing``, a parent type used without its own declaration
is taken as a child of ``object``, and ``(total-cost)`` may be increased
without declaring it in ``(:functions ...)``.

Requirement flags: every PDDL flag is accepted when declared (see
:mod:`plansmith.formats._pddl_common`); only the *use* of an unsupported
feature (numeric fluents other than action costs, durative actions, ...) raises
:class:`~plansmith.errors.UnsupportedFeatureError`.

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
    did_you_mean,
    expect_list,
    expect_name,
    group_sections,
    parse_define,
    parse_requirements,
    parse_typed_list,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList, Sym, read_sexpr
from plansmith.formats._pddl_logic import RESERVED, Scope, parse_goal
from plansmith.formats._pddl_types import (
    ancestor_table,
    declare_names,
    parse_types,
    with_eithers,
)
from plansmith.model import (
    ROOT_TYPE,
    ActionSchema,
    Axiom,
    Domain,
    Predicate,
    TypedName,
    axiom_strata,
)

__all__ = ["parse_pddl_domain"]

_SECTIONS = (
    ":requirements",
    ":types",
    ":constants",
    ":predicates",
    ":functions",
    ":action",
    ":derived",
)
_REFUSED = {
    ":durative-action": ("durative actions", ":durative-actions"),
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
    axioms = [_axiom(section, scope) for section in by_key[":derived"]]
    axiom_strata(axioms)  # refuses rules that are not stratifiable, at one of them
    scope.derived = frozenset(a.name for a in axioms)
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
        axioms=tuple(axioms),
    )


def _axiom(section: SList, scope: Scope) -> Axiom:
    """``(:derived (p ?x ?y - t) CONDITION)``: untyped variables take the types the
    predicate declares."""
    hint = "write '(:derived (pred ?x ...) CONDITION)'"
    if len(section.items) != 3:
        raise ParseError(
            f"'(:derived' takes a head and a condition, got {len(section.items) - 1} part(s)",
            location=section.loc,
            hint=hint,
        )
    head = expect_list(section.items[1], "the derived atom '(pred ?x ...)'")
    if not head.items:
        raise ParseError("empty derived atom '()'", location=head.loc, hint=hint)
    name = expect_name(head.items[0], "a predicate name")
    decl = scope.predicates.get(name.text)
    if decl is None:
        raise DomainError(
            f"unknown predicate '{name.text}' in '(:derived'",
            location=name.loc,
            hint=did_you_mean(
                name.text, scope.predicates, "declare it in (:predicates ...) as well"
            ),
        )
    params: list[TypedName] = []
    for sym, typ, tloc in parse_typed_list(head.items[1:], "a variable", variable=True):
        check_type(typ, scope.ancestors, tloc, DomainError)
        params.append(TypedName(sym.text, typ, sym.loc))
    if len(params) != decl.arity:
        raise DomainError(
            f"derived predicate '{name.text}' takes {decl.arity} argument(s), got {len(params)}",
            location=head.loc,
            hint=f"it is declared at {decl.loc}" if decl.loc else hint,
        )
    if len({p.name for p in params}) != len(params):
        raise DomainError(
            f"a variable is repeated in the head of derived predicate '{name.text}'",
            location=head.loc,
            hint="give each argument its own variable (use '=' in the condition instead)",
        )
    params = [
        replace(p, type=d.type) if p.type == ROOT_TYPE else _checked_param(p, d, scope, name.text)
        for p, d in zip(params, decl.parameters, strict=True)
    ]
    inner = replace(
        scope,
        variables={p.name: p.type for p in params},
        where=f" in derived predicate '{name.text}'",
    )
    pre, formulas = parse_goal(section.items[2], inner)
    return Axiom(name.text, tuple(params), tuple(pre), tuple(formulas), section.loc)


def _checked_param(param: TypedName, declared: TypedName, scope: Scope, name: str) -> TypedName:
    if not scope.compatible(param.type, declared.type, variable=False):
        raise DomainError(
            f"variable '{param.name}' of derived predicate '{name}' is a '{param.type}', "
            f"but the predicate expects '{declared.type}'",
            location=param.loc,
            hint=f"write '{param.name} - {declared.type}' or leave the type out",
        )
    return param


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
