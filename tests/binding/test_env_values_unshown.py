"""An ``${env.NAME}`` is how a secret (an API token) reaches a tool, so ``bind``'s
problems never quote its value: an argument that holds one and fails the tool's
inputSchema is told by the reference and the schema's keyword, the value not shown.
Other values are quoted as jsonschema writes them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import Binding, Bindings, ToolCatalog, ToolSpec, bind
from plansmith.errors import BindingError, Location
from plansmith.model import JSONValue

SECRET = "SECRETVALUE"
PREFIX = "argument code of 'work' fails its inputSchema: "


def _catalog(code: JSONValue) -> ToolCatalog:
    schema: dict[str, JSONValue] = {"type": "object", "properties": {"code": code}}
    return ToolCatalog((("counter", (ToolSpec("work", schema),)),))


def _problems(arguments: str, code: JSONValue, env: dict[str, str]) -> list[str]:
    text = h.BINDINGS.replace('arguments: {name: "${x}"}', f"arguments: {arguments}")
    plan = h.plan([h.Step("a", "work", ("i0",))])
    with pytest.raises(BindingError) as info:
        bind(plan, h.domain(), h.bindings(text), _catalog(code), env=env)
    return [str(p) for p in info.value.problems]


def _first_lines(arguments: str, code: JSONValue) -> list[str]:
    problems = _problems(arguments, code, {"X": SECRET})
    assert all(SECRET not in p for p in problems)
    return [p.splitlines()[0].partition(" step a: ")[2] for p in problems]


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        (
            '{code: "${env.X}"}',
            {"type": "string", "pattern": "^[0-9]+$"},
            "${env.X} (its value, not shown) does not match '^[0-9]+$'",
        ),
        (
            '{code: "${env.X}"}',
            {"type": "integer"},
            "${env.X} (its value, not shown) is not of type 'integer'",
        ),
        (
            '{code: "tok=${env.X}"}',
            {"type": "string", "maxLength": 4},
            "'tok=${env.X}' (its value, not shown) is longer than 4 characters",
        ),
        (
            '{code: "${env.X}"}',
            {"enum": ["a", "b"]},
            "${env.X} (its value, not shown) is not one of ['a', 'b']",
        ),
        (
            '{code: "${env.X}"}',
            {"anyOf": [{"type": "integer"}, {"pattern": "^a"}]},
            "${env.X} (its value, not shown) is not valid under any of the given schemas",
        ),
        (
            '{code: {list: ["${env.X}"]}}',
            {"type": "object", "maxProperties": 0},
            "the object that holds ${env.X} (its value, not shown) has more than 0 properties",
        ),
    ],
    ids=["pattern", "type", "maxLength-text-around", "enum", "anyOf", "nested-object"],
)
def test_an_argument_holding_an_environment_variable_fails_its_schema_without_its_value(
    arguments: str, code: JSONValue, says: str
) -> None:
    assert _first_lines(arguments, code) == [PREFIX + says]


def test_a_value_inside_nested_arguments_is_told_at_its_place_without_its_value() -> None:
    code = {"type": "object", "properties": {"list": {"items": {"pattern": "^[0-9]+$"}}}}
    assert _first_lines('{code: {list: [1, "${env.X}"]}}', code) == [
        "argument code/list/1 of 'work' fails its inputSchema:"
        " ${env.X} (its value, not shown) does not match '^[0-9]+$'"
    ]


def test_text_around_a_variable_and_another_steps_output_is_told_as_written() -> None:
    echo = ToolSpec("echo", {"type": "object", "properties": {"x": {"type": "integer"}}})
    catalog = ToolCatalog((("counter", (h.CATALOG.servers[0][1][0], echo)),))
    text = h.BINDINGS.replace('{x: "${work(x).done}"}', '{x: "${env.X}-${work(x).done}"}')
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",), after=("a",))])
    with pytest.raises(BindingError) as info:
        bind(plan, h.domain(), h.bindings(text), catalog, env={"X": SECRET})
    (problem,) = [str(p) for p in info.value.problems]
    assert problem.splitlines()[0] == (
        "bindings.yaml:12:20 step b: argument x of 'echo' fails its inputSchema:"
        " '${env.X}-${work(x).done}' (its value, not shown) is not of type 'integer'"
    )
    assert "text around a reference is a string" in problem


def test_a_value_that_is_no_environment_variable_is_quoted_as_before() -> None:
    code = {"type": "string", "pattern": "^[0-9]+$"}
    problems = _problems('{code: "12x-${x}"}', code, {"X": SECRET})
    assert [p.splitlines()[0].partition(" step a: ")[2] for p in problems] == [
        PREFIX + "'12x-i0' does not match '^[0-9]+$'"
    ]


def test_the_keys_of_an_object_holding_an_environment_variable_are_still_named() -> None:
    extra = {"type": "object", "additionalProperties": False}
    assert _first_lines('{code: {k: "${env.X}"}}', extra) == [
        PREFIX + "Additional properties are not allowed ('k' was unexpected)"
    ]


def test_a_key_holding_an_environment_variable_is_not_rendered_into_a_problem() -> None:
    # the reader refuses such a key; bindings made in code (the web API) can hold one
    binding = Binding("work", "counter", "work", {"code": {"${env.X}": 1}}, loc=Location("api", 3))
    code = {"type": "object", "additionalProperties": {"type": "string"}}
    plan = h.plan([h.Step("a", "work", ("i0",))])
    with pytest.raises(BindingError) as info:
        bind(plan, h.domain(), Bindings((binding,), "api"), _catalog(code), env={"X": SECRET})
    problems = [str(p) for p in info.value.problems]
    assert all(SECRET not in p for p in problems)
    assert "the argument key '${env.X}' holds a reference" in problems[0]


_FAILING: list[JSONValue] = [
    {"type": "integer"},
    {"type": "array"},
    {"maxLength": 3},
    {"pattern": "^[0-9]*$"},
    {"enum": [1, "a"]},
    {"const": 1},
    {"not": {}},
    {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    {"oneOf": [{"type": "string"}, {"type": "string"}]},
    {"format": "ipv4", "type": "integer"},
    False,
]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.text(max_size=20).map(lambda s: "QQSECRET" + s),
    code=st.sampled_from(_FAILING),
    written=st.sampled_from(
        ['"${env.X}"', '"a ${env.X} b"', '["${env.X}"]', '{k: "${env.X}"}', '[["x${env.X}"]]']
    ),
)
def test_an_environment_variables_value_never_appears_in_a_problem(
    value: str, code: JSONValue, written: str
) -> None:
    if written.startswith(("[", "{")):  # the value is inside: each level fails
        code = {
            "maxItems": 0,
            "maxProperties": 0,
            "anyOf": [code],
            "items": {"anyOf": [code], "items": code},
            "additionalProperties": {"anyOf": [code]},
        }
    problems = _problems(f"{{code: {written}}}", code, {"X": value})
    assert problems
    for problem in problems:
        assert "QQSECRET" not in problem
        assert "${env.X}" in problem
