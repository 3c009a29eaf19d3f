"""``TimeoutInvoker`` starts a call's clock once the call's server is ready: the inner
invoker's ``ready`` (the MCP pool's: a server starting or restarting) is awaited first,
so a server's start-up never counts against a call's timeout."""

from __future__ import annotations

from collections.abc import Awaitable

import anyio
import pytest

from plansmith.errors import ToolCallError
from plansmith.execution import TimeoutInvoker, ToolCall, ToolResult, TracingInvoker
from plansmith.execution._tracing import TraceView
from plansmith.servers import McpInvoker

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Starting:
    """An invoker whose server is up once the test says so (``up``); it notes the deadline
    in force where it waits for the start, and where it calls."""

    def __init__(self) -> None:
        self.up = anyio.Event()
        self.waiting = anyio.Event()
        self.deadlines: dict[str, float] = {}

    def ready(self, call: ToolCall) -> Awaitable[object] | None:
        return None if self.up.is_set() else self._start()

    async def _start(self) -> None:
        self.deadlines["ready"] = anyio.current_effective_deadline()
        self.waiting.set()
        await self.up.wait()

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.deadlines["invoke"] = anyio.current_effective_deadline()
        if call.tool == "hang":
            await anyio.sleep_forever()
        return ToolResult(None, "ok")


def _call(tool: str = "t", timeout: float = 30.0) -> ToolCall:
    return ToolCall("s", tool, {}, "r/s1", "s1", 1, timeout)


async def test_the_clock_starts_after_the_server_is_ready() -> None:
    inner = Starting()
    results: list[ToolResult] = []

    async def call() -> None:
        results.append(await TimeoutInvoker(inner).invoke(_call(timeout=5.0)))

    with anyio.fail_after(60) as guard:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await inner.waiting.wait()
            assert "invoke" not in inner.deadlines  # not sent while the server starts
            inner.up.set()
    assert [r.text for r in results] == ["ok"]
    # no clock of the call's while it waits for the start: only the test's guard
    assert inner.deadlines["ready"] == guard.deadline
    assert inner.deadlines["invoke"] < guard.deadline  # the call's own 5 s


async def test_a_server_that_is_up_costs_no_wait_and_the_timeout_still_applies() -> None:
    inner = Starting()
    inner.up.set()
    with anyio.fail_after(10), pytest.raises(ToolCallError) as info:
        await TimeoutInvoker(inner).invoke(_call("hang", timeout=0.05))
    assert info.value.error_class == "timeout"
    assert "ready" not in inner.deadlines


async def test_the_wrappers_pass_the_pools_ready_on() -> None:
    inner = Starting()
    assert McpInvoker(inner).ready == inner.ready  # type: ignore[arg-type]
    assert TracingInvoker(inner, TraceView()).ready == inner.ready
    assert TimeoutInvoker(inner).ready == inner.ready
    without = McpInvoker(object())  # type: ignore[arg-type]
    assert without.ready is None
    assert TimeoutInvoker(without).ready is None
