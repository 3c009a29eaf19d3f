"""Terms, atoms and conditions (PDDL goal descriptions) against a scope of names.

The same code reads action preconditions (lifted: variables are the action's
parameters) and problem goals (ground: only objects and constants).

Type checks: a constant or object must be of the declared type or a subtype
of it. A variable is refused only when its type and the declared one are
disjoint (neither is a subtype of the other), because then the atom can never
hold; a variable of a supertype is legal PDDL (the atom is false for objects
outside the declared type) and is kept, as Fast Downward does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from plansmith.errors import InputError, Location, ParseError
from plansmith.formats._pddl_common import (
    check_arity,
    check_type,
    did_you_mean,
    expect_list,
    expect_name,
    parse_typed_list,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList
from plansmith.model import (
    Atom,
    Condition,
    Equality,
    Formula,
    GoalPart,
    Literal,
    Predicate,
    TypedName,
)

__all__ = ["RESERVED", "Scope", "parse_atom", "parse_goal", "parse_variables", "resolve_term"]

_REFUSED: dict[str, tuple[str, str]] = {
    "when": ("conditional effects ('when')", ":conditional-effects"),
    "preference": ("preferences", ":preferences"),
    ">": ("numeric comparisons ('>')", ":numeric-fluents"),
    "<": ("numeric comparisons ('<')", ":numeric-fluents"),
    ">=": ("numeric comparisons ('>=')", ":numeric-fluents"),
    "<=": ("numeric comparisons ('<=')", ":numeric-fluents"),
}

RESERVED = frozenset(
    {
        "and", "not", "=", "or", "imply", "forall", "exists", "either",
        "increase", "decrease", "assign", *_REFUSED,
    }
)  # fmt: skip


@dataclass(slots=True)
class Scope:
    """The names a condition may use, and the error class for a semantic mistake."""

    error: type[InputError]
    ancestors: dict[str, frozenset[str]]
    predicates: dict[str, Predicate]
    functions: dict[str, Predicate]
    objects: dict[str, str]
    object_kind: str
    variables: dict[str, str] = field(default_factory=dict)
    where: str = ""
    derived: frozenset[str] = frozenset()  # derived predicates: no effects, no init facts

    def compatible(self, actual: str, declared: str, *, variable: bool) -> bool:
        if declared in self.ancestors.get(actual, (actual,)):
            return True
        if not variable:
            return False
        # a variable may be of a wider type; 'either' types are compatible when
        # some member of one is compatible with some member of the other
        return any(
            d in self.ancestors.get(a, (a,)) or a in self.ancestors.get(d, (d,))
            for a in _members(actual)
            for d in _members(declared)
        )


def resolve_term(sym: Node, scope: Scope) -> tuple[str, str, bool]:
    """``(name, type, is_variable)`` of a term; unknown names raise ``scope.error``."""
    if isinstance(sym, SList):
        raise unsupported("function terms as arguments", ":object-fluents", sym)
    text = sym.text
    if text.startswith("?"):
        expect_name(sym, "a variable", variable=True)
        if text not in scope.variables:
            if scope.where.startswith(" in derived"):
                fallback = "put it in the derived atom, or bind it with 'exists' or 'forall'"
            elif scope.object_kind == "constant":
                fallback = "declare it in the action's :parameters"
            else:
                fallback = "variables are only allowed inside actions; write an object name"
            raise scope.error(
                f"undeclared variable '{text}'{scope.where}",
                location=sym.loc,
                hint=did_you_mean(text, scope.variables, fallback),
            )
        return text, scope.variables[text], True
    expect_name(sym, f"a {scope.object_kind} name")
    if text not in scope.objects:
        raise scope.error(
            f"unknown {scope.object_kind} '{text}'{scope.where}",
            location=sym.loc,
            hint=did_you_mean(text, scope.objects, f"declare it in (:{scope.object_kind}s ...)"),
        )
    return text, scope.objects[text], False


def parse_atom(node: SList, scope: Scope, *, function: bool = False) -> Atom:
    """``(p t1 ... tn)`` checked against the declared predicate (or function)."""
    kind = "function" if function else "predicate"
    table = scope.functions if function else scope.predicates
    if not node.items:
        raise ParseError(
            f"expected a {kind} name, found '()'",
            location=node.loc,
            hint=f"write '(name arg ...)' with a declared {kind}",
        )
    head = expect_name(node.items[0], f"a {kind} name")
    decl = table.get(head.text)
    if decl is None:
        raise scope.error(
            f"unknown {kind} '{head.text}'{scope.where}",
            location=head.loc,
            hint=did_you_mean(head.text, table, f"declare it in (:{kind}s ...)"),
        )
    args = node.items[1:]
    if len(args) != decl.arity:
        declared = " ".join(f"{p.name} - {p.type}" for p in decl.parameters)
        raise scope.error(
            f"{kind} '{decl.name}' takes {decl.arity} argument(s), got {len(args)}",
            location=node.loc,
            hint=f"it is declared{_at(decl)} as ({decl.name}{' ' if declared else ''}{declared})",
        )
    names: list[str] = []
    for i, (arg, param) in enumerate(zip(args, decl.parameters, strict=True), start=1):
        name, typ, variable = resolve_term(arg, scope)
        if not scope.compatible(typ, param.type, variable=variable):
            raise scope.error(
                f"argument {i} of '{decl.name}' is '{name}' of type '{typ}', "
                f"but the {kind} expects '{param.type}'",
                location=arg.loc,
                hint=f"pass a '{param.type}' here, or change the declaration{_at(decl)}",
            )
        names.append(name)
    return Atom(decl.name, tuple(names))


def parse_goal(node: Node, scope: Scope) -> tuple[list[Condition], list[Formula]]:
    """A PDDL goal description: its literal conjuncts, and the others as formulas
    in negation normal form (``imply`` as ``or``, negations on the literals)."""
    out: list[Condition] = []
    formulas: list[Formula] = []
    for part in _conjuncts(_formula(node, scope, positive=True, outer=None)):
        if isinstance(part, Formula):
            formulas.append(part)
        else:
            out.append(part)
    return out, formulas


def _conjuncts(part: GoalPart | None) -> list[GoalPart]:
    if part is None:
        return []
    if isinstance(part, Formula) and part.kind == "and":
        return [q for p in part.parts for q in _conjuncts(p)]
    return [part]


def _formula(
    node: Node, scope: Scope, *, positive: bool, outer: Location | None
) -> GoalPart | None:
    """``node`` in negation normal form (``positive=False``: its negation); None
    for the empty condition '()'. ``outer`` is where an enclosing 'not' starts."""
    lst = expect_list(node, "a condition")
    if not lst.items:
        return None
    head = lst.items[0]
    if isinstance(head, SList):
        raise ParseError(
            "expected a predicate name or 'and'/'not', found a list",
            location=head.loc,
            hint="write a literal as '(pred arg ...)'",
        )
    word = head.text
    loc = outer or lst.loc
    if word in ("and", "or"):
        kind = word if positive else ("or" if word == "and" else "and")
        parts = [_formula(child, scope, positive=positive, outer=None) for child in lst.items[1:]]
        return _junction(kind, [p for p in parts if p is not None], loc)
    if word == "not":
        check_arity(lst, 1, "one condition", "write '(not (pred arg ...))'")
        return _formula(lst.items[1], scope, positive=not positive, outer=loc)
    if word == "imply":
        check_arity(lst, 2, "a condition and its consequence", "write '(imply A B)'")
        left = _formula(lst.items[1], scope, positive=not positive, outer=None)
        right = _formula(lst.items[2], scope, positive=positive, outer=None)
        kind = "or" if positive else "and"
        return _junction(kind, [p for p in (left, right) if p is not None], loc)
    if word in ("forall", "exists"):
        check_arity(lst, 2, "variables and a condition", f"write '({word} (?x - type) CONDITION)'")
        variables = parse_variables(lst.items[1], scope)
        inner = replace(scope, variables={**scope.variables, **{v.name: v.type for v in variables}})
        body = _formula(lst.items[2], inner, positive=positive, outer=None)
        kind = word if positive else ("exists" if word == "forall" else "forall")
        if body is None:
            return None if kind == "forall" else Formula("and", (), (), loc)
        return Formula(kind, (body,), tuple(variables), loc)
    if word == "=":
        return _equality(lst, scope, positive=positive, loc=loc)
    if word in _REFUSED:
        raise unsupported(*_REFUSED[word], lst)
    return Literal(parse_atom(lst, scope), positive, loc)


def _junction(kind: str, parts: list[GoalPart], loc: Location) -> GoalPart | None:
    flat: list[GoalPart] = []
    for p in parts:
        if isinstance(p, Formula) and p.kind == kind and not p.variables:
            flat.extend(p.parts)
        else:
            flat.append(p)
    if len(flat) == 1:
        return flat[0]
    if not flat and kind == "and":
        return None
    return Formula(kind, tuple(flat), (), loc)


def parse_variables(node: Node, scope: Scope) -> list[TypedName]:
    """The typed variables a quantifier binds: ``(?x ?y - type)``."""
    lst = expect_list(node, "a list of variables")
    out: list[TypedName] = []
    for sym, typ, tloc in parse_typed_list(lst.items, "a variable", variable=True):
        check_type(typ, scope.ancestors, tloc, scope.error)
        out.append(TypedName(sym.text, typ, sym.loc))
    return out


def _equality(node: SList, scope: Scope, *, positive: bool, loc: Location) -> Equality:
    args = node.items[1:]
    if any(isinstance(a, SList) for a in args):
        raise unsupported("numeric conditions ('=' on function values)", ":numeric-fluents", node)
    check_arity(node, 2, "two terms", "write '(= ?x ?y)'")
    left, _, _ = resolve_term(args[0], scope)
    right, _, _ = resolve_term(args[1], scope)
    return Equality(left, right, positive, loc)


def _members(typ: str) -> list[str]:
    return typ[len("(either ") : -1].split() if typ.startswith("(either ") else [typ]


def _at(decl: Predicate) -> str:
    return f" at {decl.loc}" if decl.loc is not None else ""
