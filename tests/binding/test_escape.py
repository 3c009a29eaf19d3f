"""``$${`` writes a literal ``${`` (a shell's ``${HOME:-/tmp}``, a JS template literal):
``check`` takes it for text, not a reference, and the tool receives the text."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "execution"))
import _exec_helpers as h

from plansmith.binding import find_refs, render
from plansmith.binding._refs import ParamRef
from plansmith.errors import BindingError
from plansmith.execution import FakeInvoker, Runner, ToolCall, ToolResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ESCAPED = """\
bindings:
  work:
    server: counter
    tool: work
    arguments:
      name: 'sh -c "cd $${HOME:-/tmp} && ls" # ${x}'
    outputs: {done: "$.structured.done"}
  finish:
    server: counter
    tool: echo
    arguments: {x: "$${x}", js: "`$${a + b}`", both: "${x}: $${x}", done: "${work(x).done}"}
"""


def test_an_escaped_reference_renders_as_the_literal_text() -> None:
    def value(ref: object) -> str:
        assert ref == ParamRef("x")
        return "i0"

    assert render("$${HOME:-/tmp}", value) == "${HOME:-/tmp}"
    assert render("$${x}", value) == "${x}"
    assert render("${x} $${x} ${x}", value) == "i0 ${x} i0"
    assert render({"$${k}": ["$${x}"]}, value) == {"${k}": ["${x}"]}
    assert render("$$ and $", value) == "$$ and $"  # only $${ is an escape
    assert list(find_refs("$${HOME:-/tmp} ${x}")) == [("x", ParamRef("x"))]


def test_text_like_a_shell_variable_is_told_how_to_write_it_as_text() -> None:
    text = ESCAPED.replace("$${HOME:-/tmp}", "${HOME:-/tmp}")
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    with pytest.raises(BindingError) as info:
        h.bound(plan, text)
    (problem,) = [str(p) for p in info.value.problems]
    assert problem.startswith("bindings.yaml:6:13 step a: not a reference: ${HOME:-/tmp}\n")
    assert problem.endswith("; for the text ${HOME:-/tmp}, write $${HOME:-/tmp}")


def test_check_takes_an_escaped_reference_for_text() -> None:
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])
    bound = h.bound(plan, ESCAPED)  # no "not a reference: ${HOME:-/tmp}", no unknown ${a + b}
    finish = bound.step("b")
    assert finish is not None
    assert dict(finish.producers) == {"work(x).done": "a"}


async def test_the_tool_receives_the_literal_text_of_an_escaped_reference() -> None:
    plan = h.plan([h.Step("a", "work", ("i0",)), h.Step("b", "finish", ("i0",))])

    async def answer(call: ToolCall) -> ToolResult:
        return ToolResult({"done": "yes"}, "")

    invoker = FakeInvoker(answer)
    log, state = h.start_run(h.bound(plan, ESCAPED))
    with anyio.fail_after(10):
        outcome = await Runner(invoker, log, state).run()
    assert outcome.state == "succeeded", outcome.reason
    assert [dict(c.arguments) for c in invoker.calls] == [
        {"name": 'sh -c "cd ${HOME:-/tmp} && ls" # i0'},
        {"x": "${x}", "js": "`${a + b}`", "both": "i0: ${x}", "done": "yes"},
    ]
