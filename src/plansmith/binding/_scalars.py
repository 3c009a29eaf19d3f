"""The scalars of a bindings file: YAML tags, JSON numbers, policy values, how a node
is named in a message (for :mod:`plansmith.binding._read`)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plansmith.errors import InputError
from plansmith.formats.yaml_nodes import Source, is_null, number
from plansmith.model import Tier

__all__ = [
    "BOOL",
    "BOOLS",
    "FLOAT",
    "INT",
    "JSON_NUMBER",
    "MAP",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MERGE",
    "NULL",
    "SEQ",
    "STR",
    "TAG",
    "TIERS",
    "as_attempts",
    "as_number",
    "as_seconds",
    "as_tier",
    "as_truth",
    "is_int",
    "json_number",
    "kind",
    "resolve_tag",
    "shown",
    "tag_text",
    "written_tag",
]

TIERS = tuple(t.value for t in Tier)
MAX_TIMEOUT = 7 * 24 * 3600  # within every timer API; longer work should report progress
MAX_RETRIES = 100  # more attempts than any failure class deserves; catches typos

TAG = "tag:yaml.org,2002:"
STR, NULL, BOOL, INT, FLOAT = (TAG + t for t in ("str", "null", "bool", "int", "float"))
MERGE, MAP, SEQ = (TAG + t for t in ("merge", "map", "seq"))
BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
resolve_tag: Callable[[type[Node], str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve


def kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if is_null(node):
        return "nothing"
    return f"the value {shown(node.value)}"


def written_tag(node: ScalarNode) -> str | None:
    """The tag written on ``node`` (``!foo x``), or None if YAML resolved it from the text."""
    implicit = STR if node.style else resolve_tag(ScalarNode, node.value, (True, False))
    if node.tag != implicit:
        return str(node.tag)
    mark = node.start_mark  # a tag equal to the resolved one: look at the text
    buffer = getattr(mark, "buffer", None)
    if not isinstance(buffer, str):
        return None
    head = buffer[mark.pointer : node.end_mark.pointer].split(None, 1)
    if head and head[0].startswith("&"):  # &anchor !!str 1e3
        head = head[1:]
    return str(node.tag) if head and head[0].startswith("!") else None


def tag_text(tag: str) -> str:
    return "!!" + tag.removeprefix(TAG) if tag.startswith(TAG) else tag


def as_number(node: Node) -> int | float | None:
    """A finite number (YAML's and JSON's forms), or None."""
    if (  # the common case, without a constructor
        isinstance(node, ScalarNode)
        and not node.style
        and node.tag in (INT, FLOAT, STR)
        and JSON_NUMBER.fullmatch(node.value)
    ):
        return json_number(node.value, node.tag)
    try:
        return number(Source(None, InputError), node, "")
    except InputError:
        return None


def as_seconds(node: Node) -> float | None:
    value = as_number(node)
    return float(value) if value is not None and 0 < value <= MAX_TIMEOUT else None


def as_attempts(node: Node) -> int | None:
    value = as_number(node)
    if value is None or value != int(value) or not 0 <= value <= MAX_RETRIES:
        return None
    return int(value)


def as_truth(node: Node) -> bool | None:
    if not isinstance(node, ScalarNode) or node.tag != BOOL:
        return None
    return BOOLS.get(node.value.lower())


def as_tier(node: Node) -> Tier | None:
    return Tier(node.value) if isinstance(node, ScalarNode) and node.value in TIERS else None


def is_int(text: str) -> bool:
    return "." not in text and "e" not in text and "E" not in text


def json_number(text: str, tag: str) -> int | float | None:
    """A JSON number's value (a float for a ``!!float``), or None if out of range."""
    try:
        value = float(text) if tag == FLOAT or not is_int(text) else int(text)
    except ValueError:  # more digits than Python converts
        return None
    return value if math.isfinite(value) else None


def shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
