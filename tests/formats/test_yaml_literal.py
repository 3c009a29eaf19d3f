"""The literal and task-call syntax: ``pred(a, b)``, ``not pred(a)``, ``a == b``, ``task(a)``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.errors import Location, ParseError
from plansmith.formats._yaml_items import Located
from plansmith.formats._yaml_literal import (
    AtomSyntax,
    EqualitySyntax,
    Term,
    parse_call,
    parse_literal,
)

START = Location("f.yaml", 3, 10)


def _at(text: str) -> Located:
    return Located(text, START, exact=True)


def test_atom_with_arguments_keeps_each_offset() -> None:
    assert parse_literal(_at("on(x, y)")) == AtomSyntax(Term("on", 0), (Term("x", 3), Term("y", 6)))


def test_negation_and_zero_arity_forms() -> None:
    assert parse_literal(_at("not busy()")) == AtomSyntax(Term("busy", 4), (), negated=True)
    assert parse_literal(_at("handempty")) == AtomSyntax(Term("handempty", 0))
    assert parse_literal(_at("  not   on-table( b-1 )  ")) == AtomSyntax(
        Term("on-table", 8), (Term("b-1", 18),), negated=True
    )


def test_equalities_and_negated_equality() -> None:
    assert parse_literal(_at("a == b")) == EqualitySyntax(Term("a", 0), Term("b", 5), True)
    assert parse_literal(_at("a!=b")) == EqualitySyntax(Term("a", 0), Term("b", 3), False)
    negated = parse_literal(_at("not a == b"))
    assert isinstance(negated, EqualitySyntax)
    assert negated.positive is False


def test_a_predicate_may_be_called_not() -> None:
    assert parse_literal(_at("not(x)")) == AtomSyntax(Term("not", 0), (Term("x", 4),))


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("", 10, "expected a predicate name"),
        ("on(x, y", 17, "expected ',' or ')'"),
        ("on(x,, y)", 15, "expected an argument"),
        ("on(x) extra", 16, "unexpected 'extra'"),
        ("on x", 13, "unexpected 'x'"),
        ("a ==", 14, "expected a name after =="),
        ("p(?x)", 12, "expected an argument"),
        ("p(x) && q(x)", 15, "unexpected '&'"),
    ],
)
def test_malformed_literal_points_at_the_offending_character(
    text: str, column: int, message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        parse_literal(_at(text))
    assert caught.value.location == Location("f.yaml", 3, column)
    assert message in caught.value.message
    assert caught.value.hint is not None
    assert "pred(a, b)" in caught.value.hint


def test_task_call_refuses_negation_and_equality() -> None:
    assert parse_call(_at("publish(a, b)")) == AtomSyntax(
        Term("publish", 0), (Term("a", 8), Term("b", 11))
    )
    with pytest.raises(ParseError, match="unexpected 'publish'"):
        parse_call(_at("not publish(a)"))
    with pytest.raises(ParseError, match="unexpected '=='"):
        parse_call(_at("a == b"))


def test_offsets_across_lines_map_to_later_lines() -> None:
    item = _at("on(a,\n   b)")
    syntax = parse_literal(item)
    assert isinstance(syntax, AtomSyntax)
    assert item.at(syntax.args[1].offset) == Location("f.yaml", 4, 4)


def test_inexact_text_reports_its_start() -> None:
    with pytest.raises(ParseError) as caught:
        parse_literal(Located("on(x", START))
    assert caught.value.location == START


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)


@given(
    name=NAMES.filter(lambda n: n != "not"),
    args=st.lists(NAMES, max_size=4),
    negated=st.booleans(),
    spaces=st.sampled_from(["", " ", "  "]),
)
def test_written_literals_read_back(name: str, args: list[str], negated: bool, spaces: str) -> None:
    text = ("not " if negated else "") + name + "(" + f",{spaces}".join(args) + ")"
    syntax = parse_literal(_at(text))
    assert isinstance(syntax, AtomSyntax)
    assert (syntax.name.text, [a.text for a in syntax.args], syntax.negated) == (
        name,
        args,
        negated,
    )
    assert all(text[a.offset : a.offset + len(a.text)] == a.text for a in syntax.args)


@given(st.text(max_size=40))
def test_any_text_reads_or_raises_parse_error(text: str) -> None:
    for read in (parse_literal, parse_call):
        try:
            read(_at(text))
        except ParseError as error:
            location = error.location
        else:
            location = START
        assert location is not None
        assert location.line is not None
