"""The runner with ``${fact(...)}`` references: a replan that puts another producer of the
same fact in place binds the reader to it, and its value flows to the reader; a producer
whose binding lacks the output fails the replan with a reason naming both steps."""

from __future__ import annotations

from collections.abc import Mapping

import _exec_helpers as h
import anyio
import pytest

from plansmith.binding import bind
from plansmith.execution import FakeInvoker, Replanned, Runner, ToolCall, ToolResult, make_replan

pytestmark = pytest.mark.anyio

BINDINGS = """\
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
    arguments: {x: "${ fact( done(x) ) . done }"}
    outputs: {value: "$.structured.value"}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _work_fails_for_its_own_name(call: ToolCall) -> ToolResult:
    """``work`` called by ``work(i0)`` (name ``i0``) fails; by ``alt(i0)`` it answers."""
    if call.tool == "work" and call.arguments.get("name") == "i0":
        return ToolResult(None, "down", is_error=True)
    return await h.work_ok(call)


def _runner(text: str) -> tuple[Runner, h.RunLog, FakeInvoker]:
    bindings = h.bindings(text)

    def rebind(p: h.Plan, available: Mapping[tuple[str, tuple[str, ...]], str]) -> h.BoundPlan:
        return bind(p, h.domain(), bindings, h.CATALOG, env={}, available=available)

    def replanner(state: object, failed: object, done: object, /, **_: object) -> h.Plan:
        return h.plan([h.Step("s0", "alt", ("i0",)), h.Step("s1", "finish", ("i0",))])

    first = h.plan([h.Step("s0", "work", ("i0",)), h.Step("s1", "finish", ("i0",))])
    log, state = h.start_run(h.bound(first, text))
    fake = FakeInvoker(_work_fails_for_its_own_name)
    runner = Runner(fake, log, state, replan=make_replan(h.problem(1), replanner, rebind))
    return runner, log, fake


async def test_the_alternative_producer_of_the_fact_feeds_the_reader_after_a_replan() -> None:
    runner, log, fake = _runner(BINDINGS)
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "succeeded", outcome.reason
    assert [c.step for c in fake.calls] == ["s0", "r1.s0", "r1.s1"]
    assert fake.calls[-1].arguments == {"x": "alt-i0!"}
    assert outcome.outputs["r1.s1"] == {"value": "alt-i0!"}
    (replanned,) = (e for e in log.events("run-1") if isinstance(e, Replanned))
    (reader,) = (s for s in replanned.bound["steps"] if s["id"] == "r1.s1")  # type: ignore[index, union-attr]
    assert reader["producers"] == [[" fact( done(x) ) . done ", "r1.s0"]]


async def test_an_alternative_without_the_output_fails_the_replan_naming_both_steps() -> None:
    text = BINDINGS.replace(
        '{name: "alt-${x}"}\n    outputs: {done: "$.structured.done"}',
        '{name: "alt-${x}"}\n    outputs: {key: "$.structured.key"}',
    )
    runner, log, fake = _runner(text)
    with anyio.fail_after(10):
        outcome = await runner.run()
    assert outcome.state == "failed"
    assert [c.step for c in fake.calls] == ["s0"]  # the new plan never started
    reason = outcome.reason or ""
    assert reason.startswith(
        "step(s) s0 (tool_error: down) failed; replanning failed: 1 binding problem(s):\n"
    )
    assert (
        "  bindings.yaml:15:20 step r1.s1: ${ fact( done(x) ) . done }: step r1.s1 finish(i0)"
        " reads the output 'done' of step r1.s0 alt(i0), which makes done(i0) true, but the"
        " binding of 'alt' has no output 'done'"
    ) in reason
    assert not any(isinstance(e, Replanned) for e in log.events("run-1"))
