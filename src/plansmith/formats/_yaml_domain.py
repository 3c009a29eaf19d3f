"""The YAML/JSON domain reader: text to a checked, located :class:`Domain`.

Sections are read in dependency order: types, constants, predicates, actions,
tasks (which call actions and tasks), goals. Every mistake is a
:class:`DomainError` (or a :class:`ParseError` for syntax) at file:line:column
with a hint. The format is specified in formats.md and ``schemas/domain.schema.json``.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode

from plansmith.errors import DomainError
from plansmith.formats._yaml_ask import ASK_KEYS, read_ask
from plansmith.formats._yaml_items import items
from plansmith.formats._yaml_node import (
    LOOSE_NAME,
    Fields,
    Source,
    did_you_mean,
    fields,
    is_null,
    mapping,
    name,
    number,
    read_top,
    sequence,
    text,
    value_of,
)
from plansmith.formats._yaml_scope import Scope, Vocabulary, condition, type_ref, typed_names
from plansmith.formats._yaml_tasks import read_tasks
from plansmith.model import (
    ROOT_TYPE,
    ActionSchema,
    Domain,
    Literal,
    NamedGoal,
    Number,
    Predicate,
    Tier,
    TypedName,
    TypeHierarchy,
)

__all__ = ["read_yaml_domain"]

_DOMAIN_KEYS = (
    "domain",
    "types",
    "constants",
    "predicates",
    "actions",
    "tasks",
    "goals",
    "$schema",
)
_ACTION_KEYS = ("parameters", "precondition", "effect", "cost", "tier", *ASK_KEYS)
_KINDS = ("tool", "ask")
_GOAL_KEYS = ("description", "goal", "parameters")
_TIERS = tuple(t.value for t in Tier)


def read_yaml_domain(text_: str, *, file: str | None = None, json_syntax: bool = False) -> Domain:
    """Read a domain written in YAML (or JSON, with ``json_syntax``)."""
    src = Source(file, DomainError)
    hint = "start it with `domain: NAME`, then types, predicates and actions"
    _, top = read_top(
        src, text_, "domain", _DOMAIN_KEYS, ("domain",), json_syntax=json_syntax, hint=hint
    )
    domain_name = name(src, top["domain"][1], "the domain name", LOOSE_NAME)
    types = _types(src, value_of(top, "types"))
    vocab = Vocabulary(types)
    constants = typed_names(src, types, value_of(top, "constants"), "constants")
    vocab.constants = {c.name: c for c in constants}
    predicates = _predicates(src, types, value_of(top, "predicates"))
    vocab.predicates = {p.name: p for p in predicates}
    actions: list[ActionSchema] = []
    for key, body in mapping(src, value_of(top, "actions"), "actions"):
        action = _action(src, vocab, key, body)
        vocab.callees[action.name] = ("action", action.parameters)
        actions.append(action)
    tasks = read_tasks(src, vocab, value_of(top, "tasks"))
    goals = tuple(
        _goal(src, vocab, key, body) for key, body in mapping(src, value_of(top, "goals"), "goals")
    )
    return Domain(
        name=domain_name,
        types=types,
        constants=constants,
        predicates=predicates,
        actions=tuple(actions),
        tasks=tasks,
        goals=goals,
        source=file,
    )


def _types(src: Source, node: Node | None) -> TypeHierarchy:
    parents: dict[str, str] = {}
    where: dict[str, Node] = {}
    for key, value in mapping(src, node, "types"):
        type_name = name(src, key, "a type name")
        if type_name == ROOT_TYPE:
            raise src.fail(
                key,
                "'object' is the root type and is not declared",
                hint="remove it: a type whose parent is object derives from the root",
            )
        parents[type_name] = (
            ROOT_TYPE if is_null(value) else name(src, value, f"the parent of type {type_name!r}")
        )
        where[type_name] = value
    for type_name, parent in parents.items():
        if parent != ROOT_TYPE and parent not in parents:
            raise src.fail(
                where[type_name],
                f"type {type_name!r} has an unknown parent {parent!r}",
                hint=did_you_mean(parent, [*parents, ROOT_TYPE])
                or f"declare {parent!r} under types, or use object",
            )
    for type_name, parent in parents.items():
        chain = [type_name]
        current = parent
        while current != ROOT_TYPE:
            if current in chain:
                cycle = " -> ".join([*chain[chain.index(current) :], current])
                raise src.fail(
                    where[type_name],
                    f"the types form a cycle: {cycle}",
                    hint="every chain of parents must end at object",
                )
            chain.append(current)
            current = parents[current]
    return TypeHierarchy.of(parents)


def _predicates(src: Source, types: TypeHierarchy, node: Node | None) -> tuple[Predicate, ...]:
    out: list[Predicate] = []
    for key, value in mapping(src, node, "predicates"):
        pred = name(src, key, "a predicate name")
        what = f"the arguments of predicate {pred}"
        if isinstance(value, MappingNode):
            params = typed_names(src, types, value, what)
        else:
            params = tuple(
                TypedName(f"x{i}", type_ref(src, types, arg, what), src.loc(arg))
                for i, arg in enumerate(sequence(src, value, what), 1)
            )
        out.append(Predicate(pred, params, src.loc(key)))
    return tuple(out)


def _scope(vocab: Vocabulary, params: tuple[TypedName, ...]) -> Scope:
    terms = {c.name: c.type for c in vocab.constants.values()}
    terms |= {p.name: p.type for p in params}
    return Scope(terms)


def _taken(vocab: Vocabulary) -> dict[str, str]:
    return dict.fromkeys(vocab.constants, "a constant")


def _action(src: Source, vocab: Vocabulary, key: ScalarNode, node: Node) -> ActionSchema:
    action = name(src, key, "an action name")
    what = f"action {action}"
    table = fields(src, node, what, _ACTION_KEYS)
    params = typed_names(
        src, vocab.types, value_of(table, "parameters"), f"the parameters of {what}", _taken(vocab)
    )
    scope = _scope(vocab, params)
    pre_what = f"the precondition of {what}"
    precondition = tuple(
        condition(src, vocab, scope, item, pre_what)
        for item in items(src, value_of(table, "precondition"), pre_what)
    )
    effect: list[Literal] = []
    eff_what = f"the effect of {what}"
    for item in items(src, value_of(table, "effect"), eff_what):
        literal = condition(src, vocab, scope, item, eff_what, effect=True)
        assert isinstance(literal, Literal)
        effect.append(literal)
    cost: Number = 1
    cost_node = value_of(table, "cost")
    if cost_node is not None and not is_null(cost_node):
        cost = number(src, cost_node, f"the cost of {what}")
        if cost < 0:
            raise src.fail(cost_node, f"the cost of {what} is negative", hint="use 0 or more")
    kind = _kind(src, table, what)
    tier = Tier.READ if kind == "ask" else Tier.WRITE
    tier_node = value_of(table, "tier")
    if tier_node is not None and not is_null(tier_node):
        value = text(src, tier_node, f"the tier of {what}")
        if value not in _TIERS:
            guess = did_you_mean(value, _TIERS)
            raise src.fail(
                tier_node,
                f"unknown tier {value!r} for {what}",
                hint=f"{guess + ' ' if guess else ''}a tier is one of: {', '.join(_TIERS)}",
            )
        tier = Tier(value)
    if kind != "ask":
        for extra in ASK_KEYS[1:]:
            if extra in table:
                raise src.fail(
                    table[extra][0],
                    f"{extra!r} is for an ask action, and {what} is not one",
                    hint="add `kind: ask` to make a person answer this action",
                )
        return ActionSchema(action, params, precondition, tuple(effect), cost, tier, src.loc(key))
    names = frozenset(p.name for p in params)
    ask = read_ask(src, vocab, scope, table, node, what, tuple(effect), names)
    assumed = ask.effects_of(ask.assumed)
    return ActionSchema(action, params, precondition, assumed, cost, tier, src.loc(key), ask=ask)


def _kind(src: Source, table: Fields, what: str) -> str:
    node = value_of(table, "kind")
    if node is None or is_null(node):
        return "tool"
    kind = text(src, node, f"the kind of {what}")
    if kind not in _KINDS:
        guess = did_you_mean(kind, _KINDS)
        raise src.fail(
            node,
            f"unknown kind {kind!r} of {what}",
            hint=f"{guess + ' ' if guess else ''}an action's kind is one of: {', '.join(_KINDS)}",
        )
    return kind


def _goal(src: Source, vocab: Vocabulary, key: ScalarNode, node: Node) -> NamedGoal:
    goal = name(src, key, "a goal name")
    what = f"goal {goal}"
    table = fields(src, node, what, _GOAL_KEYS, required=("goal",))
    params = typed_names(
        src, vocab.types, value_of(table, "parameters"), f"the parameters of {what}", _taken(vocab)
    )
    scope = _scope(vocab, params)
    literals = tuple(
        condition(src, vocab, scope, item, what)
        for item in items(src, value_of(table, "goal"), f"the literals of {what}")
    )
    description_node = value_of(table, "description")
    description = "" if description_node is None else text(src, description_node, what)
    return NamedGoal(goal, literals, params, description, src.loc(key))
