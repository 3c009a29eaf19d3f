"""Output extractors: JSONPath expressions over a call's result document.

A singular path (RFC 9535, 2.3.5.1: names and indices only, ``$.structured.done``,
``$.json[0].name``, ``$.json[-1]``) gives its one match, and matching nothing is an
``extraction_error``. Any other path (wildcards, ``..``, filters, slices, unions)
gives the list of its matches, in the library's order, empty when none.

Paths of names and non-negative indices take a direct lookup, which gives the same
match as the library and is about fifty times cheaper; every other path goes to
``python-jsonpath``. ``reads_json`` tells whether a path could reach the document's
``json`` member, so that the result's text is parsed only for those that could.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import jsonpath
from jsonpath import JSONPath
from jsonpath.exceptions import JSONPathError
from jsonpath.segments import JSONPathChildSegment
from jsonpath.selectors import NameSelector

from plansmith.errors import ToolCallError
from plansmith.model import JSONValue

__all__ = ["check_jsonpath", "extract", "simple_path", "singular", "reads_json"]

_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\['([^'\\]*)'\]")
_MISSING = object()


@functools.lru_cache(maxsize=1024)
def simple_path(expression: str) -> tuple[str | int, ...] | None:
    """The keys and indices of a path of names and indices only, else None."""
    if not expression.startswith("$"):
        return None
    keys: list[str | int] = []
    pos = 1
    while pos < len(expression):
        m = _SEGMENT.match(expression, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            keys.append(m.group(1))
        elif m.group(2) is not None:
            keys.append(int(m.group(2)))
        else:
            keys.append(m.group(3))
        pos = m.end()
    return tuple(keys)


def _lookup(document: object, keys: tuple[str | int, ...]) -> object:
    value = document
    for key in keys:
        if isinstance(key, int):
            if not isinstance(value, list) or key >= len(value):
                return _MISSING
            value = value[key]
        else:
            if not isinstance(value, dict) or key not in value:
                return _MISSING
            value = value[key]
    return value


@functools.lru_cache(maxsize=1024)
def _compiled(expression: str) -> Any:
    return jsonpath.compile(expression)


@functools.lru_cache(maxsize=1024)
def singular(expression: str) -> bool:
    """Whether ``expression`` is a singular query (RFC 9535: names and indices only), which
    gives one value; any other path gives a list. A path that does not compile counts as
    singular (``bind`` refuses it; ``extract`` says it is bad)."""
    if simple_path(expression) is not None:
        return True
    try:
        path = _compiled(expression)
    except JSONPathError:
        return True
    return isinstance(path, JSONPath) and path.singular_query()


@functools.lru_cache(maxsize=1024)
def reads_json(expression: str) -> bool:
    """Whether ``expression`` could reach the result document's ``json`` member (the
    result's text parsed): no unless it starts by naming another member (``$.structured``,
    ``$.text``, ``$['is_error']``) and holds no other query from the root (in a filter)."""
    keys = simple_path(expression)
    if keys is not None:
        return not keys or keys[0] == "json"
    try:
        path = _compiled(expression)
    except JSONPathError:
        return True  # refused by bind; nothing to save
    if not isinstance(path, JSONPath) or not path.segments:
        return True  # a union or intersection of paths (``|``, ``&``), or the whole document
    first, rest = path.segments[0], path.segments[1:]
    if type(first) is not JSONPathChildSegment or not all(
        isinstance(s, NameSelector) and s.name != "json" for s in first.selectors
    ):
        return True  # ``..``, ``*``, a filter, an index, or ``json`` itself
    # a filter may query the document from its root: ``[?@.id == $.json.id]``
    return any("$" in str(segment) or "^" in str(segment) for segment in rest)


def check_jsonpath(expression: str) -> str | None:
    """None if ``expression`` compiles, else the parser's message."""
    try:
        _compiled(expression)
    except JSONPathError as error:
        return str(error)
    return None


def extract(
    outputs: Sequence[tuple[str, str]],
    document: Mapping[str, JSONValue],
    defaults: Sequence[tuple[str, JSONValue]] = (),
) -> dict[str, JSONValue]:
    """Each output's value: a singular path's match, or the list of another path's
    matches (empty when none). An output named in ``defaults`` (an optional one) whose
    path matches nothing takes its default instead (a path that is not singular too).

    Raises ``ToolCallError`` (``extraction_error``) when the singular path of a required
    output matches nothing: the message names the path, says where it stopped matching
    and shows the top-level keys of what it reads.
    """
    values: dict[str, JSONValue] = {}
    optional = dict(defaults) if defaults else None
    for name, expression in outputs:
        keys = simple_path(expression)
        if keys is not None:
            found_one = _lookup(document, keys)
            found: list[object] = [] if found_one is _MISSING else [found_one]
        else:
            try:
                found = _compiled(expression).findall(dict(document))
            except JSONPathError as error:
                raise ToolCallError(
                    "extraction_error", f"output {name!r}: bad JSONPath {expression!r}: {error}"
                ) from None
        if not found and optional is not None and name in optional:
            values[name] = optional[name]
            continue
        if not singular(expression):
            values[name] = [cast(JSONValue, m) for m in found]
            continue
        if not found:
            raise ToolCallError(
                "extraction_error",
                f"output {name!r}: {expression} matched nothing in the result"
                + (_not_json(expression, document) or _stopped(expression, document)),
                hint="check the tool's result with `plansmith show RUN_ID`; an output that"
                " a tool may leave out can be written {path: ..., default: VALUE}"
                " (or optional: true, for null)",
            )
        values[name] = cast(JSONValue, found[0])
    return values


_KEYS_SHOWN = 12  # keys of an object a message lists, then how many more


def _keys(value: Mapping[str, object]) -> str:
    names = [repr(k) if not _NAME.fullmatch(k) else k for k in value]
    more = len(names) - _KEYS_SHOWN
    return ", ".join(names[:_KEYS_SHOWN]) + (f" and {more} more" if more > 0 else "") or "none"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _what(value: object) -> str:
    """What a value is, in a message: an object's keys, a list's length, a scalar's type."""
    if isinstance(value, dict):
        return f"an object with keys {_keys(value)}" if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)}" if value else "an empty list"
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string"}.get(type(value), "a number")


def _step(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if _NAME.fullmatch(key) else f"{prefix}[{key!r}]"


def _stopped(expression: str, document: Mapping[str, JSONValue]) -> str:
    """Where a singular path stopped matching, and the top-level keys of what it reads:
    ``(: $.structured.entities is an empty list; the top-level keys of $.structured:
    entities)``."""
    keys = simple_path(expression)
    if not keys:  # a negative index, or a path the library reads: the document's keys
        return f" (the result document's keys: {_keys(document)})"
    value: object = document
    prefix = "$"
    for depth, key in enumerate(keys):
        there = (isinstance(value, list) and isinstance(key, int) and key < len(value)) or (
            isinstance(value, dict) and isinstance(key, str) and key in value
        )
        if not there:
            said = f"{prefix} is {_what(value)}"
            member = document.get(str(keys[0]))
            if depth >= 2 and isinstance(member, dict):  # its keys: not said already
                said += f"; the top-level keys of {_step('$', keys[0])}: {_keys(member)}"
            return f": {said}"
        value = value[key]  # type: ignore[index]
        prefix = _step(prefix, key)
    return ""


def _not_json(expression: str, document: Mapping[str, JSONValue]) -> str:
    """Why a path into ``$.json`` matched nothing when the result's text is not JSON."""
    text = document.get("text")
    if not expression.startswith("$.json") or document.get("json") is not None or not text:
        return ""
    shown = str(text) if len(str(text)) <= 60 else str(text)[:57] + "..."
    return f" (its text is not JSON, so $.json is null: {shown!r})"
