"""A tolerant S-expression reader for PDDL: tokens and lists with line:column.

The reader knows nothing of PDDL beyond its lexical rules: ``(`` and ``)``
delimit lists, ``;`` starts a comment that runs to the end of the line, and
every other run of non-blank characters is a symbol. Symbols are lower-cased
(PDDL is case-insensitive); each keeps the line and column (both from 1) where
it starts, and each list those of its opening parenthesis. The tree is built
with an explicit stack, so deep nesting cannot exhaust Python's recursion
limit; nesting deeper than :data:`MAX_DEPTH` is refused as a syntax error,
because no planning file needs it and the parsers above recurse over it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from plansmith.errors import Location, ParseError

__all__ = ["MAX_DEPTH", "Sym", "SList", "Node", "read_sexpr"]

MAX_DEPTH = 100

_TOKEN = re.compile(r"[()]|[^\s();]+")


class Sym(NamedTuple):
    """A symbol, lower-cased, and where it starts."""

    text: str
    file: str | None
    line: int
    column: int

    @property
    def loc(self) -> Location:
        return Location(self.file, self.line, self.column)


class SList(NamedTuple):
    """A parenthesised list, and where its ``(`` is."""

    items: tuple[Node, ...]
    file: str | None
    line: int
    column: int

    @property
    def loc(self) -> Location:
        return Location(self.file, self.line, self.column)


Node = Sym | SList


def read_sexpr(text: str, file: str | None = None) -> SList:
    """The one top-level list of ``text``; a :class:`ParseError` if there is not exactly one.

    A ``)`` too many surfaces only where the top level ends, often at the end of
    the file; the error then points at the ``)`` where the imbalance most likely
    starts, found from the indentation (see :func:`_early_close`).
    """
    stack: list[tuple[int, int, list[Node]]] = []
    top: list[Node] = []
    text = text.removeprefix("\ufeff")
    # per non-blank line: (line, indentation, depth at its start, its ')' columns)
    shape: list[tuple[int, int, int, list[int]]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        comment = line.find(";")
        if comment >= 0:
            line = line[:comment]
        closes: list[int] = []
        stripped = line.lstrip()
        if stripped:
            shape.append((lineno, len(line) - len(stripped), len(stack), closes))
        for m in _TOKEN.finditer(line):
            tok = m.group()
            column = m.start() + 1
            if tok == "(":
                if len(stack) >= MAX_DEPTH:
                    raise ParseError(
                        f"parentheses nested deeper than {MAX_DEPTH} levels",
                        location=Location(file, lineno, column),
                        hint="a PDDL file never needs this; check for a run of '('",
                    )
                stack.append((lineno, column, []))
            elif tok == ")":
                if not stack:
                    raise _stray(file, Location(file, lineno, column), shape)
                closes.append(column)
                open_line, open_column, items = stack.pop()
                node = SList(tuple(items), file, open_line, open_column)
                (stack[-1][2] if stack else top).append(node)
            else:
                (stack[-1][2] if stack else top).append(Sym(tok.lower(), file, lineno, column))
    if stack:
        open_line, open_column, _ = stack[-1]
        raise ParseError(
            f"unbalanced parentheses: the '(' at line {open_line}, column {open_column}"
            " is never closed",
            location=Location(file, open_line, open_column),
            hint=f"add {len(stack)} ')' where the definition should end",
        )
    if not top:
        raise ParseError(
            "the file is empty: expected '(define ...)'",
            location=Location(file, 1, 1),
            hint="a PDDL file holds one '(define (domain NAME) ...)' or "
            "'(define (problem NAME) ...)'",
        )
    first = top[0]
    if not isinstance(first, SList):
        raise ParseError(
            f"expected '(define ...)', found '{first.text}'",
            location=first.loc,
            hint="a PDDL file starts with '(define'",
        )
    if len(top) > 1:
        extra = top[1]
        early = _early_close(shape, extra.line)
        if early is not None:
            raise _stray(file, extra.loc, shape)
        raise ParseError(
            "text after the end of the definition",
            location=extra.loc,
            hint="the '(define ...)' closes before this; check for a ')' too many above it",
        )
    return first


def _stray(
    file: str | None, surfaced: Location, shape: list[tuple[int, int, int, list[int]]]
) -> ParseError:
    """The error for a ``)`` too many, at the ``)`` that most likely closes too early."""
    early = _early_close(shape, surfaced.line or 0)
    if early is None:
        return ParseError(
            "unexpected ')' with no matching '('",
            location=surfaced,
            hint="remove it, or add the '(' it was meant to close",
        )
    line, column = early
    return ParseError(
        f"unbalanced parentheses: this ')' closes a list too early (the definition "
        f"then ends before line {surfaced.line}, column {surfaced.column})",
        location=Location(file, line, column),
        hint="the indentation of the next line says it belongs inside the list this "
        "')' closes; remove it, or add the '(' it was meant to close",
    )


def _early_close(
    shape: list[tuple[int, int, int, list[int]]], until: int
) -> tuple[int, int] | None:
    """``(line, column)`` of the ``)`` that most likely closes a list too early.

    In a well-formed file, a line indented deeper than the one before it
    continues a list that line opened, so it starts deeper; and lines indented
    alike are nested alike. The first line (before ``until``) that breaks
    either rule follows the culprit: the last ``)`` of the line before it. None
    when the indentation says nothing (a file on one line, say).
    """
    depth_of: dict[int, int] = {}
    previous: tuple[int, int, int, list[int]] | None = None
    for entry in shape:
        line, indent, depth, _ = entry
        if line > until:
            break
        expected = depth_of.get(indent)
        if previous is not None and (
            (expected is not None and depth < expected)
            or (indent > previous[1] and depth <= previous[2])
        ):
            return (previous[0], previous[3][-1]) if previous[3] else None
        depth_of.setdefault(indent, depth)
        previous = entry
    return None
