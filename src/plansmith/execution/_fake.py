"""A fake invoker for unit tests: answers from a function, with no server behind it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from plansmith.execution._invoker import ToolCall, ToolResult

__all__ = ["FakeInvoker"]

Handler = Callable[[ToolCall], Awaitable[ToolResult]]


class FakeInvoker:
    """Calls ``handler`` for every call and keeps the calls it saw, in order.

    ``started`` is set each time a call begins (tests wait on it under a deadline).
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.calls: list[ToolCall] = []
        self.started = anyio.Event()

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        self.started.set()
        self.started = anyio.Event()
        return await self.handler(call)
