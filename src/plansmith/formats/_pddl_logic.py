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

from dataclasses import dataclass, field

from plansmith.errors import InputError, Location, ParseError
from plansmith.formats._pddl_common import (
    check_arity,
    did_you_mean,
    expect_list,
    expect_name,
    unsupported,
)
from plansmith.formats._pddl_lexer import Node, SList
from plansmith.model import Atom, Condition, Equality, Literal, Predicate

__all__ = ["RESERVED", "Scope", "parse_atom", "parse_condition", "resolve_term"]

_REFUSED: dict[str, tuple[str, str]] = {
    "or": ("disjunctive conditions ('or')", ":disjunctive-preconditions"),
    "imply": ("implications ('imply')", ":disjunctive-preconditions"),
    "forall": ("universal quantifiers ('forall')", ":universal-preconditions"),
    "exists": ("existential quantifiers ('exists')", ":existential-preconditions"),
    "when": ("conditional effects ('when')", ":conditional-effects"),
    "preference": ("preferences", ":preferences"),
    ">": ("numeric comparisons ('>')", ":numeric-fluents"),
    "<": ("numeric comparisons ('<')", ":numeric-fluents"),
    ">=": ("numeric comparisons ('>=')", ":numeric-fluents"),
    "<=": ("numeric comparisons ('<=')", ":numeric-fluents"),
}

RESERVED = frozenset({"and", "not", "=", "increase", "decrease", "assign", *_REFUSED})


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

    def compatible(self, actual: str, declared: str, *, variable: bool) -> bool:
        if declared in self.ancestors.get(actual, (actual,)):
            return True
        return variable and actual in self.ancestors.get(declared, (declared,))


def resolve_term(sym: Node, scope: Scope) -> tuple[str, str, bool]:
    """``(name, type, is_variable)`` of a term; unknown names raise ``scope.error``."""
    if isinstance(sym, SList):
        raise unsupported("function terms as arguments", ":object-fluents", sym)
    text = sym.text
    if text.startswith("?"):
        expect_name(sym, "a variable", variable=True)
        if text not in scope.variables:
            fallback = (
                "declare it in the action's :parameters"
                if scope.object_kind == "constant"
                else "variables are only allowed inside actions; write an object name"
            )
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


def parse_condition(node: Node, scope: Scope) -> list[Condition]:
    """A conjunction of literals and (in)equalities; anything richer is refused."""
    out: list[Condition] = []
    _condition(node, scope, out, positive=True)
    return out


def _condition(
    node: Node,
    scope: Scope,
    out: list[Condition],
    *,
    positive: bool,
    outer: Location | None = None,
) -> None:
    """Append the literals of ``node``; ``outer`` is where an enclosing 'not' starts."""
    lst = expect_list(node, "a condition")
    if not lst.items:
        return
    head = lst.items[0]
    if isinstance(head, SList):
        raise ParseError(
            "expected a predicate name or 'and'/'not', found a list",
            location=head.loc,
            hint="write a literal as '(pred arg ...)'",
        )
    word = head.text
    if word == "and":
        if not positive:
            feature = "negated conjunctions ('not (and ...)')"
            raise unsupported(feature, ":disjunctive-preconditions", lst)
        for child in lst.items[1:]:
            _condition(child, scope, out, positive=True)
    elif word == "not":
        check_arity(lst, 1, "one condition", "write '(not (pred arg ...))'")
        _condition(lst.items[1], scope, out, positive=not positive, outer=outer or lst.loc)
    elif word == "=":
        out.append(_equality(lst, scope, positive=positive, loc=outer or lst.loc))
    elif word in _REFUSED:
        raise unsupported(*_REFUSED[word], lst)
    else:
        out.append(Literal(parse_atom(lst, scope), positive, outer or lst.loc))


def _equality(node: SList, scope: Scope, *, positive: bool, loc: Location) -> Equality:
    args = node.items[1:]
    if any(isinstance(a, SList) for a in args):
        raise unsupported("numeric conditions ('=' on function values)", ":numeric-fluents", node)
    check_arity(node, 2, "two terms", "write '(= ?x ?y)'")
    left, _, _ = resolve_term(args[0], scope)
    right, _, _ = resolve_term(args[1], scope)
    return Equality(left, right, positive, loc)


def _at(decl: Predicate) -> str:
    return f" at {decl.loc}" if decl.loc is not None else ""
