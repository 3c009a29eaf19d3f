"""What names a value cannot be a template: an output's name (``$`` marks a stored
value's reference) and a key of the arguments (a name the tool's schema declares).
Each is refused where it is written, with a hint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import Binding, Bindings, bind, parse_bindings
from plansmith.errors import BindingError, Location, PlansmithError


def _problems(text: str) -> list[PlansmithError]:
    with pytest.raises(BindingError) as info:
        parse_bindings(text, source="b.yaml")
    return list(info.value.problems)


@pytest.mark.parametrize("name", ["$blob", "$", "$value"])
def test_an_output_name_beginning_with_a_dollar_is_refused_where_it_is_written(
    name: str,
) -> None:
    text = (
        "bindings:\n"
        "  work:\n"
        "    server: counter\n"
        "    tool: work\n"
        f'    outputs: {{"{name}": "$.structured.s", ok: "$.structured.ok"}}\n'
    )
    (problem,) = _problems(text)
    assert str(problem).splitlines()[0] == f"b.yaml:5:15: output name {name!r} begins with '$'"
    assert problem.hint is not None
    assert "name the output without it" in problem.hint


def test_an_output_name_with_a_dollar_inside_is_a_name() -> None:
    text = 'bindings:\n  a: {server: s, tool: t, outputs: {"cost$": "$.structured.c"}}\n'
    (binding,) = parse_bindings(text).bindings
    assert binding.output_names() == ("cost$",)


REPRO_9 = """\
bindings:
  finish:
    server: counter
    tool: echo
    arguments:
      "${x}": from-template-key
      i0: literal-key
      "${work(x).done}": from-output-key
      nested: [{"n-${x}": 1}]
      x: "$${x}"
"""


def test_a_reference_in_an_argument_key_is_refused_at_its_key() -> None:
    problems = _problems(REPRO_9)
    assert [str(p).splitlines()[0] for p in problems] == [
        "b.yaml:6:7: the argument key '${x}' holds a reference",
        "b.yaml:8:7: the argument key '${work(x).done}' holds a reference",
        "b.yaml:9:17: the argument key 'n-${x}' holds a reference",
    ]
    assert all(p.hint and "put what varies in a value" in p.hint for p in problems)


def test_a_key_may_hold_the_escape_of_a_literal_reference() -> None:
    text = 'bindings:\n  a: {server: s, tool: t, arguments: {"$${x}": 1, "a$b": 2}}\n'
    (binding,) = parse_bindings(text).bindings
    assert binding.arguments == {"$${x}": 1, "a$b": 2}


def test_bind_refuses_a_reference_in_a_key_of_arguments_made_in_python() -> None:
    binding = Binding(
        "finish",
        "counter",
        "echo",
        {"x": 1, "${x}": 2},
        loc=Location("api", 3),
        locations=(("arguments/x", Location("api", 4)),),
    )
    plan = h.plan([h.Step("a", "finish", ("i0",))])
    with pytest.raises(BindingError) as info:
        bind(plan, h.domain(), Bindings((binding,), "api"), h.CATALOG)
    assert [str(p).splitlines()[0] for p in info.value.problems] == [
        "api:3 step a: the argument key '${x}' holds a reference"
    ]


def test_a_lone_surrogate_in_an_argument_is_refused_where_it_is_written() -> None:
    text = 'bindings:\n  a:\n    server: s\n    tool: t\n    arguments: {v: "x\\ud800y"}\n'
    with pytest.raises(BindingError) as raised:
        parse_bindings(text, source="b.yaml")
    assert "b.yaml:5:20: 'x\\ud800y' holds a lone surrogate" in str(raised.value)
