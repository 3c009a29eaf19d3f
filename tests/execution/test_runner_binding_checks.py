"""The runner with the binding layer's decisions: a path reads the parsed text when it
could reach it, and an argument filled by another step is checked against the type its
tool declares before the call."""

from __future__ import annotations

from typing import Any

import _exec_helpers as h
import anyio
import pytest

from plansmith.binding import ToolCatalog, ToolSpec
from plansmith.execution import (
    FakeInvoker,
    Runner,
    ToolCall,
    ToolResult,
    bound_from_dict,
    bound_to_dict,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


CATALOG = ToolCatalog(
    (
        (
            "shapes",
            (
                ToolSpec("emit", {"type": "object"}),
                ToolSpec(
                    "need_int",
                    {"type": "object", "properties": {"n": {"type": "integer"}}},
                ),
            ),
        ),
    )
)
JSON_TEXT = '{"a": 1, "items": [{"id": "x"}, {"id": "y"}]}'


def _bindings(outputs: str, n: str = '"${work(x).n}"') -> str:
    return (
        "bindings:\n"
        f"  work: {{server: shapes, tool: emit, outputs: {outputs}}}\n"
        f"  finish: {{server: shapes, tool: need_int, arguments: {{n: {n}}}}}\n"
    )


async def _run(text: str, answer: ToolResult) -> tuple[Any, FakeInvoker]:
    async def handler(call: ToolCall) -> ToolResult:
        return answer if call.tool == "emit" else ToolResult({"got": call.arguments["n"]}, "")

    invoker = FakeInvoker(handler)
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    log, state = h.start_run(h.bound(plan, text, CATALOG))
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state).run()
    return outcome, invoker


@pytest.mark.parametrize("path", ["$..id", "$.json.items[*].id", "$[?@.items].items[*].id"])
async def test_an_output_path_that_reaches_the_parsed_text_reads_it_alone(path: str) -> None:
    alone, _ = await _run(_bindings(f'{{n: "{path}"}}', n="1"), ToolResult(None, JSON_TEXT))
    together, _ = await _run(
        _bindings(f'{{n: "{path}", a: "$.json.a"}}', n="1"), ToolResult(None, JSON_TEXT)
    )
    assert alone.state == together.state == "succeeded", (alone.reason, together.reason)
    assert alone.outputs["a"]["n"] == together.outputs["a"]["n"] == ["x", "y"]


async def test_an_argument_of_a_type_its_tool_does_not_take_fails_before_the_call() -> None:
    outcome, invoker = await _run(
        _bindings('{n: "$.structured.v"}'), ToolResult({"v": [1, 2, 3]}, "")
    )
    assert outcome.state == "failed"
    assert [c.tool for c in invoker.calls] == ["emit"]  # need_int never called
    assert "argument n: ${work(x).n} gave an array ([1,2,3])" in (outcome.reason or "")


async def test_an_argument_of_a_type_its_tool_takes_is_sent() -> None:
    outcome, invoker = await _run(_bindings('{n: "$.structured.v"}'), ToolResult({"v": 42}, ""))
    assert outcome.state == "succeeded", outcome.reason
    assert invoker.calls[1].arguments == {"n": 42}


def test_the_type_checks_of_a_bound_plan_survive_its_log() -> None:
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    bound = h.bound(plan, _bindings('{n: "$.structured.v"}'), CATALOG)
    back = bound_from_dict(bound_to_dict(bound))
    assert [s.type_checks for s in back.steps] == [s.type_checks for s in bound.steps]
    assert back.steps[1].type_checks  # the one of finish
    assert "type_checks" not in bound_to_dict(bound)["steps"][0]  # type: ignore[index,call-overload]
