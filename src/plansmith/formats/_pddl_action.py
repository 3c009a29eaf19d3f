"""One PDDL ``(:action ...)``: typed parameters, a precondition, effects and a cost.

Action costs (``:action-costs``): ``(increase (total-cost) 5)`` gives a number,
``(increase (total-cost) (road-length ?x ?y))`` an atom over a declared
function, which the problem's ``(= (road-length a b) 5)`` values. Several
numeric increases add up. Other numeric effects are refused as numeric fluents.
"""

from __future__ import annotations

from dataclasses import replace

from plansmith.errors import DomainError, ParseError
from plansmith.formats._pddl_common import (
    check_arity,
    check_type,
    did_you_mean,
    expect_list,
    expect_name,
    number_of,
    parse_typed_list,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList, Sym
from plansmith.formats._pddl_logic import Scope, parse_atom, parse_goal, parse_variables
from plansmith.model import (
    ActionSchema,
    Atom,
    ConditionalEffect,
    GoalPart,
    Literal,
    Number,
    TypedName,
)

__all__ = ["TOTAL_COST", "parse_action"]

TOTAL_COST = "total-cost"

_KEYS = (":parameters", ":precondition", ":effect")
_REFUSED_KEYS = {
    ":duration": ("durative actions (':duration')", ":durative-actions"),
    ":condition": ("durative actions (':condition')", ":durative-actions"),
    ":observe": ("sensing actions (':observe')", None),
}
_REFUSED_EFFECTS = {
    "decrease": ("numeric effects ('decrease')", ":numeric-fluents"),
    "assign": ("numeric effects ('assign')", ":numeric-fluents"),
    "scale-up": ("numeric effects ('scale-up')", ":numeric-fluents"),
    "scale-down": ("numeric effects ('scale-down')", ":numeric-fluents"),
    "oneof": ("non-deterministic effects ('oneof')", ":non-deterministic"),
}

CostTerm = Number | Atom


def parse_action(node: SList, scope: Scope) -> tuple[ActionSchema, bool]:
    """The schema, and whether it had an explicit cost (an ``increase`` of total-cost).

    Without one, the cost is left at 1; the domain reader sets it to 0 when other
    actions of the domain do have costs (PDDL semantics).
    """
    items = node.items
    if len(items) < 2:
        raise ParseError(
            "'(:action' has no name",
            location=node.loc,
            hint="write '(:action NAME :parameters (...) :precondition ... :effect ...)'",
        )
    name = expect_name(items[1], "an action name")
    parts: dict[str, Node] = {}
    i = 2
    while i < len(items):
        key = items[i]
        if isinstance(key, SList) or not key.text.startswith(":"):
            raise ParseError(
                f"expected ':parameters', ':precondition' or ':effect' in action '{name.text}'",
                location=key.loc,
                hint="each part of an action starts with its ':keyword'",
            )
        if key.text in _REFUSED_KEYS:
            raise unsupported(*_REFUSED_KEYS[key.text], key)
        if key.text not in _KEYS:
            raise DomainError(
                f"unknown action keyword '{key.text}' in action '{name.text}'",
                location=key.loc,
                hint=did_you_mean(key.text, _KEYS, "use ':parameters', ':precondition', ':effect'"),
            )
        if key.text in parts:
            raise DomainError(
                f"'{key.text}' given twice in action '{name.text}'",
                location=key.loc,
                hint="merge the two into one",
            )
        if i + 1 >= len(items):
            raise ParseError(
                f"'{key.text}' has no value in action '{name.text}'",
                location=key.loc,
                hint="write '()' for an empty part",
            )
        parts[key.text] = items[i + 1]
        i += 2
    params = _parameters(parts.get(":parameters"), scope, name.text)
    variables = {p.name: p.type for p in params}
    scope = replace(scope, variables=variables, where=f" in action '{name.text}'")
    pre, formulas = (
        parse_goal(parts[":precondition"], scope) if ":precondition" in parts else ([], [])
    )
    effects: list[Literal] = []
    conditional: list[ConditionalEffect] = []
    costs: list[tuple[CostTerm, Node]] = []
    if ":effect" in parts:
        _effect(parts[":effect"], scope, _Into(effects, conditional, costs))
    schema = ActionSchema(
        name=name.text,
        parameters=tuple(params),
        precondition=tuple(pre),
        effect=tuple(effects),
        cost=_total(costs),
        loc=node.loc,
        formula=tuple(formulas),
        conditional=tuple(conditional),
    )
    return schema, bool(costs)


def _parameters(node: Node | None, scope: Scope, action: str) -> list[TypedName]:
    if node is None:
        return []
    lst = expect_list(node, "a parameter list")
    params: list[TypedName] = []
    seen: set[str] = set()
    for sym, typ, tloc in parse_typed_list(lst.items, "a parameter", variable=True):
        check_type(typ, scope.ancestors, tloc, DomainError)
        if sym.text in seen:
            raise DomainError(
                f"parameter '{sym.text}' declared twice in action '{action}'",
                location=sym.loc,
                hint="give each parameter its own name",
            )
        seen.add(sym.text)
        params.append(TypedName(sym.text, typ, sym.loc))
    return params


class _Into:
    """Where effects go: plain literals, conditional effects, cost increases; and the
    context of the ``forall``/``when`` being read (its variables and condition)."""

    def __init__(
        self,
        effects: list[Literal],
        conditional: list[ConditionalEffect],
        costs: list[tuple[CostTerm, Node]],
    ) -> None:
        self.effects = effects
        self.conditional = conditional
        self.costs = costs
        self.variables: tuple[TypedName, ...] = ()
        self.condition: tuple[GoalPart, ...] = ()
        self.loc: Node | None = None

    def literal(self, literal: Literal) -> None:
        if self.loc is None:
            self.effects.append(literal)
            return
        self.conditional.append(
            ConditionalEffect(self.variables, self.condition, (literal,), self.loc.loc)
        )

    def inner(
        self, node: Node, variables: tuple[TypedName, ...], condition: tuple[GoalPart, ...]
    ) -> _Into:
        out = _Into(self.effects, self.conditional, self.costs)
        out.variables = self.variables + variables
        out.condition = self.condition + condition
        out.loc = self.loc or node
        return out


def _effect(node: Node, scope: Scope, into: _Into) -> None:
    lst = expect_list(node, "an effect")
    if not lst.items:
        return
    head = lst.items[0]
    word = head.text if isinstance(head, Sym) else ""
    if word == "and":
        for child in lst.items[1:]:
            _effect(child, scope, into)
    elif word == "forall":
        check_arity(lst, 2, "variables and an effect", "write '(forall (?x - type) EFFECT)'")
        variables = parse_variables(lst.items[1], scope)
        names = {v.name: v.type for v in variables}
        bound = replace(scope, variables={**scope.variables, **names})
        _effect(lst.items[2], bound, into.inner(lst, tuple(variables), ()))
    elif word == "when":
        check_arity(lst, 2, "a condition and an effect", "write '(when CONDITION EFFECT)'")
        conditions, formulas = parse_goal(lst.items[1], scope)
        _effect(lst.items[2], scope, into.inner(lst, (), (*conditions, *formulas)))
    elif word == "not":
        check_arity(lst, 1, "one atom", "write '(not (pred arg ...))'")
        inner = expect_list(lst.items[1], "an atom")
        first = inner.items[0] if inner.items else None
        if isinstance(first, Sym) and first.text in ("not", "and"):
            raise ParseError(
                "an effect deletes single atoms: '(not (pred arg ...))'",
                location=inner.loc,
                hint="write one '(not (pred ...))' per deleted atom inside '(and ...)'",
            )
        _no_equality(inner)
        into.literal(Literal(_effect_atom(inner, scope), False, lst.loc))
    elif word == "increase":
        if into.loc is not None:
            raise unsupported("cost increases inside 'when' or 'forall'", ":numeric-fluents", lst)
        into.costs.append((_increase(lst, scope), lst))
    elif word in _REFUSED_EFFECTS:
        raise unsupported(*_REFUSED_EFFECTS[word], lst)
    elif word in ("or", "imply", "exists", "preference", ">", "<", ">=", "<="):
        raise DomainError(
            f"'{word}' cannot appear in an effect",
            location=lst.loc,
            hint="an effect is a conjunction of atoms, '(not atom)' and cost increases",
        )
    else:
        _no_equality(lst)
        into.literal(Literal(_effect_atom(lst, scope), True, lst.loc))


def _effect_atom(node: SList, scope: Scope) -> Atom:
    atom = parse_atom(node, scope)
    if atom.predicate in scope.derived:
        raise DomainError(
            f"derived predicate '{atom.predicate}' cannot appear in an effect{scope.where}",
            location=node.loc,
            hint="its value follows from its '(:derived ...)' rules in every state; change "
            "the atoms its rules use instead",
        )
    return atom


def _no_equality(node: SList) -> None:
    if node.items and isinstance(node.items[0], Sym) and node.items[0].text == "=":
        raise DomainError(
            "equality cannot be an effect",
            location=node.loc,
            hint="'(= a b)' belongs in a precondition",
        )


def _increase(node: SList, scope: Scope) -> CostTerm:
    hint = "write '(increase (total-cost) 1)'"
    check_arity(node, 2, "a function and a value", hint, counted=" argument(s)")
    target = expect_list(node.items[1], "a function like '(total-cost)'")
    head = target.items[0] if target.items else None
    if not (isinstance(head, Sym) and head.text == TOTAL_COST and len(target.items) == 1):
        if isinstance(head, Sym) and head.text in scope.functions:
            raise unsupported(
                f"numeric effects on '{head.text}' (only (total-cost) may be increased)",
                ":numeric-fluents",
                target,
            )
        raise DomainError(
            "only '(total-cost)' may be increased",
            location=target.loc,
            hint="write '(increase (total-cost) VALUE)' for an action cost",
        )
    value = node.items[2]
    number = number_of(value)
    if number is not None:
        if number < 0:
            raise DomainError(
                f"negative action cost {number}",
                location=value.loc,
                hint="action costs must be zero or more",
            )
        return number
    if isinstance(value, Sym):
        raise DomainError(
            f"expected a number or a function term as the cost, found '{value.text}'",
            location=value.loc,
            hint="write '(increase (total-cost) 5)' or '(increase (total-cost) (f ?x))'",
        )
    vhead = value.items[0] if value.items else None
    if isinstance(vhead, Sym) and vhead.text in ("+", "-", "*", "/"):
        raise unsupported(f"arithmetic in action costs ('{vhead.text}')", ":numeric-fluents", value)
    if isinstance(vhead, Sym) and vhead.text == TOTAL_COST:
        raise unsupported("costs that read (total-cost)", ":numeric-fluents", value)
    return parse_atom(value, scope, function=True)


def _total(costs: list[tuple[CostTerm, Node]]) -> CostTerm:
    if not costs:
        return 1
    if len(costs) == 1:
        return costs[0][0]
    total: Number = 0
    for term, where in costs:
        if isinstance(term, Atom):
            raise unsupported("an action cost that adds a function term to others", None, where)
        total += term
    return total
