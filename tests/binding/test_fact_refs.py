"""``${fact(pred(x)).out}``: a reference that names the data (a fact the plan makes
true), not the action that produces it; ``bind`` resolves it to the last step before the
reader whose action's effect adds the fact, and checks that step's binding declares the
output (issue 29, item 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import (
    FactOutputMissingError,
    FactProducerMissingError,
    FactRef,
    FactReferenceError,
    OutputRef,
    bind,
    parse_ref,
    ref_text,
    render,
    type_checks,
)
from plansmith.errors import BindingError

# the toy domain: work(x) and alt(x) both make done(x) true; finish(x) needs done(x)
FACT_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {done: "$.structured.done"}
  alt:
    server: counter
    tool: work
    arguments: {name: "alt-${x}"}
    outputs: {done: "$.structured.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${fact(done(x)).done}"}
    outputs: {value: "$.structured.value"}
"""
#: where finish's reference is written: line 15, column 20
AT = "bindings.yaml:15:20"
#: alt's binding without the output finish reads
ALT_WITHOUT_DONE = FACT_BINDINGS.replace(
    '    arguments: {name: "alt-${x}"}\n    outputs: {done: "$.structured.done"}\n',
    '    arguments: {name: "alt-${x}"}\n    outputs: {key: "$.structured.key"}\n',
)


def _problems(plan: h.Plan, text: str) -> list[BindingError]:
    with pytest.raises(BindingError) as info:
        h.bound(plan, text)
    return [p for p in info.value.problems if isinstance(p, BindingError)]


@pytest.mark.parametrize(
    ("inner", "ref"),
    [
        ("fact(note_read(n)).content", FactRef("note_read", ("n",), "content")),
        (" fact ( at ( r , l ) ) . pos ", FactRef("at", ("r", "l"), "pos")),
        ("fact(ready()).x", FactRef("ready", (), "x")),
        # an action named ``fact`` is still an output reference: a fact has parentheses
        ("fact(x).out", OutputRef("fact", ("x",), "out")),
        ("read_note(n).content", OutputRef("read_note", ("n",), "content")),
        ("fact(a(b(c))).x", None),
        ("fact(a(b)).", None),
        ("fact(a(b))", None),
    ],
)
def test_the_parser_reads_a_fact_reference_and_leaves_the_other_forms_as_they_were(
    inner: str, ref: object
) -> None:
    assert parse_ref(inner) == ref


def test_a_fact_reference_has_one_text_however_it_is_spaced() -> None:
    fact = parse_ref(" fact ( at ( r , l ) ) . pos ")
    assert isinstance(fact, FactRef)
    assert ref_text(fact) == "fact(at(r,l)).pos"
    assert fact.fact() == "at(r, l)"
    assert fact.fact(("r1", "l2")) == "at(r1, l2)"
    assert ref_text(OutputRef("read_note", ("n", "m"), "text")) == "read_note(n,m).text"


def test_render_gives_a_fact_reference_the_value_its_resolver_finds() -> None:
    seen: list[object] = []

    def resolve(ref: object) -> str:
        seen.append(ref)
        return "v"

    assert render({"a": "${fact(done(x)).done}", "b": "<${fact(done(x)).done}>"}, resolve) == {
        "a": "v",
        "b": "<v>",
    }
    assert seen == [FactRef("done", ("x",), "done")] * 2


def test_a_whole_fact_reference_gets_its_type_checked_at_run_time() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    checks = type_checks({"n": "${fact(done(x)).n}"}, schema)
    assert [(c.keys, c.types) for c in checks] == [(("n",), ("integer",))]


def test_a_fact_reference_binds_to_the_latest_step_that_makes_the_fact_true() -> None:
    p = h.plan(
        [
            h.Step("a", "work", ("i0",)),
            h.Step("b", "alt", ("i0",)),
            h.Step("c", "finish", ("i0",)),
            h.Step("d", "work", ("i0",)),  # after the reader: not its producer
        ]
    )
    c = h.bound(p, FACT_BINDINGS).step("c")
    assert c is not None
    assert dict(c.producers) == {"fact(done(x)).done": "b"}
    assert c.after == ("b",)  # the data edge, as an output reference adds it


def test_a_fact_reference_keeps_the_plans_order_and_adds_its_edge_once() -> None:
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("c", "finish", ("i0",), after=("a",))])
    c = h.bound(p, FACT_BINDINGS).step("c")
    assert c is not None
    assert c.after == ("a",)


def test_the_fact_is_ground_with_the_readers_arguments() -> None:
    p = h.plan(
        [
            h.Step("a0", "work", ("i0",)),
            h.Step("a1", "alt", ("i1",)),
            h.Step("c1", "finish", ("i1",)),
            h.Step("c0", "finish", ("i0",)),
        ]
    )
    b = h.bound(p, FACT_BINDINGS)
    assert dict(b.step("c0").producers) == {"fact(done(x)).done": "a0"}  # type: ignore[union-attr]
    assert dict(b.step("c1").producers) == {"fact(done(x)).done": "a1"}  # type: ignore[union-attr]
    # an object's name as written works too
    named = FACT_BINDINGS.replace("${fact(done(x)).done}", "${fact(done(i1)).done}")
    assert dict(h.bound(p, named).step("c0").producers) == {  # type: ignore[union-attr]
        "fact(done(i1)).done": "a1"
    }


def test_two_alternative_producers_that_declare_the_output_both_bind() -> None:
    for producer in ("work", "alt"):
        p = h.plan([h.Step("p", producer, ("i0",)), h.Step("c", "finish", ("i0",))])
        c = h.bound(p, FACT_BINDINGS).step("c")
        assert c is not None
        assert dict(c.producers) == {"fact(done(x)).done": "p"}
        assert c.after == ("p",)


def test_a_step_of_the_run_that_already_made_the_fact_true_is_its_producer() -> None:
    # a replan's plan: work(i0) succeeded as s0 earlier in the run
    p = h.plan([h.Step("r1.s0", "finish", ("i0",))])
    b = bind(
        p,
        h.domain(),
        h.bindings(FACT_BINDINGS),
        h.CATALOG,
        env={},
        available={("work", ("i0",)): "s0"},
    )
    c = b.step("r1.s0")
    assert c is not None
    assert dict(c.producers) == {"fact(done(x)).done": "s0"}
    assert c.after == ()  # a step of an earlier plan: done already, no edge in this one


def test_a_producer_whose_binding_lacks_the_output_fails_naming_both_steps() -> None:
    p = h.plan([h.Step("s1", "alt", ("i0",)), h.Step("s2", "finish", ("i0",))])
    problems = _problems(p, ALT_WITHOUT_DONE)
    assert len(problems) == 1
    error = problems[0]
    assert isinstance(error, FactOutputMissingError)
    assert isinstance(error, FactReferenceError)
    assert str(error) == (
        f"{AT} step s2: ${{fact(done(x)).done}}: step s2 finish(i0) reads the output 'done'"
        " of step s1 alt(i0), which makes done(i0) true, but the binding of 'alt' has no"
        " output 'done'\n"
        "  hint: its outputs are: key; every action that can make done(i0) true needs the"
        " output 'done' (the binding of 'alt' is at bindings.yaml:11:14)"
    )
    assert (error.consumer, error.consumer_action) == ("s2", "finish(i0)")
    assert (error.producer, error.producer_action) == ("s1", "alt(i0)")
    assert (error.fact, error.output) == ("done(i0)", "done")
    # the alternative that declares it still binds with the same file
    ok = h.plan([h.Step("s1", "work", ("i0",)), h.Step("s2", "finish", ("i0",))])
    assert h.bound(ok, ALT_WITHOUT_DONE).step("s2") is not None


def test_no_step_that_makes_the_fact_true_before_the_reader_is_an_error() -> None:
    p = h.plan([h.Step("s1", "finish", ("i0",)), h.Step("s2", "work", ("i0",))])
    problems = _problems(p, FACT_BINDINGS)
    assert len(problems) == 1
    error = problems[0]
    assert isinstance(error, FactProducerMissingError)
    assert str(error).startswith(
        f"{AT} step s1: ${{fact(done(x)).done}}: no step before step s1 finish(i0)"
        " makes done(i0) true\n  hint: a reference to a fact reads the output of the last"
        " step before this one whose action's effect adds done(i0)"
    )
    assert (error.consumer, error.consumer_action, error.fact) == ("s1", "finish(i0)", "done(i0)")
    assert error.producer is None


def test_a_fact_no_action_makes_true_is_an_error_for_every_reader() -> None:
    text = FACT_BINDINGS.replace("${fact(done(x)).done}", "${fact(finished(x)).done}")
    p = h.plan(
        [h.Step(f"a{k}", "work", (f"i{k}",)) for k in range(2)]
        + [h.Step(f"c{k}", "finish", (f"i{k}",)) for k in range(2)]
    )
    problems = [str(e) for e in _problems(p, text)]
    assert [m.split(": ", 1)[0] for m in problems] == [f"{AT} step c0", f"{AT} step c1"]
    assert "makes finished(i0) true" in problems[0]
    assert "makes finished(i1) true" in problems[1]


def test_a_fact_written_without_its_parentheses_gets_a_hint() -> None:
    text = FACT_BINDINGS.replace("${fact(done(x)).done}", "${fact(done).done}")
    p = h.plan([h.Step("a", "work", ("i0",)), h.Step("c", "finish", ("i0",))])
    (problem,) = (str(e) for e in _problems(p, text))
    assert "no step fact(done) in the plan" in problem
    assert "${fact(predicate(args)).output}" in problem


def test_the_producer_form_keeps_working_beside_the_fact_form() -> None:
    text = FACT_BINDINGS.replace(
        '{x: "${fact(done(x)).done}"}', '{x: "${work(x).done} / ${fact(done(x)).done}"}'
    )
    p = h.plan(
        [h.Step("a", "work", ("i0",)), h.Step("b", "alt", ("i0",)), h.Step("c", "finish", ("i0",))]
    )
    c = h.bound(p, text).step("c")
    assert c is not None
    assert dict(c.producers) == {"work(x).done": "a", "fact(done(x)).done": "b"}
    assert c.after == ("a", "b")


def test_a_step_of_the_plan_before_the_reader_wins_over_one_earlier_in_the_run() -> None:
    available = {("work", ("i0",)): "s0", ("alt", ("i0",)): "s1"}
    for steps, producer in (
        ([h.Step("r1.s1", "work", ("i0",)), h.Step("r1.s2", "finish", ("i0",))], "r1.s1"),
        # the plan's own producer comes after the reader: the last earlier one is read
        ([h.Step("r1.s1", "finish", ("i0",)), h.Step("r1.s2", "work", ("i0",))], "s1"),
    ):
        b = bind(
            h.plan(steps),
            h.domain(),
            h.bindings(FACT_BINDINGS),
            h.CATALOG,
            env={},
            available=available,
        )
        (reader,) = (s for s in b.steps if s.step.action == "finish")
        assert dict(reader.producers) == {"fact(done(x)).done": producer}
