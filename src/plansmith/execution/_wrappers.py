"""Invokers that wrap an invoker: timeout, error classification, retry, recording.

Each adds one concern around ``invoke`` (the middleware shape of Starlette), so
the runner holds no retry or timeout flags of its own.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import anyio

from plansmith.binding import StepPolicy
from plansmith.errors import ToolCallError
from plansmith.execution._event_fast import tool_call
from plansmith.execution._invoker import (
    ErrorClass,
    ReadyFn,
    ToolCall,
    ToolInvoker,
    ToolResult,
)
from plansmith.execution._policy import backoff_delay, should_retry

__all__ = [
    "TimeoutInvoker",
    "ClassifyingInvoker",
    "RetryInvoker",
    "RecordingInvoker",
    "CallRecord",
    "Sleep",
    "classify_result",
    "unasked_cancellation",
]

Sleep = Callable[[float], Awaitable[None]]
OnRetry = Callable[[ToolCall, ToolCallError, float], Awaitable[None]]


class TimeoutInvoker:
    """Gives up a call after ``call.timeout`` seconds (``timeout``, with ``progressed``).

    The clock starts once the call's server is ready: when ``inner`` has a ``ready``
    (``ReadyFn``: the MCP pool's, through ``McpInvoker``), what it returns is awaited
    first, so a server's start or restart never counts against a call's timeout.
    """

    def __init__(self, inner: ToolInvoker) -> None:
        self.inner = inner
        self.ready: ReadyFn | None = getattr(inner, "ready", None)

    async def invoke(self, call: ToolCall) -> ToolResult:
        if call.timeout is None:
            return await self.inner.invoke(call)
        if self.ready is not None:
            starting = self.ready(call)
            if starting is not None:  # None: up now (no await on the hot path)
                await starting
        progressed = False
        outer = call.on_progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            nonlocal progressed
            progressed = True
            if outer is not None:
                await outer(progress, total, message)

        timed = tool_call(  # ``replace(call, on_progress=on_progress)``, a third of its cost
            call.server,
            call.tool,
            call.arguments,
            call.key,
            call.step,
            call.attempt,
            call.timeout,
            on_progress,
            call.meta,
        )
        with anyio.move_on_after(call.timeout) as scope:
            return await self.inner.invoke(timed)
        assert scope.cancelled_caught
        raise ToolCallError(
            ErrorClass.TIMEOUT,
            f"{call.tool} on {call.server} took longer than {call.timeout:g} s",
            progressed=progressed,
        )


class ClassifyingInvoker:
    """Turns an ``is_error`` result into a ``tool_error`` failure, and a cancellation that
    nobody asked for (a tool pool's bug) into a ``protocol_error`` failure: left alone,
    it would end the step's task as if the run had been cancelled."""

    def __init__(self, inner: ToolInvoker) -> None:
        self.inner = inner

    async def invoke(self, call: ToolCall) -> ToolResult:
        try:
            result = await self.inner.invoke(call)
        except asyncio.CancelledError:
            error = unasked_cancellation(call)
            if error is None:
                raise  # a real cancellation: the run's, a timeout's, the task group's
            raise error from None
        return classify_result(call, result)


def unasked_cancellation(call: ToolCall) -> ToolCallError | None:
    """Called as ``call`` raised a cancellation: the ``protocol_error`` failure when
    nobody asked for it (the current task is not being cancelled), else None."""
    task = asyncio.current_task()
    if task is None or task.cancelling():
        return None
    return ToolCallError(
        ErrorClass.PROTOCOL_ERROR,
        f"calling {call.server}/{call.tool} raised a cancellation nobody asked for",
    )


def classify_result(call: ToolCall, result: ToolResult) -> ToolResult:
    """``result``, or the ``tool_error`` failure it stands for when its ``is_error`` is set."""
    if result.is_error:
        error = ToolCallError(
            ErrorClass.TOOL_ERROR,
            result.text or f"{call.tool} returned an error",
            retryable=result.retryable,
        )
        error.result = result
        raise error
    return result


class RetryInvoker:
    """Tries a call again, by its failure class's rule, with backoff; ``attempt`` is the last."""

    def __init__(
        self,
        inner: ToolInvoker,
        policy: StepPolicy,
        on_retry: OnRetry,
        sleep: Sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.on_retry = on_retry
        self.sleep = sleep
        self.clock = clock
        self.attempt = 0
        #: ``clock()`` as the last attempt it made began, after its backoff (None: none)
        self.started: float | None = None

    async def invoke(self, call: ToolCall) -> ToolResult:
        self.attempt = call.attempt
        try:
            return await self.inner.invoke(call)
        except ToolCallError as error:
            return await self.after_failure(call, error)

    async def after_failure(self, call: ToolCall, error: ToolCallError) -> ToolResult:
        """Go on after ``call`` (attempt ``call.attempt``) failed with ``error``.

        The runner calls the inner invoker itself and makes this wrapper only when
        that first attempt fails (a step that succeeds at once costs no wrapper).
        """
        attempt = call.attempt
        this = call
        while True:
            self.attempt = attempt
            if not should_retry(error, attempt, self.policy, keyed=bool(call.key)):
                raise error
            delay = backoff_delay(attempt)
            await self.on_retry(this, error, delay)
            if delay > 0 and not math.isclose(delay, 0):
                await self.sleep(delay)
            attempt += 1
            self.attempt = attempt
            this = replace(call, attempt=attempt)
            self.started = self.clock()
            try:
                return await self.inner.invoke(this)
            except ToolCallError as again:
                error = again


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call and its outcome: a result, or the error class and message."""

    call: ToolCall
    result: ToolResult | None = None
    error_class: str | None = None
    message: str | None = None


class RecordingInvoker:
    """Records every call and outcome in ``records`` (an audit trail for tests and tools)."""

    def __init__(self, inner: ToolInvoker) -> None:
        self.inner = inner
        self.records: list[CallRecord] = []

    async def invoke(self, call: ToolCall) -> ToolResult:
        try:
            result = await self.inner.invoke(call)
        except ToolCallError as error:
            self.records.append(CallRecord(call, None, error.error_class, error.message))
            raise
        self.records.append(CallRecord(call, result))
        return result
