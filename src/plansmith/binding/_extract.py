"""Output extractors: JSONPath expressions over a call's result document.

Paths made only of names and indices (``$.structured.done``, ``$.json[0].name``)
take a direct lookup, which gives the same single match as the library and is
about fifty times cheaper; every other path goes to ``python-jsonpath`` (RFC 9535).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import jsonpath
from jsonpath.exceptions import JSONPathError

from plansmith.errors import ToolCallError
from plansmith.model import JSONValue

__all__ = ["check_jsonpath", "extract", "simple_path"]

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


def check_jsonpath(expression: str) -> str | None:
    """None if ``expression`` compiles, else the parser's message."""
    try:
        _compiled(expression)
    except JSONPathError as error:
        return str(error)
    return None


def extract(
    outputs: Sequence[tuple[str, str]], document: Mapping[str, JSONValue]
) -> dict[str, JSONValue]:
    """Each output's value: the JSONPath's single match, or the list of its matches.

    Raises ``ToolCallError`` (``extraction_error``) when a path matches nothing.
    """
    values: dict[str, JSONValue] = {}
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
        if not found:
            raise ToolCallError(
                "extraction_error",
                f"output {name!r}: {expression} matched nothing in the result"
                + _not_json(expression, document),
                hint="check the tool's result with `plansmith show RUN_ID`",
            )
        matches = [cast(JSONValue, m) for m in found]
        values[name] = matches[0] if len(matches) == 1 else matches
    return values


def _not_json(expression: str, document: Mapping[str, JSONValue]) -> str:
    """Why a path into ``$.json`` matched nothing when the result's text is not JSON."""
    text = document.get("text")
    if not expression.startswith("$.json") or document.get("json") is not None or not text:
        return ""
    shown = str(text) if len(str(text)) <= 60 else str(text)[:57] + "..."
    return f" (its text is not JSON, so $.json is null: {shown!r})"
