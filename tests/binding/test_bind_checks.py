"""bind()'s checks of references and of the tools' schemas: what can never run is an
error before the run, located and with a hint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import Binding, ToolCatalog, ToolSpec, as_text, bind, render
from plansmith.errors import BindingError, Location
from plansmith.model import JSONValue


def _problems(plan: h.Plan, text: str, catalog: ToolCatalog = h.CATALOG) -> list[str]:
    with pytest.raises(BindingError) as info:
        h.bound(plan, text, catalog)
    return [str(p) for p in info.value.problems]


TWO_WAY = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${finish(x).value}"}
    outputs: {done: "$.structured.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${work(x).done}"}
    outputs: {value: "$.structured.value"}
"""


def test_steps_whose_references_wait_on_each_other_are_an_error() -> None:
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    problems = _problems(p, TWO_WAY)
    assert len(problems) == 1
    assert problems[0].startswith(
        "bindings.yaml:5:23 step a: steps a, b wait on each other, so none can start:"
        " a waits for b waits for a"
    )
    assert "hint: a reference makes its step wait for the step it names" in problems[0]


def test_a_reference_to_a_step_the_plan_runs_later_is_a_cycle() -> None:
    text = TWO_WAY.replace('{name: "${finish(x).value}"}', '{name: "${finish(x).value}"}').replace(
        '{x: "${work(x).done}"}', "{x: 1}"
    )
    # b comes after a in the plan (it needs a's effects); a names b's output
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",), after=("a",))])
    problems = _problems(p, text)
    assert len(problems) == 1
    assert "steps a, b wait on each other" in problems[0]
    assert problems[0].startswith("bindings.yaml:5:23 step a:")


def test_a_reference_to_a_later_independent_step_only_orders_them() -> None:
    text = TWO_WAY.replace('{x: "${work(x).done}"}', "{x: 1}")
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    bound = h.bound(p, text)
    assert bound.step("a").after == ("b",)  # type: ignore[union-attr]
    assert bound.step("b").after == ()  # type: ignore[union-attr]


def test_a_cycle_through_three_steps_names_the_way_round() -> None:
    text = """\
bindings:
  work: {server: counter, tool: work, arguments: {name: "${alt(x).value}"},
         outputs: {done: "$.structured.done"}}
  finish: {server: counter, tool: echo, arguments: {x: "${work(x).done}"},
           outputs: {value: "$.structured.value"}}
  alt: {server: counter, tool: echo, arguments: {x: "${finish(x).value}"},
        outputs: {value: "$.structured.value"}}
"""
    p = h.plan(
        [h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",)), h.Step("c", "alt", ("i0",))]
    )
    problems = _problems(p, text)
    assert len(problems) == 1
    assert (
        "steps a, b, c wait on each other, so none can start: a waits for c waits for b"
        in (problems[0])
    )


def test_a_step_naming_its_own_output_is_told_so() -> None:
    text = h.BINDINGS.replace('arguments: {name: "${x}"}', 'arguments: {name: "${work(x).done}"}')
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    assert problems == [
        "bindings.yaml:5:23 step a: ${work(x).done}: step a cannot use its own output\n"
        "  hint: a reference names another step of the plan, whose output this step then"
        " waits for"
    ]


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "object", "properties": {"name": {"type": "string", "pattern": "("}}}, "("),
        ({"type": "object", "properties": {"name": {"$ref": "#/nope"}}}, "nope"),
        ({"type": 5}, "5"),
        ({"type": "object", "required": "name"}, "name"),
    ],
    ids=["bad-pattern", "unresolvable-ref", "type-not-a-name", "required-not-a-list"],
)
def test_a_tool_listing_an_invalid_input_schema_is_a_located_problem(
    schema: dict[str, JSONValue], says: str
) -> None:
    catalog = ToolCatalog((("counter", (ToolSpec("work", schema), *h.CATALOG.servers[0][1][1:])),))
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), h.BINDINGS, catalog)
    assert len(problems) == 1
    assert problems[0].startswith(
        "bindings.yaml:4:11 step a: tool 'work' of server 'counter' lists an invalid inputSchema:"
    )
    assert says in problems[0].splitlines()[0]
    assert "hint: the server's tool description is at fault, not the binding" in problems[0]


def test_an_unset_environment_variable_names_it_and_says_how_to_set_it() -> None:
    text = h.BINDINGS.replace('{name: "${x}"}', '{name: "${x}", cost: "${env.PS_UNSET_VAR}"}')
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    assert problems == [
        "bindings.yaml:5:37 step a: ${env.PS_UNSET_VAR}: environment variable PS_UNSET_VAR"
        " is not set\n  hint: export PS_UNSET_VAR=... before running plansmith"
    ]


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("${env:HOME}", "an environment variable is written ${env.HOME} in bindings"),
        ("${run.nope}", "the run's fields are ${run.id} and ${run.dir}"),
        ("${ ${x} }", "references do not nest"),
        ("${1x}", "a reference is one of ${param}, ${action(args).output}, ${env.NAME}"),
    ],
)
def test_text_that_is_not_a_reference_gets_a_hint_for_what_it_was_meant_to_be(
    written: str, hint: str
) -> None:
    text = h.BINDINGS.replace('{name: "${x}"}', '{name: "' + written + '"}')
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    assert len(problems) == 1
    assert "not a reference: ${" in problems[0]
    assert f"hint: {hint}" in problems[0]


def test_an_action_with_no_binding_is_listed_once_with_every_step_it_stops() -> None:
    text = "bindings:\n  work: {server: counter, tool: work, arguments: {name: x}}\n"
    p = h.plan([h.Step(f"f{k}", "finish", (f"i{k}",)) for k in range(3)])
    problems = _problems(p, text)
    assert problems == [
        "bindings.yaml: action 'finish' has no binding (in 3 steps: f0, f1, f2)\n"
        "  hint: add `finish:` with a server and a tool under `bindings:`"
    ]


def test_an_arguments_place_is_its_own_else_its_nearest_enclosing_values() -> None:
    here, inner, whole = Location("b.yaml", 7, 9), Location("b.yaml", 6, 5), Location("b.yaml", 5)
    binding = Binding(
        "work",
        "counter",
        "work",
        {"a": {"b": [1, 2]}, "c/d": 3},
        loc=Location("b.yaml", 2),
        locations=(
            ("arguments", whole),
            ("arguments/a", inner),
            ("arguments/a/b/1", here),
        ),
    )
    assert binding.where_argument("/a/b/1") == here
    assert binding.where_argument("/a/b/0") == inner
    assert binding.where_argument("/c~1d") == whole
    assert binding.where_argument("") == whole
    assert Binding("w", "s", "t", loc=Location("b.yaml", 2)).where_argument("/x") == Location(
        "b.yaml", 2
    )


def test_a_binding_of_an_action_the_domain_does_not_have_is_a_problem() -> None:
    text = h.BINDINGS + "  wrok: {server: counter, tool: work}\n"
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    assert problems == [
        "bindings.yaml:19:3: binding 'wrok': the domain 'toy' has no such action\n"
        "  hint: did you mean 'work'? its actions are: work, finish, alt"
    ]


def test_an_unknown_servers_hint_names_the_configured_servers_and_the_likely_one() -> None:
    text = h.BINDINGS.replace(
        "    server: counter\n    tool: work", "    server: countr\n    tool: work"
    )
    p = h.plan([h.Step("a", "work", ("i0",))])
    with pytest.raises(BindingError) as info:
        bind(p, h.domain(), h.bindings(text), h.CATALOG, configured=("counter", "files"))
    assert [str(e) for e in info.value.problems] == [
        "bindings.yaml:3:13 step a: unknown server 'countr' for action 'work'\n"
        "  hint: did you mean 'counter'? the servers file names: counter, files"
    ]


def test_a_value_rendered_inside_a_string_keeps_its_characters() -> None:
    value: JSONValue = {"名前": "naïve ✓ 🚀"}
    assert render("→ ${x} ←", lambda ref: value) == '→ {"名前":"naïve ✓ 🚀"} ←'
    assert as_text(["é"]) == '["é"]'


def test_the_tools_of_a_server_that_did_not_start_are_not_checked_but_the_rest_is() -> None:
    text = h.BINDINGS.replace("tool: work", "tool: nope").replace('"${x}"', '"${y}"')
    p = h.plan([h.Step("a", "work", ("i0",))])
    with pytest.raises(BindingError) as info:
        bind(p, h.domain(), h.bindings(text), ToolCatalog(), unavailable=("counter",))
    assert [str(e).splitlines()[0] for e in info.value.problems] == [
        "bindings.yaml:5:23 step a: ${y}: 'work' has no parameter 'y'"
    ]


def test_a_problem_inside_the_arguments_is_located_at_the_value_that_holds_it() -> None:
    text = """\
bindings:
  work:
    server: counter
    tool: work
    arguments:
      name: "${x}"
      cost: "many"
      extra:
        - 1
        - "${nope}"
"""
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    firsts = sorted(p.splitlines()[0] for p in problems)
    assert firsts == [
        "bindings.yaml:10:11 step a: ${nope}: 'work' has no parameter 'nope'",
        "bindings.yaml:7:13 step a: argument cost of 'work' fails its inputSchema:"
        " 'many' is not of type 'integer'",
    ]
    fixed = text.replace('"${nope}"', "2")
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), fixed)
    assert [p.splitlines()[0] for p in problems] == [
        "bindings.yaml:7:13 step a: argument cost of 'work' fails its inputSchema:"
        " 'many' is not of type 'integer'"
    ]


def test_an_unset_variable_hides_no_schema_problem_of_the_other_arguments() -> None:
    text = h.BINDINGS.replace('{name: "${x}"}', '{name: 5, cost: "${env.PS_UNSET_VAR}"}')
    problems = _problems(h.plan([h.Step("a", "work", ("i0",))]), text)
    firsts = [p.splitlines()[0] for p in problems]
    assert len(firsts) == 2
    assert any("environment variable PS_UNSET_VAR is not set" in f for f in firsts)
    assert any(
        "argument name of 'work' fails its inputSchema: 5 is not of type 'string'" in f
        for f in firsts
    )
