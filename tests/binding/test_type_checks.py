"""Arguments other steps fill, against the tool's inputSchema: text around a reference
is a string, checked as one by ``bind``; a whole reference keeps its value's type, known
at run time, and ``bind`` gives the runner the types to check it against (``type_checks``,
``type_mismatch``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import (
    BoundStep,
    ToolCatalog,
    ToolSpec,
    TypeCheck,
    type_checks,
    type_mismatch,
)
from plansmith.errors import BindingError
from plansmith.model import JSONValue

INT = {"type": "integer"}
CATALOG = ToolCatalog(
    (
        (
            "shapes",
            (
                ToolSpec("emit", {"type": "object"}),
                ToolSpec(
                    "need",
                    {
                        "type": "object",
                        "properties": {
                            "n": INT,
                            "maybe": {"anyOf": [INT, {"type": "null"}], "default": None},
                            "s": {"type": "string", "pattern": "^[0-9]+$"},
                            "any": {},
                            "pair": {"type": "array", "prefixItems": [INT, {"type": "string"}]},
                            "rows": {
                                "type": "array",
                                "uniqueItems": True,
                                "items": {"type": "object", "properties": {"id": INT}},
                            },
                            "ref": {"$ref": "#/$defs/n"},
                        },
                        "$defs": {"n": INT},
                        "required": ["n"],
                    },
                ),
            ),
        ),
    )
)


def _bindings(arguments: str) -> str:
    return (
        "bindings:\n"
        "  work:\n"
        "    server: shapes\n"
        "    tool: emit\n"
        '    outputs: {n: "$.structured.n", v: "$.structured.v"}\n'
        "  finish:\n"
        "    server: shapes\n"
        "    tool: need\n"
        f"    arguments: {arguments}\n"
    )


PLAN = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])


def _problems(arguments: str) -> list[str]:
    with pytest.raises(BindingError) as info:
        h.bound(PLAN, _bindings(arguments), CATALOG)
    return [str(p) for p in info.value.problems]


def _finish(arguments: str) -> BoundStep:
    step = h.bound(PLAN, _bindings(arguments), CATALOG).step("b")
    assert step is not None
    return step


def test_text_around_a_reference_is_checked_as_the_string_it_always_is() -> None:
    (problem,) = _problems('{n: "${work(x).n}0"}')
    first, hint = problem.splitlines()
    assert first == (
        "bindings.yaml:9:20 step b: argument n of 'need' fails its inputSchema:"
        " '${work(x).n}0' is not of type 'integer'"
    )
    assert hint.startswith('  hint: need\'s inputSchema at n: {"type":"integer"}; text around')
    assert "write the reference alone" in hint


def test_text_around_a_reference_fails_a_type_union_that_takes_no_string() -> None:
    (problem,) = _problems('{n: 1, maybe: "id-${work(x).n}"}')
    assert problem.splitlines()[0] == (
        "bindings.yaml:9:30 step b: argument maybe of 'need' fails its inputSchema:"
        " 'id-${work(x).n}' is not valid under any of the given schemas"
    )


def test_what_text_around_a_reference_holds_is_left_to_run_time() -> None:
    # a string is what these take; its pattern is judged on the text the run makes
    _finish('{n: 1, s: "${work(x).n}0", any: "x${work(x).v}"}')


def test_a_whole_reference_is_not_judged_at_bind_time_but_gets_a_type_check() -> None:
    step = _finish('{n: "${work(x).v}", maybe: "${work(x).n}", any: "${work(x).v}"}')
    assert step.type_checks == (
        TypeCheck(("n",), ("integer",), "${work(x).v}"),
        TypeCheck(("maybe",), ("integer", "null"), "${work(x).n}"),
    )


def test_values_other_steps_fill_make_no_false_problem_in_what_holds_them() -> None:
    # two rows that may differ once filled: uniqueItems is left to run time
    _finish('{n: 1, rows: [{id: "${work(x).n}"}, {id: "${work(x).v}"}]}')
    # but the keys a mapping is written with are known: a missing required key is not
    (problem,) = _problems('{maybe: "${work(x).n}"}')
    assert "'n' is a required property" in problem


def test_type_checks_follow_properties_and_items_to_a_plain_type() -> None:
    schema = CATALOG.tool("shapes", "need").input_schema  # type: ignore[union-attr]
    arguments: JSONValue = {
        "n": "${work(x).n}",
        "pair": ["${work(x).n}", "${work(x).v}", "${work(x).v}"],
        "rows": [{"id": "${ work(x).n }"}],
        "ref": "${work(x).n}",  # through a $ref: not followed
        "any": "${work(x).n}",  # no type: nothing to check
        "s": "${x}",  # a parameter: known, and checked, at bind time
        "$${n}": "${work(x).n}",  # no such property
    }
    assert type_checks(arguments, schema) == (
        TypeCheck(("n",), ("integer",), "${work(x).n}"),
        TypeCheck(("pair", 0), ("integer",), "${work(x).n}"),
        TypeCheck(("pair", 1), ("string",), "${work(x).v}"),
        TypeCheck(("rows", 0, "id"), ("integer",), "${ work(x).n }"),
    )
    assert type_checks(arguments, {"type": "object"}) == ()
    assert type_checks("${work(x).n}", {"type": "object"}) == (
        TypeCheck((), ("object",), "${work(x).n}"),
    )


CHECKS = (
    TypeCheck(("n",), ("integer",), "${produce(d).v}"),
    TypeCheck(("rows", 0, "x"), ("number", "null"), "${produce(d).x}"),
)


@pytest.mark.parametrize(
    "arguments",
    [
        {"n": 42, "rows": [{"x": 1.5}]},
        {"n": 42.0, "rows": [{"x": None}]},  # 42.0 is an integer in JSON Schema
        {"n": -1, "rows": [{"x": 3}]},  # an integer is a number
        {"n": 1, "rows": []},  # not where the template put it: the tool says
    ],
)
def test_a_rendered_argument_of_a_type_its_tool_takes_passes(arguments: JSONValue) -> None:
    assert type_mismatch(CHECKS, arguments) is None


def test_a_rendered_argument_of_another_type_says_which_reference_gave_what() -> None:
    assert type_mismatch(CHECKS, {"n": [1, 2, 3], "rows": [{"x": 1}]}) == (
        "argument n: ${produce(d).v} gave an array ([1,2,3])"
        " where the tool's inputSchema takes an integer"
    )
    assert type_mismatch(CHECKS, {"n": 1, "rows": [{"x": "1"}]}) == (
        'argument rows/0/x: ${produce(d).x} gave a string ("1")'
        " where the tool's inputSchema takes a number or null"
    )
    assert type_mismatch(CHECKS, {"n": True, "rows": []}) is not None  # a boolean
    assert type_mismatch(CHECKS, {"n": 1.5, "rows": []}) is not None
