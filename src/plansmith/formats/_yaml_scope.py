"""Checking names against a domain: types, typed-name mappings, literals and task calls.

A :class:`Vocabulary` holds what a domain declares; a :class:`Scope` the terms
that may appear where a literal is written (parameters and constants in a
domain, objects and constants in a problem). Unknown names get a did-you-mean
hint; a wrong arity or an argument whose type is not a subtype of the declared
one is an error at the argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from yaml.nodes import Node

from plansmith.formats._yaml_items import Located
from plansmith.formats._yaml_literal import (
    AtomSyntax,
    EqualitySyntax,
    Term,
    parse_call,
    parse_literal,
)
from plansmith.formats._yaml_node import Source, did_you_mean, mapping, name
from plansmith.model import (
    ROOT_TYPE,
    Atom,
    Condition,
    Equality,
    Literal,
    Predicate,
    TaskCall,
    TypedName,
    TypeHierarchy,
)

__all__ = ["Vocabulary", "Scope", "type_ref", "typed_names", "condition", "task_call"]

T = TypeVar("T")


@dataclass(slots=True)
class Vocabulary:
    """What a domain declares, by name. ``callees`` are its actions and tasks."""

    types: TypeHierarchy
    constants: dict[str, TypedName] = field(default_factory=dict)
    predicates: dict[str, Predicate] = field(default_factory=dict)
    callees: dict[str, tuple[str, tuple[TypedName, ...]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scope:
    """The terms allowed in a literal (name -> type) and how to speak of them."""

    terms: dict[str, str]
    noun: str = "parameter or constant"
    declare: str = "declare it under the parameters, or as a domain constant"


def type_ref(src: Source, types: TypeHierarchy, node: Node, what: str) -> str:
    """A declared type name written at ``node``."""
    type_name = name(src, node, what)
    if type_name not in types.names:
        guess = did_you_mean(type_name, types.names)
        raise src.fail(
            node,
            f"unknown type {type_name!r} for {what}",
            hint=guess or f"declare it under `types:` (e.g. `{type_name}: object`)",
        )
    return type_name


def typed_names(
    src: Source,
    types: TypeHierarchy,
    node: Node | None,
    what: str,
    taken: dict[str, str] | None = None,
) -> tuple[TypedName, ...]:
    """A ``name: type`` mapping; ``taken`` maps names that may not be reused to their owner."""
    out: list[TypedName] = []
    for key, value in mapping(src, node, what):
        item = name(src, key, f"a name in {what}")
        if taken and item in taken:
            raise src.fail(
                key,
                f"{item!r} in {what} is already {taken[item]}",
                hint="rename one of them: a name must mean one thing",
            )
        type_name = type_ref(src, types, value, f"{item!r} in {what}")
        out.append(TypedName(item, type_name, src.loc(key)))
    return tuple(out)


def _check_args(
    src: Source,
    vocab: Vocabulary,
    scope: Scope,
    item: Located,
    syntax: AtomSyntax,
    *,
    params: tuple[TypedName, ...],
    label: str,
    what: str,
) -> None:
    if len(syntax.args) != len(params):
        wanted = ", ".join(p.type for p in params)
        plural = "" if len(params) == 1 else "s"
        raise src.fail(
            item.at(syntax.name.offset),
            f"{label} takes {len(params)} argument{plural}, got {len(syntax.args)} in {what}",
            hint=f"write {syntax.name.text}({wanted})",
        )
    for index, (arg, param) in enumerate(zip(syntax.args, params, strict=True), 1):
        arg_type = scope.terms.get(arg.text)
        if arg_type is None:
            raise src.fail(
                item.at(arg.offset),
                f"unknown {scope.noun} {arg.text!r} in {what}",
                hint=did_you_mean(arg.text, scope.terms) or scope.declare,
            )
        if param.type != ROOT_TYPE and not vocab.types.is_subtype(arg_type, param.type):
            raise src.fail(
                item.at(arg.offset),
                f"type clash in {what}: argument {index} of {label} must be of type "
                f"{param.type!r}, but {arg.text!r} is of type {arg_type!r}",
                hint=f"pass an argument of type {param.type!r} (or of a subtype of it) here",
            )


def _known(
    src: Source, item: Located, term: Term, known: dict[str, T], *, unknown: str, declare: str
) -> T:
    """What ``term`` names in ``known``; else the error ``unknown`` at the term, with a
    did-you-mean hint, or ``declare``."""
    found = known.get(term.text)
    if found is None:
        hint = did_you_mean(term.text, known) or declare
        raise src.fail(item.at(term.offset), unknown, hint=hint)
    return found


def _term(src: Source, scope: Scope, item: Located, term: Term, what: str) -> str:
    unknown = f"unknown {scope.noun} {term.text!r} in {what}"
    _known(src, item, term, scope.terms, unknown=unknown, declare=scope.declare)
    return term.text


def condition(
    src: Source,
    vocab: Vocabulary,
    scope: Scope,
    item: Located,
    what: str,
    *,
    effect: bool = False,
    true_atom: bool = False,
) -> Condition:
    """A checked literal. ``effect``: no equality; ``true_atom`` (init): positive atoms only."""
    syntax = parse_literal(item)
    loc = item.loc
    if isinstance(syntax, EqualitySyntax):
        if effect or true_atom:
            raise src.fail(
                loc,
                f"{what} cannot hold an equality ({item.text!r})",
                hint="equalities belong in preconditions and goals; "
                + ("list only true atoms here" if true_atom else "effects add or delete atoms"),
            )
        left = _term(src, scope, item, syntax.left, what)
        right = _term(src, scope, item, syntax.right, what)
        return Equality(left, right, syntax.positive, loc)
    if true_atom and syntax.negated:
        raise src.fail(
            loc,
            f"{what} lists true atoms only, not {item.text!r}",
            hint="leave false atoms out: what init does not list is false",
        )
    unknown = f"unknown predicate {syntax.name.text!r} in {what}"
    declare = "declare it under `predicates:`"
    predicate = _known(src, item, syntax.name, vocab.predicates, unknown=unknown, declare=declare)
    label = f"predicate {predicate.name}"
    _check_args(
        src, vocab, scope, item, syntax, params=predicate.parameters, label=label, what=what
    )
    atom = Atom(predicate.name, tuple(a.text for a in syntax.args))
    return Literal(atom, not syntax.negated, loc)


def task_call(src: Source, vocab: Vocabulary, scope: Scope, item: Located, what: str) -> TaskCall:
    """A checked call of an action or a task."""
    syntax = parse_call(item)
    unknown = f"{syntax.name.text!r} in {what} names neither an action nor a task"
    declare = "declare it under `actions:` or `tasks:`"
    kind, params = _known(src, item, syntax.name, vocab.callees, unknown=unknown, declare=declare)
    label = f"{kind} {syntax.name.text}"
    _check_args(src, vocab, scope, item, syntax, params=params, label=label, what=what)
    return TaskCall(syntax.name.text, tuple(a.text for a in syntax.args), item.loc)
