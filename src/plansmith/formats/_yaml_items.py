"""Literal and task-call texts of a list, each with a map from its characters to the file.

YAML splits a flow list at every comma, so ``[on(a, b), clear(a)]`` arrives as
the items ``on(a``, ``b)`` and ``clear(a)``. :func:`items` glues an item with an
open parenthesis to the plain items that close it, taking the original text
from the source, so that users can write literals with several arguments in
flow lists without quoting them.
"""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import Node, ScalarNode, SequenceNode

from plansmith.errors import Location
from plansmith.formats._yaml_node import Source, is_null, sequence

__all__ = ["Located", "entries", "items", "located"]


@dataclass(frozen=True, slots=True)
class Located:
    """A text and where it starts; ``exact`` if each character maps onto the source."""

    text: str
    loc: Location
    exact: bool = False

    def at(self, offset: int) -> Location:
        """The location of the character at ``offset`` (the start if not exact)."""
        if not self.exact or offset <= 0 or self.loc.line is None or self.loc.column is None:
            return self.loc
        before = self.text[:offset]
        newlines = before.count("\n")
        if newlines == 0:
            return Location(self.loc.file, self.loc.line, self.loc.column + offset)
        return Location(self.loc.file, self.loc.line + newlines, offset - before.rfind("\n"))


def _raw(node: Node) -> str | None:
    buffer = getattr(node.start_mark, "buffer", None)
    if not isinstance(buffer, str):
        return None
    return buffer[node.start_mark.pointer : node.end_mark.pointer]


def located(src: Source, node: Node, what: str) -> Located:
    """One scalar as a located text."""
    if not isinstance(node, ScalarNode) or is_null(node):
        kind = "a list" if isinstance(node, SequenceNode) else "a mapping or nothing"
        raise src.fail(
            node,
            f"{what} must be text such as pred(a, b), not {kind}",
            hint="write each literal or task call as one item of the list",
        )
    value = str(node.value)
    loc = src.loc(node)
    raw = _raw(node)
    if raw is not None and node.style is None and raw == value:
        return Located(value, loc, exact=True)
    if raw is not None and node.style in ("'", '"') and raw[1:-1] == value and "\n" not in raw:
        assert loc.column is not None
        return Located(value, Location(loc.file, loc.line, loc.column + 1), exact=True)
    return Located(value, loc)


def entries(src: Source, node: Node | None, what: str) -> list[Located | Node]:
    """The items of a list: scalars as located texts (glued as above), other nodes as they are."""
    nodes = sequence(src, node, what)
    flow = isinstance(node, SequenceNode) and bool(node.flow_style)
    out: list[Located | Node] = []
    i = 0
    while i < len(nodes):
        first = nodes[i]
        if not isinstance(first, ScalarNode) or is_null(first):
            out.append(first)
            i += 1
            continue
        item = located(src, first, what)
        j = i + 1
        if flow and first.style is None:
            depth = item.text.count("(") - item.text.count(")")
            while depth > 0 and j < len(nodes):
                nxt = nodes[j]
                if not isinstance(nxt, ScalarNode) or nxt.style is not None or is_null(nxt):
                    break
                depth += nxt.value.count("(") - nxt.value.count(")")
                j += 1
            buffer = getattr(first.start_mark, "buffer", None)
            if j > i + 1 and isinstance(buffer, str):
                joined = buffer[first.start_mark.pointer : nodes[j - 1].end_mark.pointer]
                item = Located(joined, src.loc(first), exact=True)
            else:
                j = i + 1
        out.append(item)
        i = j
    return out


def items(src: Source, node: Node | None, what: str) -> list[Located]:
    """The located texts of a list of literals or task calls (null reads as empty)."""
    return [
        entry if isinstance(entry, Located) else located(src, entry, what)
        for entry in entries(src, node, what)
    ]
