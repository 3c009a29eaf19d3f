"""JSON values as tools give them: text read as JSON, and numbers JSON cannot hold.

RFC 8259 has no NaN or Infinity: ``json.loads`` reads them (and a number past a float's
range, ``1e400``, as infinity), the event log would record them as ``NaN`` (a line no
strict reader takes), and the MCP SDK sends each of them to the next tool as ``null``.
So a value has one form everywhere:

- ``parse_json_text``: a tool's text that holds ``NaN``, ``Infinity`` or a number past a
  float's range is not JSON we read (the document's ``json`` is null, as for any text
  that is not JSON), nor is text nested too deep for the parser (``RecursionError``).
- ``finite_json``: a tool's structured content with such a float (the SDK's parser
  reads ``NaN``, ``Infinity`` and ``1e400`` in a server's line) holds ``null`` there
  instead: the value the next tool would receive. (The SDK's in-process dispatch already
  gives null.)
"""

from __future__ import annotations

import json
from typing import Any

from plansmith.model import JSONValue

__all__ = ["finite_json", "parse_json_text"]


class _NotJsonError(ValueError):
    """Raised inside ``json.loads`` for a constant or number JSON cannot hold."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # infinite: past a float's range
        raise _NotJsonError(f"{text} is past a float's range")
    return value


_DECODE = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float).decode


def parse_json_text(text: str) -> JSONValue:
    """``text`` parsed as JSON (RFC 8259), or None when it is not JSON: not its syntax,
    ``NaN``/``Infinity``, a number past a float's range, or nested too deep to parse."""
    try:
        value: JSONValue = _DECODE(text)
    except (ValueError, RecursionError):  # JSONDecodeError and _NotJsonError are ValueErrors
        return None
    return value


def finite_json(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, an infinity) replaced by None;
    ``value`` itself (no copy) when it holds none, which is the case to make cheap: a
    walk, no allocation. Containers are dicts and lists (tuples are read as lists)."""
    if not _holds_non_finite(value):
        return value
    return _replaced(value)


def _holds_non_finite(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return kind is float and value - value != 0.0
    for item in items:
        t = type(item)
        if t is float:
            if item - item != 0.0:
                return True
        elif (t is dict or t is list or t is tuple) and _holds_non_finite(item):
            return True
    return False


def _replaced(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return None if value - value != 0.0 else value
    if kind is dict:
        return {k: _replaced(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_replaced(v) for v in value]
    return value
