"""JSON with comments and trailing commas (VS Code's ``mcp.json``), every value with
its offset: the scanner of the servers file's reader (``_config``).

Strings are read with :func:`json.decoder.scanstring` and numbers as :mod:`json` reads
them, so values are exactly what ``json.loads`` would give; the scan is linear, with a
bounded depth, and every syntax error is a located ``ServerConfigError``. No maintained
library keeps the places of values in JSON with comments (``json5``, ``pyjson5`` read
JSON5; ``commentjson`` only strips comments).
"""

from __future__ import annotations

import bisect
import json.decoder
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from plansmith.errors import Location, ServerConfigError

__all__ = ["JsonKind", "JsonNode", "JsoncScanner", "Members", "plain", "show"]

JsonKind = Literal["object", "array", "string", "number", "boolean", "null"]


@dataclass(slots=True)
class JsonNode:
    """A JSON value written at ``text[start:end]``. An object's value is a list of
    (key, key offset, value); an array's a list of nodes."""

    kind: JsonKind
    value: Any
    start: int
    end: int


Members = dict[str, tuple[int, JsonNode]]

_SKIP = re.compile(r"(?:[ \t\n\r]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")  # json's own
_SURROGATE = re.compile("[\ud800-\udfff]")
_LITERALS: dict[str, tuple[JsonKind, object]] = {
    "true": ("boolean", True),
    "false": ("boolean", False),
    "null": ("null", None),
}
_MAX_DEPTH = 64  # a servers file needs 4 levels; other clients' keys a few more
# the (C) string scanner of json.loads; typeshed leaves it out
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_JSON_HINT = "check the commas, quotes and brackets near this place"


class JsoncScanner:
    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self._newlines: list[int] | None = None

    def loc(self, offset: int) -> Location:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_left(self._newlines, offset)
        line_start = self._newlines[line - 1] + 1 if line else 0
        return Location(self.source, line + 1, offset - line_start + 1)

    def error(self, offset: int, message: str, hint: str | None = None) -> ServerConfigError:
        return ServerConfigError(message, location=self.loc(offset), hint=hint)

    def syntax(self, offset: int, message: str, hint: str = _JSON_HINT) -> ServerConfigError:
        return self.error(offset, f"not valid JSON: {message}", hint)

    def document(self) -> JsonNode:
        pos = self._skip(0)
        if pos == len(self.text):
            raise self.syntax(pos, "Expecting value", 'the file is empty; write {"mcpServers": {}}')
        node = self._value(pos, 0)
        pos = self._skip(node.end)
        if pos != len(self.text):
            raise self.syntax(pos, "Extra data", "the file holds one JSON object; remove the rest")
        return node

    def _skip(self, pos: int) -> int:
        end = _SKIP.match(self.text, pos)
        pos = end.end() if end else pos
        if self.text.startswith("/*", pos):
            raise self.syntax(pos, "a /* comment is not closed", "end the comment with */")
        return pos

    def _value(self, pos: int, depth: int) -> JsonNode:
        text = self.text
        char = text[pos : pos + 1]
        if char == '"':
            return self._string(pos)
        if char in "{[" and char:
            if depth >= _MAX_DEPTH:
                raise self.error(
                    pos,
                    f"the servers file is nested more than {_MAX_DEPTH} levels deep",
                    hint="a servers file needs four levels: file, servers, server, env",
                )
            return self._object(pos, depth + 1) if char == "{" else self._array(pos, depth + 1)
        for word, (kind, value) in _LITERALS.items():
            if text.startswith(word, pos):
                return JsonNode(kind, value, pos, pos + len(word))
        number = _NUMBER.match(text, pos)
        if number:
            return self._number(number)
        if text.startswith(("NaN", "Infinity", "-Infinity"), pos):
            raise self.syntax(pos, "NaN and Infinity are not JSON numbers", "use a finite number")
        raise self.syntax(pos, "Expecting value")

    def _string(self, pos: int) -> JsonNode:
        try:
            value, end = _scanstring(self.text, pos + 1, True)
        except json.JSONDecodeError as error:
            raise self.syntax(error.pos, error.msg) from None
        if _SURROGATE.search(value):
            raise self.error(
                pos,
                "a string holds half of a UTF-16 surrogate pair (\\uD800-\\uDFFF alone)",
                hint="write the character itself, or both halves (e.g. \\uD83D\\uDE00)",
            )
        return JsonNode("string", value, pos, end)

    def _number(self, match: re.Match[str]) -> JsonNode:
        integer, fraction, exponent = match.groups()
        try:
            if fraction or exponent:
                value: float = float(integer + (fraction or "") + (exponent or ""))
            else:
                value = int(integer)
        except ValueError:  # more digits than int() converts
            raise self.syntax(
                match.start(), "a number with too many digits", "shorten it"
            ) from None
        return JsonNode("number", value, match.start(), match.end())

    def _object(self, start: int, depth: int) -> JsonNode:
        text = self.text
        pairs: list[tuple[str, int, JsonNode]] = []
        pos = self._skip(start + 1)
        while text[pos : pos + 1] != "}":
            if text[pos : pos + 1] != '"':
                raise self.syntax(pos, "Expecting property name enclosed in double quotes")
            key = self._string(pos)
            pos = self._skip(key.end)
            if text[pos : pos + 1] != ":":
                raise self.syntax(pos, "Expecting ':' delimiter")
            value = self._value(self._skip(pos + 1), depth)
            pairs.append((key.value, key.start, value))
            pos = self._skip(value.end)
            if text[pos : pos + 1] == ",":
                pos = self._skip(pos + 1)  # a trailing comma is allowed (JSONC)
            elif text[pos : pos + 1] != "}":
                raise self.syntax(pos, "Expecting ',' delimiter")
        return JsonNode("object", pairs, start, pos + 1)

    def _array(self, start: int, depth: int) -> JsonNode:
        text = self.text
        items: list[JsonNode] = []
        pos = self._skip(start + 1)
        while text[pos : pos + 1] != "]":
            item = self._value(pos, depth)
            items.append(item)
            pos = self._skip(item.end)
            if text[pos : pos + 1] == ",":
                pos = self._skip(pos + 1)
            elif text[pos : pos + 1] != "]":
                raise self.syntax(pos, "Expecting ',' delimiter")
        return JsonNode("array", items, start, pos + 1)


def plain(node: JsonNode) -> object:
    if node.kind == "object":
        return {k: plain(v) for k, _, v in node.value}
    if node.kind == "array":
        return [plain(v) for v in node.value]
    return node.value


def show(node: JsonNode) -> str:
    """The value as a message names it."""
    if node.kind in ("object", "array") and node.end - node.start > 60:
        return "an object" if node.kind == "object" else "a list"
    shown = repr(plain(node))
    return shown if len(shown) <= 60 else shown[:57] + "..."
