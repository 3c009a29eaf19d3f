"""Run-time type checks of the arguments that other steps fill.

An argument written as one output reference (``n: "${produce(d).n}"``) keeps its
value's JSON type, which is known only once the producing step has run. ``bind``
works out, for each such argument, the JSON types the tool's ``inputSchema``
declares at its place (``type_checks``); the runner then checks the rendered
arguments with ``type_mismatch``, a few dictionary look-ups a reference. Only a
plain ``type`` keyword is read (a name or a list of names, or ``anyOf``/``oneOf``
branches that each have one, as in ``Optional[int]``); a place reached through
anything else (``$ref``, ``patternProperties``, ...) is not checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from plansmith.binding._refs import REF_RE, FactRef, OutputRef, parse_ref
from plansmith.model import JSONValue

__all__ = ["TypeCheck", "type_checks", "type_mismatch"]

_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "array", "object"})
_NAMES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
    list: "array",
    tuple: "array",
    dict: "object",
}
_ARTICLE = {"integer": "an integer", "array": "an array", "object": "an object", "null": "null"}


@dataclass(frozen=True, slots=True)
class TypeCheck:
    """An argument that one output reference fills, and the JSON types its tool takes there.

    ``keys`` lead to it in the rendered arguments; ``types`` are JSON Schema type
    names; ``reference`` is the reference as written, for the message.
    """

    keys: tuple[str | int, ...]
    types: tuple[str, ...]
    reference: str


def type_checks(
    arguments: JSONValue, input_schema: Mapping[str, JSONValue]
) -> tuple[TypeCheck, ...]:
    """A ``TypeCheck`` for each argument of ``arguments`` (a binding's template) that is
    one output reference and whose place in ``input_schema`` declares a plain ``type``."""
    checks: list[TypeCheck] = []
    for keys, reference in _whole_output_refs(arguments, ()):
        types = _declared(_schema_at(input_schema, keys))
        if types is not None:
            checks.append(TypeCheck(keys, types, reference))
    return tuple(checks)


def type_mismatch(checks: Sequence[TypeCheck], arguments: JSONValue) -> str | None:
    """None if each checked argument of ``arguments`` (rendered) has a type its tool
    takes, else what is wrong with the first that has not."""
    for check in checks:
        value: object = arguments
        try:
            for key in check.keys:
                value = value[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            continue  # not where the template put it: nothing to say
        name = _NAMES.get(type(value)) or _name_of(value)
        if name in check.types or _widened(name, value, check.types):
            continue
        path = "/".join(str(k) for k in check.keys) or "(arguments)"
        wanted = " or ".join(_ARTICLE.get(t, f"a {t}") for t in check.types)
        return (
            f"argument {path}: {check.reference} gave {_ARTICLE.get(name, f'a {name}')}"
            f" ({_shown(value)}) where the tool's inputSchema takes {wanted}"
        )
    return None


def _widened(name: str, value: object, types: tuple[str, ...]) -> bool:
    """An integer is a number; a float with no fraction (``3.0``) is an integer."""
    if name == "integer":
        return "number" in types
    return (
        name == "number" and "integer" in types and isinstance(value, float) and value.is_integer()
    )


def _whole_output_refs(
    template: JSONValue, keys: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], str]]:
    """Where ``template`` holds a string that is one output reference, and the reference."""
    if isinstance(template, str):
        whole = REF_RE.fullmatch(template)
        if whole is not None and isinstance(parse_ref(whole.group(1)), OutputRef | FactRef):
            return [(keys, template)]
        return []
    found: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(template, list):
        for i, item in enumerate(template):
            found.extend(_whole_output_refs(item, (*keys, i)))
    elif isinstance(template, dict):
        for key, item in template.items():  # a key holds no reference: only $${ to undo
            found.extend(_whole_output_refs(item, (*keys, key.replace("$${", "${"))))
    return found


def _schema_at(schema: object, keys: tuple[str | int, ...]) -> object:
    """The subschema that applies at ``keys`` through ``properties`` and ``items``
    (``prefixItems``, or a list of ``items`` of older drafts), else None."""
    for key in keys:
        if not isinstance(schema, dict):
            return None
        if isinstance(key, str):
            properties = schema.get("properties")
            schema = properties.get(key) if isinstance(properties, dict) else None
            continue
        prefix, items = schema.get("prefixItems"), schema.get("items")
        if isinstance(prefix, list):
            schema = prefix[key] if key < len(prefix) else items
        elif isinstance(items, list):
            schema = items[key] if key < len(items) else None
        else:
            schema = items
    return schema


def _declared(schema: object) -> tuple[str, ...] | None:
    """The JSON types ``schema`` allows by a plain ``type`` (or ``anyOf``/``oneOf``
    branches that each have one), or None when it says no more simply."""
    if not isinstance(schema, dict):
        return None
    own = _types_of(schema.get("type"))
    if own is not None:
        return own
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            union: list[str] = []
            for branch in branches:
                types = _types_of(branch.get("type")) if isinstance(branch, dict) else None
                if types is None:
                    return None
                union.extend(t for t in types if t not in union)
            return tuple(union)
    return None


def _is_type(name: object) -> bool:
    return isinstance(name, str) and name in _JSON_TYPES


def _types_of(declared: object) -> tuple[str, ...] | None:
    if isinstance(declared, str):
        return (declared,) if declared in _JSON_TYPES else None
    if isinstance(declared, list) and declared and all(_is_type(t) for t in declared):
        return tuple(str(t) for t in declared)
    return None


def _name_of(value: object) -> str:
    """The JSON type of a value of a subclass (an ``IntEnum``, a ``defaultdict``)."""
    for python, name in _NAMES.items():
        if isinstance(value, python):
            return name
    return "value"


def _shown(value: object) -> str:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):  # a value that holds itself, or nests too deeply
        return "..."
    return text if len(text) <= 60 else text[:57] + "..."
