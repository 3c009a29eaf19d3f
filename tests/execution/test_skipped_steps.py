"""``when_absent: skip``: a step whose argument reads a value an earlier step did not give
(an optional output that matched nothing, an index past the end of a list, an output of
a skipped step) ends ``skipped`` (``StepSkipped``), without calling its tool; the steps
that wait on it go on, and the run does not fail for it. Without ``when_absent: skip``
the same step fails as before."""

from __future__ import annotations

from collections.abc import Sequence

import _exec_helpers as h
import anyio
import pytest

from plansmith.binding import parse_bindings
from plansmith.engine import build_report, plan_progress, report_markdown
from plansmith.errors import BindingError
from plansmith.execution import (
    Event,
    FakeInvoker,
    MemoryRunLog,
    Runner,
    RunView,
    StepFailed,
    StepSkipped,
    StepStarted,
    StepState,
    StepSucceeded,
    ToolCall,
    ToolResult,
    apply_event,
    bound_from_dict,
    bound_to_dict,
    event_from_dict,
    fold,
    ready_steps,
)
from plansmith.model import Plan, Step

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _bindings(when_absent: str) -> str:
    """``work`` finds ``done`` only for the item ``found``; ``finish`` sends it on, and
    ``alt`` sends on ``finish``'s output; both with ``when_absent`` as given."""
    line = f"    when_absent: {when_absent}\n" if when_absent else ""
    return (
        "bindings:\n"
        "  work:\n"
        "    server: counter\n"
        "    tool: work\n"
        '    arguments: {name: "${x}"}\n'
        '    outputs: {done: {path: "$.structured.done", optional: true},'
        ' all: "$.structured.all"}\n'
        "  finish:\n"
        "    server: counter\n"
        "    tool: echo\n"
        '    arguments: {x: "${work(x).done}"}\n'
        '    outputs: {value: "$.structured.value"}\n'
        f"{line}"
        "  alt:\n"
        "    server: counter\n"
        "    tool: echo\n"
        '    arguments: {x: "${finish(x).value}"}\n'
        '    outputs: {value: "$.structured.value"}\n'
        f"{line}"
    )


async def _answer(call: ToolCall) -> ToolResult:
    if call.tool == "work":
        name = str(call.arguments["name"])
        found = {"done": f"{name}!"} if name == "found" else {}
        return ToolResult({**found, "all": [name] if name == "found" else []}, "")
    return ToolResult({"value": call.arguments.get("x")}, "")


def _chain(item: str) -> Plan:
    """work(item) -> finish(item) -> alt(item), and work(other) beside them."""
    return h.plan(
        [
            Step("s0", "work", (item,)),
            Step("s1", "finish", (item,), after=("s0",)),
            Step("s2", "alt", (item,), after=("s1",)),
            Step("s3", "work", ("other",)),
        ]
    )


async def _run(plan: Plan, bindings: str) -> tuple[str, list[Event], FakeInvoker]:
    invoker = FakeInvoker(_answer)
    log, state = h.start_run(h.bound(plan, bindings))
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state).run()
    return outcome.state, list(log.events("run-1")), invoker


def _skips(events: Sequence[Event]) -> dict[str, StepSkipped]:
    return {e.step: e for e in events if isinstance(e, StepSkipped)}


async def test_a_step_reading_an_absent_optional_output_is_skipped_and_so_is_its_reader() -> None:
    state, events, invoker = await _run(_chain("missing"), _bindings("skip"))

    assert state == "succeeded"
    skipped = _skips(events)
    assert list(skipped) == ["s1", "s2"]
    assert "${work(x).done} (an output of step s0) is null" in skipped["s1"].reason
    assert "${finish(x).value}: step s1 was skipped: it has no outputs" in skipped["s2"].reason
    assert sorted(c.step for c in invoker.calls) == ["s0", "s3"]  # no call for a skip
    assert {e.step for e in events if isinstance(e, StepSucceeded)} == {"s0", "s3"}
    assert not [e for e in events if isinstance(e, StepFailed)]
    folded = fold("run-1", events)
    assert folded.states["s1"] is StepState.SKIPPED
    assert "s1" not in folded.outputs  # a skipped step has no outputs


async def test_the_same_chain_with_the_value_present_runs_every_step() -> None:
    state, events, invoker = await _run(_chain("found"), _bindings("skip"))

    assert state == "succeeded"
    assert not _skips(events)
    assert sorted(c.step for c in invoker.calls) == ["s0", "s1", "s2", "s3"]


async def test_without_when_absent_skip_a_skipped_producers_reader_fails() -> None:
    # finish says skip; alt does not: it reads the output finish never gave, and fails
    text = _bindings("skip").replace(
        '    arguments: {x: "${finish(x).value}"}\n'
        '    outputs: {value: "$.structured.value"}\n'
        "    when_absent: skip\n",
        '    arguments: {x: "${finish(x).value}"}\n    outputs: {value: "$.structured.value"}\n',
    )
    state, events, _ = await _run(_chain("missing"), text)

    assert state == "failed"
    assert list(_skips(events)) == ["s1"]
    failed = [e for e in events if isinstance(e, StepFailed)]
    assert [(e.step, e.error_class) for e in failed] == [("s2", "extraction_error")]
    assert failed[0].message == "${finish(x).value}: step s1 was skipped: it has no outputs"


CONTEXT_BINDINGS = """\
bindings:
  work:
    server: counter
    tool: work
    arguments: {name: "${x}"}
    outputs: {all: "$.structured.all"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "${x}"}
    outputs: {value: "$.structured.value"}
"""


@pytest.mark.parametrize("skip", [True, False], ids=["skip", "fail"])
async def test_a_context_placeholder_past_the_end_of_an_empty_list(skip: bool) -> None:
    # GTPyhop's ${context.all[0]}: work found nothing, so all is []
    text = CONTEXT_BINDINGS + ("    when_absent: skip\n" if skip else "")
    plan = h.plan([Step("s0", "work", ("missing",)), Step("s1", "finish", ("${context.all[0]}",))])

    state, events, invoker = await _run(plan, text)

    assert [c.step for c in invoker.calls] == ["s0"]
    if skip:
        assert state == "succeeded"
        reason = _skips(events)["s1"].reason
        assert "index 0 is out of range" in reason
        assert "a list of 0 item(s)" in reason
    else:
        assert state == "failed"
        failed = [e for e in events if isinstance(e, StepFailed)]
        assert [(e.step, e.error_class) for e in failed] == [("s1", "extraction_error")]


async def test_a_value_of_the_wrong_shape_fails_even_when_the_binding_says_skip() -> None:
    # reading into a value that is not a list is a wrong plan, not an absent value:
    # ``all`` is here the whole structured result, an object
    text = CONTEXT_BINDINGS.replace('{all: "$.structured.all"}', '{all: "$.structured"}')
    text += "    when_absent: skip\n"
    plan = h.plan([Step("s0", "work", ("missing",)), Step("s1", "finish", ("${context.all[0]}",))])

    state, events, _ = await _run(plan, text)

    assert state == "failed"
    assert not _skips(events)
    failed = [e for e in events if isinstance(e, StepFailed)]
    assert [(e.step, e.error_class) for e in failed] == [("s1", "extraction_error")]
    assert "not a list" in failed[0].message


async def test_the_view_the_report_and_the_progress_count_a_skipped_step_as_done() -> None:
    _, events, _ = await _run(_chain("missing"), _bindings("skip"))
    view = RunView.fold(events, "run-1")

    assert view.counts()["skipped"] == 2
    assert view.steps["s1"].state is StepState.SKIPPED
    assert view.steps["s1"].ended is not None
    assert "is null" in (view.steps["s1"].message or "")
    assert view.steps["s1"].error is None
    assert plan_progress(view) == (4, 4)
    report = build_report("run-1", events, MemoryRunLog(), {})
    assert [k["step"] for k in report["skipped"]] == ["s1", "s2"]
    assert report["failures"] == []
    outcomes = {s["step"]: s["outcome"] for s in report["steps"]}
    assert outcomes == {"s0": "succeeded", "s1": "skipped", "s2": "skipped", "s3": "succeeded"}
    assert "- s1: skipped, " in report_markdown(report)


async def test_a_skipped_step_is_recorded_after_its_start_and_its_event_reads_back() -> None:
    _, events, _ = await _run(_chain("missing"), _bindings("skip"))
    s1 = [e.type for e in events if getattr(e, "step", None) == "s1"]
    assert s1 == ["StepStarted", "StepSkipped"]  # write-ahead: the start is durable first
    skip = _skips(events)["s1"]
    assert event_from_dict(skip.to_dict()) == skip


def test_a_skipped_dependency_lets_its_dependents_become_ready() -> None:
    after = {"a": (), "b": ("a",), "c": ("b",)}
    states = {"a": StepState.SKIPPED, "b": StepState.PENDING, "c": StepState.PENDING}
    assert ready_steps(after, states) == ["b"]
    states["a"] = StepState.FAILED
    assert ready_steps(after, states) == []


def test_a_skip_is_allowed_only_for_a_running_step() -> None:
    run = fold("r", [])
    run.states["s1"] = StepState.PENDING
    skip = StepSkipped(run_id="r", seq=1, step="s1", action="finish", reason="absent")
    with pytest.raises(Exception, match="not allowed for a step that is pending"):
        apply_event(run, skip)
    apply_event(run, StepStarted(run_id="r", seq=2, step="s1", action="finish"))
    apply_event(run, StepSkipped(run_id="r", seq=3, step="s1", action="finish", reason="x"))
    assert run.states["s1"] is StepState.SKIPPED


def test_when_absent_is_read_kept_through_the_log_and_refused_when_misspelt() -> None:
    bound = h.bound(_chain("x"), _bindings("skip"))
    by_id = {s.step.id: s for s in bound.steps}
    assert by_id["s1"].policy.skip_when_absent
    assert not by_id["s0"].policy.skip_when_absent
    again = bound_from_dict(bound_to_dict(bound))
    assert [s.policy for s in again.steps] == [s.policy for s in bound.steps]

    with pytest.raises(BindingError) as info:
        parse_bindings(_bindings("maybe"), source="bindings.yaml")
    problem = str(info.value.problems[0])
    assert "bindings.yaml:12:18" in problem
    assert "'when_absent' of 'finish' must be fail or skip" in problem
    assert parse_bindings(_bindings("fail")).get("finish").policy.skip_when_absent is False  # type: ignore[union-attr]
