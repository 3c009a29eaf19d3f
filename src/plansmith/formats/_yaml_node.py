"""YAML nodes with their places: compose a text once, then read it node by node.

The YAML/JSON readers work on PyYAML's composed node graph (``SafeLoader``
semantics, nothing is constructed) instead of on plain Python values, so that
every element keeps the line and column it was written at, and every error
points there. JSON texts are checked by :mod:`json` first (exact JSON syntax
errors), then composed the same way. Names are read from the scalar's text, so
that a predicate called ``on`` stays a name (YAML 1.1 would make it ``True``).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plansmith.errors import InputError, Location, ParseError

__all__ = [
    "NAME",
    "LOOSE_NAME",
    "Source",
    "Fields",
    "compose",
    "is_null",
    "mapping",
    "fields",
    "value_of",
    "read_top",
    "sequence",
    "name",
    "text",
    "number",
    "did_you_mean",
]

NAME = re.compile(r"\w[\w-]*")
"""A name of a type, predicate, action, task, parameter, object or constant."""
LOOSE_NAME = re.compile(r"[\w.][\w.+-]*")
"""A name of a domain or problem (dots and pluses allowed)."""

_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_MAX_MERGE_DEPTH = 32

Fields = dict[str, tuple[ScalarNode, Node]]


@dataclass(frozen=True, slots=True)
class Source:
    """The file being read, and the error class its mistakes raise."""

    file: str | None
    error: type[InputError]

    def loc(self, node: Node) -> Location:
        mark = node.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1)

    def fail(self, where: Node | Location, message: str, hint: str | None = None) -> InputError:
        """The error to raise for ``message`` at ``where`` (a node or a location)."""
        loc = where if isinstance(where, Location) else self.loc(where)
        return self.error(message, location=loc, hint=hint)


def compose(text: str, file: str | None, *, json_syntax: bool = False) -> Node | None:
    """The node graph of ``text`` (None for an empty document); ParseError on bad syntax."""
    text = text.removeprefix("\ufeff")
    if json_syntax:
        _check_json(text, file)
        # JSON allows tabs between tokens (never raw inside strings); YAML does not.
        text = text.replace("\t", " ")
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        problem = error.problem or error.context or "invalid YAML"
        raise ParseError(
            f"invalid {'JSON' if json_syntax else 'YAML'}: {problem}",
            location=loc,
            hint="check the indentation, the colons and the brackets near this place",
        ) from None
    except yaml.reader.ReaderError as error:
        code = ord(error.character) if isinstance(error.character, str) else error.character
        raise ParseError(
            f"the character U+{code:04X} is not allowed in YAML",
            location=_offset_location(text, error.position, file),
            hint="remove the control character, or quote the text with escapes",
        ) from None
    except yaml.YAMLError as error:
        raise ParseError(f"invalid YAML: {error}", location=Location(file)) from None
    except RecursionError:
        raise ParseError(
            "the document is nested too deeply", location=Location(file), hint="flatten it"
        ) from None


def _check_json(text: str, file: str | None) -> None:
    def refuse(constant: str) -> object:
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as error:
        raise ParseError(
            f"invalid JSON: {error.msg}",
            location=Location(file, error.lineno, error.colno),
            hint="check the commas, quotes and brackets near this place",
        ) from None
    except ValueError as error:
        found = re.search(r"-?\b(?:NaN|Infinity)\b", text)
        raise ParseError(
            f"invalid JSON: {error} is not a JSON number",
            location=_offset_location(text, found.start(), file) if found else Location(file),
            hint="use a finite number",
        ) from None
    except RecursionError:
        raise ParseError(
            "the document is nested too deeply", location=Location(file), hint="flatten it"
        ) from None


def _offset_location(text: str, offset: int, file: str | None) -> Location:
    before = text[:offset]
    return Location(file, before.count("\n") + 1, offset - before.rfind("\n"))


def is_null(node: Node | None) -> bool:
    """Whether ``node`` is missing or YAML's null (``~``, ``null`` or nothing)."""
    return node is None or (isinstance(node, ScalarNode) and node.tag == _NULL)


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "nothing" if is_null(node) else f"the value {node.value!r}"


def mapping(src: Source, node: Node | None, what: str) -> list[tuple[ScalarNode, Node]]:
    """The (key, value) pairs of a mapping (null reads as empty); keys are unique scalars.

    Merge keys (``<<: *defaults``) work as in YAML: explicit keys win.
    """
    if node is None or is_null(node):
        return []
    return _pairs(src, node, what, 0, {})


def _pairs(
    src: Source,
    node: Node,
    what: str,
    depth: int,
    seen: dict[int, list[tuple[ScalarNode, Node]]],
) -> list[tuple[ScalarNode, Node]]:
    """The pairs of ``node`` with its merges; ``seen`` holds those of the mappings merged
    so far (an alias merged many times is read once: nested merge lists of aliases
    would otherwise take exponential time)."""
    if id(node) in seen:
        return seen[id(node)]
    if not isinstance(node, MappingNode):
        raise src.fail(
            node,
            f"{what} must be a mapping (name: value), not {_kind(node)}",
            hint="write one `name: value` per line, or {name: value, ...}",
        )
    if depth > _MAX_MERGE_DEPTH:
        raise src.fail(node, f"merge keys in {what} nest too deeply (or refer to themselves)")
    merged: dict[str, tuple[ScalarNode, Node]] = {}
    explicit: dict[str, tuple[ScalarNode, Node]] = {}
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.tag == _MERGE:
            sources = value.value if isinstance(value, SequenceNode) else [value]
            for source in sources:
                for k, v in _pairs(src, source, what, depth + 1, seen):
                    merged.setdefault(k.value, (k, v))
            continue
        if not isinstance(key, ScalarNode) or is_null(key):
            raise src.fail(key, f"a key of {what} must be a name, not {_kind(key)}")
        if key.value in explicit:
            first = explicit[key.value][0].start_mark.line + 1
            raise src.fail(
                key,
                f"duplicate key {key.value!r} in {what}",
                hint=f"it was first given at line {first}; keep one",
            )
        explicit[key.value] = (key, value)
    pairs = seen[id(node)] = list({**merged, **explicit}.values())
    return pairs


def fields(
    src: Source,
    node: Node,
    what: str,
    allowed: Collection[str],
    required: Iterable[str] = (),
) -> Fields:
    """The keys of a mapping with a fixed set of keys; unknown and missing keys are errors."""
    out: Fields = {}
    for key, value in mapping(src, node, what):
        if key.value not in allowed:
            known = ", ".join(k for k in allowed if not k.startswith("$"))
            guess = did_you_mean(key.value, allowed)
            raise src.fail(
                key,
                f"unknown key {key.value!r} in {what}",
                hint=f"{guess + ' ' if guess else ''}the keys of {what} are: {known}",
            )
        out[key.value] = (key, value)
    for key_name in required:
        if key_name not in out or is_null(out[key_name][1]):
            raise src.fail(node, f"{what} has no {key_name!r}", hint=f"add `{key_name}:` to {what}")
    return out


def value_of(table: Fields, key: str) -> Node | None:
    """The value of ``key`` in ``table`` (what ``fields`` read), or None if it is not there."""
    entry = table.get(key)
    return entry[1] if entry else None


def read_top(
    src: Source,
    text: str,
    kind: str,
    allowed: Collection[str],
    required: Iterable[str],
    *,
    json_syntax: bool,
    hint: str,
) -> tuple[Node, Fields]:
    """The top mapping of a ``kind`` file (``domain``, ``problem``) and its fields; an
    empty file is an error (``hint``: what to start it with)."""
    root = compose(text, src.file, json_syntax=json_syntax)
    if root is None or is_null(root):
        raise src.fail(Location(src.file, 1), f"the {kind} file is empty", hint=hint)
    return root, fields(src, root, f"the {kind}", allowed, required)


def sequence(src: Source, node: Node | None, what: str) -> list[Node]:
    """The items of a list (null reads as empty)."""
    if node is None or is_null(node):
        return []
    if not isinstance(node, SequenceNode):
        raise src.fail(
            node,
            f"{what} must be a list, not {_kind(node)}",
            hint="write a list as [a, b] or as lines starting with '- '",
        )
    return list(node.value)


def name(src: Source, node: Node, what: str, pattern: re.Pattern[str] = NAME) -> str:
    """A name written as a scalar; its text, whatever YAML would resolve it to."""
    if not isinstance(node, ScalarNode) or is_null(node):
        raise src.fail(node, f"{what} must be a name, not {_kind(node)}")
    if not pattern.fullmatch(node.value):
        raise src.fail(
            node,
            f"{what} {node.value!r} is not a valid name",
            hint="use letters, digits, '_' and '-' (not starting with '-')",
        )
    return str(node.value)


def text(src: Source, node: Node, what: str) -> str:
    """A scalar's text (a description)."""
    if not isinstance(node, ScalarNode):
        raise src.fail(node, f"{what} must be text, not {_kind(node)}")
    return "" if is_null(node) else str(node.value)


def number(src: Source, node: Node, what: str) -> int | float:
    """A finite number: an int or float scalar (JSON number syntax included)."""
    value: object = None
    if isinstance(node, ScalarNode) and node.style is None:
        try:
            value = yaml.SafeLoader("").construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError):
            value = None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise src.fail(node, f"{what} must be a number", hint="write it as 1, 2.5 or 0")
    return value


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``did you mean 'x'?`` for the closest candidate, or None."""
    cutoff = 0.5 if len(word) <= 3 else 0.6  # one typo in a short name halves its ratio
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=cutoff)
    return f"did you mean {close[0]!r}?" if close else None
