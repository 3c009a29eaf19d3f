"""GTPyhop's ``${context.NAME}`` placeholders in a plan step's arguments (issue 31): the
output ``NAME`` of the last earlier step whose binding declares it, found and checked by
``bind`` (which adds the data edge) and read by the runner; the plan is unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from _shared_servers import COUNTER
from plansmith.binding import (
    ContextProducerMissingError,
    ContextRef,
    ContextReferenceError,
    ContextSyntaxError,
    ContextValueError,
    bind,
    context_placeholders,
    parse_context,
    resolve_context,
    type_mismatch,
)
from plansmith.errors import BindingError, ToolCallError
from plansmith.execution import FakeInvoker, MemoryRunLog, Runner, StepFailed

# ``work(x)`` gives a list (``genes``) and its first item; ``finish(x)`` and ``alt(x)``
# send their argument on: a placeholder in it reads an earlier step's output
BINDINGS = """\
bindings:
  work:
    server: counter
    tool: echo
    arguments: {x: ["${x}", "second"]}
    outputs: {genes: "$.structured.value", first: "$.structured.value[0]"}
  alt:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {done: "$.structured.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${x}"}
    outputs: {value: "$.structured.value"}
"""
#: where finish's ``${x}`` is written
AT = "bindings.yaml:15:20"


def _bound(plan: h.Plan, text: str = BINDINGS, catalog: h.ToolCatalog = h.CATALOG) -> h.BoundPlan:
    return h.bound(plan, text, catalog)


def _problems(plan: h.Plan, text: str = BINDINGS) -> list[BindingError]:
    with pytest.raises(BindingError) as info:
        _bound(plan, text)
    return [p for p in info.value.problems if isinstance(p, BindingError)]


def _outputs(**by_step: object) -> object:
    return by_step.get


# ------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("inner", "ref"),
    [
        ("context.disease_id", ContextRef("disease_id")),
        ("context.target_genes[0]", ContextRef("target_genes", (0,))),
        (" context . target_genes [ 1 ] ", ContextRef("target_genes", (1,))),
        ("context.m[0][-1]", ContextRef("m", (0, -1))),
        ("context.first-gene", ContextRef("first-gene")),
        ("context.var", ContextRef("var")),
        ("context.", None),
        ("context.x[]", None),
        ("context.x[a]", None),
        ("context.x.y", None),
        ("context.1x", None),
        ("context.x[1234567890]", None),  # at most 9 digits: no huge integer to parse
        ("disease_id", None),
    ],
)
def test_the_forms_gtpyhop_writes_parse(inner: str, ref: ContextRef | None) -> None:
    assert parse_context(inner) == ref


def test_a_placeholder_is_shown_as_written_without_spaces() -> None:
    assert str(ContextRef("target_genes", (0, -1))) == "${context.target_genes[0][-1]}"


def test_placeholders_are_found_in_text_and_other_dollar_braces_are_left_alone() -> None:
    text = "${context.a} and ${context.b[2]}, ${HOME}, $${context.c}, ${context}"
    assert context_placeholders(text) == (ContextRef("a"), ContextRef("b", (2,)))
    with pytest.raises(ContextSyntaxError) as info:
        context_placeholders("gene ${context.genes[first]}")
    assert str(info.value).startswith("not a context placeholder: ${context.genes[first]}")
    assert "${context.NAME} or ${context.NAME[INDEX]}" in str(info.value)


_FRAGMENTS = st.sampled_from(
    [
        *("${", "$${", "}", "context", "context.", ".", "[", "]", "-", "0", "-1", "99999999999"),
        *("x", " ", "_a", "genes", "${context.x}", "${context.x[0]}", "\x00", "é", "\\"),
    ]
)


@given(st.one_of(st.text(), st.lists(_FRAGMENTS, max_size=12).map("".join)))
def test_the_parser_raises_nothing_but_its_typed_error(text: str) -> None:
    syntax: ContextSyntaxError | None = None
    found: tuple[ContextRef, ...] = ()
    try:
        found = context_placeholders(text)
    except ContextSyntaxError as error:
        syntax = error
    if syntax is not None:
        assert isinstance(syntax, ContextReferenceError)
        assert syntax.placeholder is not None
        assert syntax.placeholder in text
        return
    assert all(isinstance(ref, ContextRef) for ref in found)
    # what parses resolves: each placeholder to its name's output, or a typed error
    wrong: ContextValueError | None = None
    try:
        resolve_context(text, "s9", [(f"context.{r.name}", "s1") for r in found], _outputs())
    except ContextValueError as error:
        wrong = error
    assert (wrong is None) == (not found)
    if wrong is not None:
        assert (wrong.error_class, wrong.step) == ("extraction_error", "s9")


# ------------------------------------------------------------------------------ bind time


def test_a_placeholder_binds_to_the_last_earlier_step_that_declares_the_output() -> None:
    p = h.plan(
        [
            h.Step("a", "work", ("i0",)),
            h.Step("b", "work", ("i1",)),
            h.Step("c", "alt", ("i0",)),  # declares no output genes
            h.Step("d", "finish", ("${context.genes}",)),
            h.Step("e", "work", ("i2",)),  # after the reader: not its producer
        ]
    )
    b = _bound(p)
    d = b.step("d")
    assert d is not None
    assert dict(d.producers) == {"context.genes": "b"}
    assert d.after == ("b",)  # the data edge, as an output reference adds it
    # the plan, and what is approved, are unchanged: resolved when run, not planned
    assert d.step.args == ("${context.genes}",)
    assert b.plan_hash == p.hash


def test_the_edge_is_added_once_beside_the_plans_order() -> None:
    p = h.plan(
        [
            h.Step("a", "work", ("i0",)),
            h.Step("b", "finish", ("${context.genes[0]} ${context.first}",), after=("a",)),
        ]
    )
    b = _bound(p).step("b")
    assert b is not None
    assert dict(b.producers) == {"context.genes": "a", "context.first": "a"}
    assert b.after == ("a",)


def test_a_step_earlier_in_the_run_is_the_producer_when_the_plan_has_none_before() -> None:
    # a replan's plan: work(i0) succeeded as s0 earlier in the run
    p = h.plan([h.Step("r1.s1", "finish", ("${context.genes}",))])
    b = bind(
        p, h.domain(), h.bindings(BINDINGS), h.CATALOG, env={}, available={("work", ("i0",)): "s0"}
    )
    s = b.step("r1.s1")
    assert s is not None
    assert dict(s.producers) == {"context.genes": "s0"}
    assert s.after == ()  # a step of an earlier plan: done already, no edge in this one


def test_no_earlier_step_declaring_the_output_is_an_error_with_place_and_hint() -> None:
    p = h.plan([h.Step("s1", "finish", ("${context.genes}",)), h.Step("s2", "work", ("i0",))])
    (error,) = _problems(p)
    assert isinstance(error, ContextProducerMissingError)
    assert isinstance(error, ContextReferenceError)
    assert str(error) == (
        f"{AT} step s1: ${{x}}: the argument x = '${{context.genes}}' of step s1"
        " finish(${context.genes}) reads the output 'genes' of an earlier step, but no step"
        " before step s1 has a binding that declares it\n"
        "  hint: the bindings that declare an output 'genes': 'work' (at bindings.yaml:2:3);"
        " a step of one of them must come before step s1 in the plan (or have run earlier"
        " in the run)"
    )
    assert error.location is not None
    assert (error.location.file, error.location.line, error.location.step) == (
        "bindings.yaml",
        15,
        "s1",
    )
    assert (error.consumer, error.consumer_action) == ("s1", "finish(${context.genes})")
    assert (error.parameter, error.placeholder, error.output) == (
        "x",
        "${context.genes}",
        "genes",
    )


def test_an_output_no_binding_declares_gets_a_hint_saying_so() -> None:
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("${context.disease_id}",))])
    (error,) = _problems(p)
    assert isinstance(error, ContextProducerMissingError)
    assert error.hint == (
        "no binding declares an output 'disease_id': add `disease_id: <JSONPath>` to the"
        " `outputs` of the binding of the action whose result holds it"
    )


def test_a_malformed_placeholder_is_an_error_at_the_parameter_that_sends_it() -> None:
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("${context.genes[one]}",))])
    (error,) = _problems(p)
    assert isinstance(error, ContextSyntaxError)
    assert str(error).startswith(
        f"{AT} step b: ${{x}}: the argument x = '${{context.genes[one]}}' of step b"
        " finish(${context.genes[one]}) holds ${context.genes[one]}, which is not a context"
        " placeholder\n  hint: GTPyhop's placeholders are written ${context.NAME} or"
        " ${context.NAME[INDEX]}"
    )


def test_a_parameter_the_binding_does_not_send_is_not_resolved() -> None:
    text = BINDINGS.replace('arguments: {x: "${x}"}', "arguments: {x: fixed}")
    p = h.plan([h.Step("b", "finish", ("${context.nowhere}",))])
    b = h.bound(p, text).step("b")
    assert b is not None
    assert (b.producers, b.after) == ((), ())


def test_every_reader_without_a_producer_is_listed_at_its_step() -> None:
    p = h.plan([h.Step(f"c{k}", "finish", ("${context.genes}",)) for k in range(2)])
    problems = [str(e) for e in _problems(p)]
    assert [m.split(": ", 1)[0] for m in problems] == [f"{AT} step c0", f"{AT} step c1"]


def test_a_placeholder_whose_tool_takes_an_integer_binds_and_is_checked_when_run() -> None:
    # work's inputSchema declares cost an integer: the placeholder's text is not checked
    # against it (its value is known only at run time), its value is
    text = BINDINGS.replace('arguments: {name: "${x}"}', 'arguments: {name: n, cost: "${x}"}')
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "alt", ("${context.genes}",))])
    b = h.bound(p, text).step("b")
    assert b is not None
    assert [(c.keys, c.types, c.reference) for c in b.type_checks] == [
        (("cost",), ("integer",), "${x} = ${context.genes}")
    ]
    assert type_mismatch(b.type_checks, {"name": "n", "cost": ["i0"]}) == (
        'argument cost: ${x} = ${context.genes} gave an array (["i0"]) where the tool\'s'
        " inputSchema takes an integer"
    )
    # a placeholder inside text is a string: that is known, and wrong for an integer
    text_arg = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "alt", ("n${context.first}",))])
    (error,) = _problems(text_arg, text)
    assert "argument cost of 'work' fails its inputSchema" in str(error)


def test_a_context_placeholder_written_in_bindings_gets_a_hint() -> None:
    text = BINDINGS.replace('arguments: {x: "${x}"}', 'arguments: {x: "${context.genes}"}')
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    (error,) = _problems(p, text)
    assert str(error).startswith(f"{AT} step b: not a reference: ${{context.genes}}")
    assert "belongs in a plan step's argument" in str(error)


# ------------------------------------------------------------------------------- run time

OUTPUTS = {"genes": ["BRCA1", "TP53"], "first": "BRCA1", "n": 3, "m": [[1, 2], []]}


@pytest.mark.parametrize(
    ("arg", "value"),
    [
        ("${context.genes}", ["BRCA1", "TP53"]),  # alone: the output's JSON value
        ("${context.n}", 3),
        ("${context.genes[0]}", "BRCA1"),
        ("${context.genes[-1]}", "TP53"),
        ("${context.m[0][1]}", 2),
        ("gene ${context.genes[1]}", "gene TP53"),  # in text: as text
        ("${context.genes} (${context.n})", '["BRCA1","TP53"] (3)'),
        ("no placeholder ${HOME} $${context.n}", "no placeholder ${HOME} $${context.n}"),
    ],
)
def test_a_placeholder_resolves_to_the_producers_output(arg: str, value: object) -> None:
    producers = [("context.genes", "s1"), ("context.n", "s1"), ("context.m", "s1")]
    assert resolve_context(arg, "s2", producers, _outputs(s1=OUTPUTS)) == value


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "${context.genes[2]}",
            "step s2: ${context.genes[2]}: index 2 is out of range: ${context.genes}"
            " (output 'genes' of step s1) is a list of 2 item(s)",
        ),
        (
            "${context.m[1][0]}",
            "step s2: ${context.m[1][0]}: index 0 is out of range: ${context.m[1]}"
            " (output 'm' of step s1) is a list of 0 item(s)",
        ),
        (
            "${context.first[0]}",
            "step s2: ${context.first[0]}: ${context.first} (output 'first' of step s1)"
            " is a string, not a list: it has no [0]",
        ),
        ("${context.other}", "step s2: ${context.other}: no output 'other' from step s1"),
    ],
)
def test_an_output_that_cannot_be_read_as_written_is_a_typed_extraction_error(
    arg: str, message: str
) -> None:
    producers = [(f"context.{n}", "s1") for n in ("genes", "m", "first", "other")]
    with pytest.raises(ContextValueError) as info:
        resolve_context(arg, "s2", producers, _outputs(s1=OUTPUTS))
    error = info.value
    assert isinstance(error, ToolCallError)
    assert error.error_class == "extraction_error"
    assert error.message == message
    assert (error.step, error.producer) == ("s2", "s1")
    assert error.location is not None
    assert error.location.step == "s2"


# ------------------------------------------------------------------------------ the runner


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _plan(*readers: str) -> h.Plan:
    return h.plan(
        [h.Step("s0", "work", ("i0",))]
        + [h.Step(f"s{k + 1}", "finish", (arg,)) for k, arg in enumerate(readers)]
    )


@pytest.mark.anyio
async def test_the_runner_sends_the_value_a_placeholder_reads() -> None:
    b = _bound(_plan("${context.genes}", "${context.genes[1]}", "after ${context.first}"))
    log, state = h.start_run(b)
    fake = FakeInvoker(h.work_ok)
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    sent = {c.step: c.arguments for c in fake.calls}
    assert sent["s1"] == {"x": ["i0", "second"]}
    assert sent["s2"] == {"x": "second"}
    assert sent["s3"] == {"x": "after i0"}


@pytest.mark.anyio
async def test_an_index_out_of_range_fails_the_step_with_an_extraction_error() -> None:
    b = _bound(_plan("${context.genes[5]}"))
    log, state = h.start_run(b)
    fake = FakeInvoker(h.work_ok)
    with anyio.fail_after(10):
        outcome = await Runner(fake, log, state).run()
    assert outcome.state == "failed"
    assert [c.step for c in fake.calls] == ["s0"]  # the reader's tool is not called
    (failed,) = (e for e in log.events("run-1") if isinstance(e, StepFailed))
    assert (failed.step, failed.error_class) == ("s1", "extraction_error")
    assert failed.message.startswith("step s1: ${context.genes[5]}: index 5 is out of range")


@pytest.mark.anyio
async def test_placeholders_over_a_real_stdio_server() -> None:
    from plansmith.servers import McpInvoker, ServerPool, ServersConfig, StdioServer

    config = ServersConfig((StdioServer("counter", sys.executable, (str(COUNTER),), ()),))
    async with ServerPool(config) as pool:
        with anyio.fail_after(60):
            await pool.start()
        b = _bound(_plan("${context.genes}", "${context.genes[-1]}"), BINDINGS, pool.catalog())
        log, state = h.start_run(b, MemoryRunLog())
        with anyio.fail_after(30):
            outcome = await Runner(McpInvoker(pool), log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    assert outcome.outputs["s1"] == {"value": ["i0", "second"]}
    assert outcome.outputs["s2"] == {"value": "second"}
