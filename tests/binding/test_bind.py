"""bind(): every problem at once, with locations; data references add DAG edges."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import PLACEHOLDER, parse_bindings, render, step_key
from plansmith.binding._refs import OutputRef, ParamRef, parse_ref
from plansmith.errors import BindingError, ParseError


def test_data_reference_adds_an_edge_from_the_producer() -> None:
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    b = h.bound(p)
    assert b.step("b").after == ("a",)  # type: ignore[union-attr]
    assert dict(b.step("b").producers) == {"work(x).done": "a"}  # type: ignore[union-attr]


def test_all_problems_are_reported_at_once_with_locations() -> None:
    text = """\
bindings:
  work:
    server: counter
    tool: nope
    arguments: {name: "${x}"}
  finish:
    server: elsewhere
    tool: echo
  alt:
    server: counter
    tool: echo
    arguments: {x: "${work(x).missing}", y: "${nothere(x).out}", z: "${q}"}
"""
    p = h.plan(
        [h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",)), h.Step("c", "alt", ("i0",))]
    )
    with pytest.raises(BindingError) as info:
        h.bound(p, text)
    problems = [str(e) for e in info.value.problems]
    assert any("no tool 'nope'" in m and "bindings.yaml:4" in m for m in problems)
    assert any("unknown server 'elsewhere'" in m and "bindings.yaml:7" in m for m in problems)
    assert any("no step nothere(i0)" in m and "bindings.yaml:12" in m for m in problems)
    assert any("no parameter 'q'" in m for m in problems)
    # reported though the step has other problems: each is a thing to fix
    assert any("'work' has no output 'missing'" in m for m in problems)
    assert len(problems) == 5


def test_a_fault_every_step_of_an_action_meets_is_listed_once_with_its_steps() -> None:
    text = (
        "bindings:\n"
        '  work: {server: counter, tool: nope, arguments: {name: "${x}"},'
        ' outputs: {done: "$.[", ok: "$.ok"}}\n'
        '  finish: {server: counter, tool: echo, arguments: {x: "${work(x).gone}"}}\n'
    )
    p = h.plan(
        [h.Step(f"w{k}", "work", (f"i{k}",)) for k in range(8)]
        + [h.Step(f"f{k}", "finish", (f"i{k}",)) for k in range(2)]
    )
    with pytest.raises(BindingError) as info:
        h.bound(p, text)
    problems = [str(e) for e in info.value.problems]
    assert info.value.message == f"{len(problems)} binding problem(s)"
    tool = [m for m in problems if "no tool 'nope'" in m]
    assert tool == [
        "bindings.yaml:2:33: server 'counter' has no tool 'nope'"
        " (in 8 steps: w0, w1, w2, w3, w4 and 3 more)\n"
        "  hint: its tools are: " + tool[0].split("its tools are: ")[1]
    ]
    gone = [m for m in problems if "no output 'gone'" in m]
    assert len(gone) == 1
    assert "(in 2 steps: f0, f1)" in gone[0]
    # the JSONPath of an action none of whose steps could be bound is checked too
    assert sum("bad JSONPath" in m for m in problems) == 1
    assert len(problems) == 3


def test_missing_output_name_is_reported() -> None:
    text = h.BINDINGS.replace("${work(x).done}", "${work(x).absent}")
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    with pytest.raises(BindingError) as info:
        h.bound(p, text)
    assert "has no output 'absent'" in str(info.value)


def test_action_without_binding_is_reported_once_per_action() -> None:
    text = "bindings:\n  work: {server: counter, tool: work, arguments: {name: x}}\n"
    p = h.plan([h.Step("a", "finish", ("i0",)), h.Step("b", "finish", ("i1",))])
    with pytest.raises(BindingError) as info:
        h.bound(p, text)
    assert [str(e).count("has no binding") for e in info.value.problems] == [1]


def test_argument_failing_the_input_schema_is_reported_with_that_part_of_the_schema() -> None:
    text = h.BINDINGS.replace('arguments: {name: "${x}"}', "arguments: {name: 3}")
    with pytest.raises(BindingError, match="fails its inputSchema") as info:
        h.bound(h.chain(1), text)
    (problem,) = info.value.problems
    assert problem.hint == 'work\'s inputSchema at name: {"type":"string"}'


def test_runtime_values_are_not_checked_against_the_schema() -> None:
    text = h.BINDINGS.replace(
        'arguments: {name: "${x}"}', 'arguments: {name: "${x}", cost: "${env.C}"}'
    )
    with pytest.raises(BindingError, match="environment variable C is not set"):
        h.bound(h.chain(1), text)
    assert PLACEHOLDER not in str(h.bound(h.chain(1)))


def test_whole_string_reference_keeps_its_json_type() -> None:
    def value(ref: object) -> object:
        return [1, 2] if isinstance(ref, ParamRef) else "?"

    assert render({"a": "${p}", "b": "n=${p}"}, value) == {"a": [1, 2], "b": "n=[1,2]"}  # type: ignore[arg-type]


NUMERIC_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "tube ${x}", cost: "${x}"}
    outputs: {done: "$.structured.done"}
  alt:
    server: counter
    tool: echo
    arguments: {x: "${work(7).done}"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${work(x).done}"}
"""


def test_numeric_argument_keeps_its_type_alone_and_becomes_text_in_a_string() -> None:
    # the tool's inputSchema wants an integer ``cost`` and a string ``name``
    b = h.bound(h.plan([h.Step("a", "work", (3,))]), NUMERIC_BINDINGS)
    step = b.step("a")
    assert step is not None
    assert step.params == (("x", 3),)
    assert type(dict(step.params)["x"]) is int
    value = render(step.arguments, lambda ref: dict(step.params)["x"])
    assert value == {"name": "tube 3", "cost": 3}
    with pytest.raises(BindingError, match="fails its inputSchema"):
        h.bound(h.plan([h.Step("a", "work", ("3",))]), NUMERIC_BINDINGS)


def test_output_references_find_producers_with_numeric_arguments() -> None:
    p = h.plan(
        [
            h.Step("a", "work", (7,)),
            h.Step("b", "alt", ("i0",)),
            h.Step("c", "work", (4,)),
            h.Step("d", "finish", (4,)),
        ]
    )
    b = h.bound(p, NUMERIC_BINDINGS)
    assert dict(b.step("b").producers) == {"work(7).done": "a"}  # type: ignore[union-attr]
    assert b.step("d").after == ("c",)  # type: ignore[union-attr]


def test_step_key_writes_arguments_as_references_do() -> None:
    step = h.Step("s1", "move", ("a", 3, 2.5, True, None))
    assert step_key(step) == ("move", ("a", "3", "2.5", "true", "null"))


def test_reference_grammar() -> None:
    assert parse_ref("act(x, y).out") == OutputRef("act", ("x", "y"), "out")
    assert parse_ref("p") == ParamRef("p")
    assert parse_ref("not a ref!") is None


def test_bad_yaml_is_a_located_parse_error() -> None:
    with pytest.raises(ParseError) as info:
        parse_bindings("bindings:\n  a: [\n", source="b.yaml")
    assert info.value.location is not None
    assert info.value.location.file == "b.yaml"


def test_bad_policy_values_are_all_reported() -> None:
    text = "bindings:\n  a: {server: s, tool: t, timeout: -1, retries: x, tier: god}\n"
    with pytest.raises(BindingError) as info:
        parse_bindings(text, source="b.yaml")
    assert len(info.value.problems) == 3
