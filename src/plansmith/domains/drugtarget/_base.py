"""What every source module shares: replies, the errors the public servers raise, the
JavaScript-like argument checks their type guards make, and the shipped files.

The public servers (TypeScript, MCP SDK 0.6) answer a tool call in one of three ways: a
text that is ``JSON.stringify(value, null, 2)`` (:func:`js_json`), a text with
``isError: true`` (a failed HTTP request: ``Request failed with status code 404``,
:class:`ApiHttpError`), or a JSON-RPC error from a thrown ``McpError`` (:class:`ThrownMcpError`,
e.g. ``InvalidParams`` when the arguments fail the server's type guard). Some servers
catch everything in their call handler and turn it into a text; each source module says
which (its ``STYLE``), and the server applies it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "ApiHttpError",
    "Handler",
    "JsError",
    "ThrownMcpError",
    "Reply",
    "Style",
    "data",
    "field",
    "is_num",
    "is_obj",
    "is_str",
    "js_json",
    "js_text",
    "nonempty_str",
    "optional",
    "public",
    "reply",
    "truthy",
    "words",
]

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: how a server reports a failure: ``throw`` lets McpError become a JSON-RPC error;
#: ``wrap`` catches every error into an isError text ``Error executing tool NAME: ...``;
#: ``internal`` catches every error into a JSON-RPC InternalError ``Tool execution failed``
Style = Literal["throw", "wrap", "internal"]


@dataclass(frozen=True)
class Reply:
    """A tool's answer: one text content, an error or not."""

    text: str
    is_error: bool = False


class ThrownMcpError(Exception):
    """A thrown ``McpError(code, message)`` of the public server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"MCP error {code}: {message}")
        self.code = code
        self.message = message

    @property
    def js_message(self) -> str:
        """``error.message`` in JavaScript: the SDK prefixes the code."""
        return f"MCP error {self.code}: {self.message}"


class JsError(Exception):
    """A plain ``Error`` (or ``TypeError``) thrown by the public server's code."""

    @property
    def js_message(self) -> str:
        return str(self.args[0]) if self.args else "Unknown error"


class ApiHttpError(Exception):
    """An HTTP error of the upstream API, as axios words it."""

    def __init__(self, status: int) -> None:
        super().__init__(f"Request failed with status code {status}")
        self.status = status

    @property
    def js_message(self) -> str:
        return str(self)


#: a tool's handler: the call's arguments (any JSON, or None when absent) to its reply
Handler = Callable[[Any], Reply]


def _js_value(value: Any) -> Any:
    """``value`` as JSON.stringify writes it: integral floats as integers, NaN as null."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict):
        return {str(k): _js_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_value(v) for v in value]
    return value


def js_json(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``."""
    return json.dumps(_js_value(value), indent=2, ensure_ascii=False)


def reply(value: Any) -> Reply:
    """The usual success: the value as indented JSON text."""
    return Reply(js_json(value))


def js_text(value: Any) -> str:
    """``String(value)`` for the values the servers stringify (objects give the famous
    ``[object Object]``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else js_text(v) for v in value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return js_json(value)


# --- the type guards' vocabulary (JSON values as JavaScript sees them) ---


def is_obj(args: Any) -> bool:
    """``typeof args === 'object' && args !== null`` (arrays count, as in JavaScript)."""
    return isinstance(args, dict | list)


def field(args: Any, key: str) -> Any:
    """``args[key]``, None for undefined (a missing key, or an array's)."""
    return args.get(key) if isinstance(args, dict) else None


def is_str(value: Any) -> bool:
    return isinstance(value, str)


def nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and len(value) > 0


def is_num(value: Any) -> bool:
    """``typeof value === 'number'`` (booleans are not numbers in JavaScript)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def truthy(value: Any) -> bool:
    """JavaScript truthiness (an empty list or object is true)."""
    if value is None or value is False:
        return False
    if is_num(value):
        return bool(value) and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def optional(args: Any, key: str, check: Callable[[Any], bool]) -> bool:
    """``args.key === undefined || check(args.key)`` (JSON null is not undefined)."""
    return not isinstance(args, dict) or key not in args or check(args[key])


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (``'s`` dropped), for the demo's term matching."""
    out: list[str] = []
    for raw in text.lower().replace("'s", " ").replace("\u2019s", " ").split():
        word = "".join(ch for ch in raw if ch.isalnum() or ch in "-_:.")
        word = word.strip("-_:.")
        if word and word not in {"and", "or", "not", "the", "of", "in", "a"}:
            out.append(word)
    return out


# --- the shipped files ---


@cache
def data(source: str) -> Mapping[str, Any]:
    """The demonstration data set of ``source`` (``data/<source>.json``)."""
    text = resources.files(__package__).joinpath("data", f"{source}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def public(source: str) -> Mapping[str, Any]:
    """The record of the public server of ``source`` (``public/<source>.json``)."""
    text = resources.files(__package__).joinpath("public", f"{source}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
