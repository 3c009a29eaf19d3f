"""The YAML/JSON reader of an ask action's question, answer schema and effects by answer.

review_homologues:
  kind: ask
  parameters: {q: seqset, h: seqset}
  question: "Align every homologue of {q}, or only the top 5?"
  answer: {type: enum, choices: [all, top5], default: all}
  effect: [reviewed(h)]          # whatever the answer
  answers:                       # added by the answer given (enum and boolean)
    top5: [top_wanted(h)]
"""

from __future__ import annotations

import re
from dataclasses import replace

from yaml.nodes import Node, ScalarNode

from plansmith.errors import AnswerError
from plansmith.formats._yaml_items import items
from plansmith.formats._yaml_node import (
    Fields,
    Source,
    did_you_mean,
    fields,
    is_null,
    mapping,
    number,
    sequence,
    text,
    value_of,
)
from plansmith.formats._yaml_scope import Scope, Vocabulary, condition
from plansmith.model import (
    ANSWER_TYPES,
    AnswerSchema,
    AnswerValue,
    AskSpec,
    Literal,
    answer_from_text,
    check_answer,
)

__all__ = ["ASK_KEYS", "read_ask"]

#: the keys an ask action has beside an action's
ASK_KEYS = ("kind", "question", "answer", "answers")
_SCHEMA_KEYS = (
    "type",
    "choices",
    "minimum",
    "maximum",
    "integer",
    "min_length",
    "max_length",
    "pattern",
    "default",
    "description",
)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


def read_ask(  # noqa: PLR0917 - the action reader's parts, as it read them
    src: Source,
    vocab: Vocabulary,
    scope: Scope,
    table: Fields,
    node: Node,
    what: str,
    common: tuple[Literal, ...],
    params: frozenset[str],
) -> AskSpec:
    """The ask part of action ``what`` (its ``kind`` is ``ask``)."""
    question_node = value_of(table, "question")
    if question_node is None or is_null(question_node):
        raise src.fail(node, f"{what} is an ask with no question", hint="add `question: ...`")
    question = text(src, question_node, f"the question of {what}")
    for found in _PLACEHOLDER.finditer(question):
        if found.group(1) not in params:
            raise src.fail(
                question_node,
                f"the question of {what} names {{{found.group(1)}}}, not a parameter",
                hint="a {name} in the question is one of the action's parameters",
            )
    answer_node = value_of(table, "answer")
    if answer_node is None or is_null(answer_node):
        raise src.fail(
            node, f"{what} is an ask with no answer schema", hint="add `answer: {type: boolean}`"
        )
    schema = _schema(src, answer_node, f"the answer of {what}")
    branches: list[tuple[str, tuple[Literal, ...]]] = []
    for key, body in mapping(src, value_of(table, "answers"), f"the answers of {what}"):
        branch = _branch_key(src, schema, key, what)
        b_what = f"the effect of answering {branch} to {what}"
        literals: list[Literal] = []
        for item in items(src, body, b_what):
            literal = condition(src, vocab, scope, item, b_what, effect=True)
            assert isinstance(literal, Literal)
            literals.append(literal)
        branches.append((branch, tuple(literals)))
    return AskSpec(question, schema, common, tuple(branches))


def _schema(src: Source, node: Node, what: str) -> AnswerSchema:
    table = fields(src, node, what, _SCHEMA_KEYS, ("type",))
    type_node = value_of(table, "type")
    assert type_node is not None
    kind = text(src, type_node, f"the type of {what}")
    if kind not in ANSWER_TYPES:
        guess = did_you_mean(kind, ANSWER_TYPES)
        raise src.fail(
            type_node,
            f"unknown answer type {kind!r} in {what}",
            hint=(guess + " " if guess else "")
            + f"an answer type is one of: {', '.join(ANSWER_TYPES)}",
        )
    allowed = {
        "enum": ("choices",),
        "boolean": (),
        "number": ("minimum", "maximum", "integer"),
        "string": ("min_length", "max_length", "pattern"),
    }[kind]
    for key, (key_node, _) in table.items():
        if key in ("type", "default", "description") or key in allowed:
            continue
        raise src.fail(
            key_node,
            f"{key!r} does not apply to an answer of type {kind} ({what})",
            hint=f"an answer of type {kind} takes: {', '.join(('default', *allowed))}",
        )
    choices: tuple[str, ...] = ()
    if kind == "enum":
        choices_node = value_of(table, "choices")
        names = [text(src, n, f"a choice of {what}") for n in sequence(src, choices_node, what)]
        if not names:
            raise src.fail(
                choices_node or node,
                f"{what} is an enum with no choices",
                hint="add choices: [a, b]",
            )
        if len(set(names)) != len(names):
            raise src.fail(choices_node or node, f"{what} repeats a choice")
        choices = tuple(names)
    schema = AnswerSchema(
        kind,
        choices=choices,
        minimum=_number(src, table, "minimum", what),
        maximum=_number(src, table, "maximum", what),
        integer=_flag(src, table, "integer", what),
        min_length=_length(src, table, "min_length", what),
        max_length=_length(src, table, "max_length", what),
        pattern=_pattern(src, table, what),
    )
    default_node = value_of(table, "default")
    if default_node is None or is_null(default_node):
        return schema
    return replace(schema, default=_default(src, schema, default_node, what))


def _default(src: Source, schema: AnswerSchema, node: Node, what: str) -> AnswerValue:
    if not isinstance(node, ScalarNode):
        raise src.fail(node, f"the default of {what} must be one value")
    try:
        if schema.type == "number":
            return check_answer(schema, number(src, node, f"the default of {what}"))
        return answer_from_text(schema, str(node.value), where=f"the default of {what}")
    except AnswerError as error:
        raise src.fail(node, error.message, hint=error.hint) from None


def _number(src: Source, table: Fields, key: str, what: str) -> int | float | None:
    node = value_of(table, key)
    if node is None or is_null(node):
        return None
    return number(src, node, f"the {key} of {what}")


def _length(src: Source, table: Fields, key: str, what: str) -> int | None:
    value = _number(src, table, key, what)
    if value is None:
        return None
    if isinstance(value, float) or value < 0:
        node = value_of(table, key)
        assert node is not None
        raise src.fail(node, f"the {key} of {what} must be a whole number, 0 or more")
    return value


def _flag(src: Source, table: Fields, key: str, what: str) -> bool:
    node = value_of(table, key)
    if node is None or is_null(node):
        return False
    value = str(node.value).lower() if isinstance(node, ScalarNode) else ""
    if value in ("true", "yes"):
        return True
    if value in ("false", "no"):
        return False
    raise src.fail(node, f"the {key} of {what} must be true or false")


def _pattern(src: Source, table: Fields, what: str) -> str | None:
    node = value_of(table, "pattern")
    if node is None or is_null(node):
        return None
    pattern = text(src, node, f"the pattern of {what}")
    try:
        re.compile(pattern)
    except re.error as error:
        raise src.fail(
            node, f"the pattern of {what} is not a regular expression: {error}"
        ) from None
    return pattern


def _branch_key(src: Source, schema: AnswerSchema, key: ScalarNode, what: str) -> str:
    if schema.type == "enum":
        if key.value not in schema.choices:
            guess = did_you_mean(key.value, schema.choices)
            raise src.fail(
                key,
                f"{key.value!r} is not a choice of the answer of {what}",
                hint=f"{guess + ' ' if guess else ''}the choices are: {', '.join(schema.choices)}",
            )
        return str(key.value)
    if schema.type == "boolean":
        try:
            value = answer_from_text(schema, str(key.value))
        except AnswerError:
            raise src.fail(key, f"{key.value!r} is not yes or no ({what})") from None
        return "true" if value else "false"
    raise src.fail(
        key,
        f"an answer of type {schema.type} has no effects by answer ({what})",
        hint="effects by answer are for enum and boolean answers; use `effect:` for the rest,"
        " and pass the answer to later steps as ${ACTION(ARGS).answer}",
    )
