"""The literal syntax of YAML/JSON domains: ``pred(a, b)``, ``not pred(a)``, ``a == b``.

Also task calls, ``task(a, b)``. This module only reads the syntax; names are
checked against the domain by :mod:`plansmith.formats._yaml_scope`. A predicate
or task without arguments may be written ``busy()`` or ``busy``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plansmith.errors import ParseError
from plansmith.formats._yaml_items import Located

__all__ = ["Term", "AtomSyntax", "EqualitySyntax", "parse_literal", "parse_call"]

LITERAL_HINT = "write a literal as pred(a, b), not pred(a), a == b or a != b"
CALL_HINT = "write a task call as name(a, b)"

_TOKEN = re.compile(r"\s*(?:(?P<name>\w[\w-]*)|(?P<op>==|!=|[(),])|(?P<bad>\S))")


@dataclass(frozen=True, slots=True)
class Term:
    """A name in a literal and its offset in the literal's text."""

    text: str
    offset: int


@dataclass(frozen=True, slots=True)
class AtomSyntax:
    """``name(args)``, negated if written ``not name(args)``."""

    name: Term
    args: tuple[Term, ...] = ()
    negated: bool = False


@dataclass(frozen=True, slots=True)
class EqualitySyntax:
    """``left == right`` (positive) or ``left != right``."""

    left: Term
    right: Term
    positive: bool = True


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # name | op | bad | end
    text: str
    offset: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None:  # only blanks remain
            out.append(_Token("end", "", len(text.rstrip())))
            return out
        kind = match.lastgroup or "bad"
        out.append(_Token(kind, match.group(kind), match.start(kind)))
        pos = match.end()


class _Parser:
    def __init__(self, item: Located, hint: str) -> None:
        self.item = item
        self.hint = hint
        self.tokens = _tokens(item.text)
        self.pos = 0

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, token: _Token, message: str) -> ParseError:
        return ParseError(message, location=self.item.at(token.offset), hint=self.hint)

    def name(self, what: str) -> Term:
        token = self.take()
        if token.kind != "name":
            found = "the end" if token.kind == "end" else repr(token.text)
            raise self.fail(token, f"expected {what} in {self.item.text!r}, found {found}")
        return Term(token.text, token.offset)

    def arguments(self) -> tuple[Term, ...]:
        if self.peek().text != "(" or self.peek().kind != "op":
            return ()
        self.take()
        if self.peek().text == ")":
            self.take()
            return ()
        args = [self.name("an argument")]
        while True:
            token = self.take()
            if token.text == ")" and token.kind == "op":
                return tuple(args)
            if token.text != "," or token.kind != "op":
                found = "the end" if token.kind == "end" else repr(token.text)
                raise self.fail(token, f"expected ',' or ')' in {self.item.text!r}, found {found}")
            args.append(self.name("an argument"))

    def end(self) -> None:
        token = self.peek()
        if token.kind != "end":
            raise self.fail(token, f"unexpected {token.text!r} in {self.item.text!r}")


def parse_literal(item: Located) -> AtomSyntax | EqualitySyntax:
    """Read one literal; ParseError (located at the offending character) if malformed."""
    parser = _Parser(item, LITERAL_HINT)
    negated = parser.peek().text == "not" and parser.peek(1).kind == "name"
    if negated:
        parser.take()
    first = parser.name("a predicate name")
    op = parser.peek()
    if op.kind == "op" and op.text in ("==", "!="):
        parser.take()
        right = parser.name("a name after " + op.text)
        parser.end()
        return EqualitySyntax(first, right, positive=(op.text == "==") != negated)
    args = parser.arguments()
    parser.end()
    return AtomSyntax(first, args, negated)


def parse_call(item: Located) -> AtomSyntax:
    """Read one task call ``name(args)``; ParseError if malformed."""
    parser = _Parser(item, CALL_HINT)
    first = parser.name("a task or action name")
    args = parser.arguments()
    parser.end()
    return AtomSyntax(first, args)
