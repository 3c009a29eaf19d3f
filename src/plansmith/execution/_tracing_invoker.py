"""An invoker that puts the step attempt's trace context into the call's ``_meta``.

``TracingInvoker(inner, view)`` looks up the span ``TraceView`` opened for the call's step
attempt (the runner emits ``StepStarted``, or ``StepRetrying`` before a retry, before it
calls), makes it the current span while the call runs, and adds the W3C ``traceparent``
(and ``tracestate``, and anything else the configured propagator writes) to
``ToolCall.meta``, which the MCP pool sends in the request's ``_meta`` beside the
idempotency key. A server that traces continues the run's trace from there.

Install it only when tracing is on: it imports OpenTelemetry when it is built.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from plansmith.execution._invoker import ReadyFn, ToolCall, ToolInvoker, ToolResult
from plansmith.execution._tracing import TraceView

if TYPE_CHECKING:
    from opentelemetry.propagators.textmap import TextMapPropagator

__all__ = ["TracingInvoker"]


class TracingInvoker:
    """Adds the trace context of the step attempt's span to each call's ``meta``.

    ``propagator`` defaults to the global one (``OTEL_PROPAGATORS``; W3C trace context
    and baggage unless configured otherwise). A call whose attempt has no open span in
    ``view`` goes through unchanged.
    """

    def __init__(
        self,
        inner: ToolInvoker,
        view: TraceView,
        propagator: TextMapPropagator | None = None,
    ) -> None:
        from opentelemetry import context, propagate, trace  # noqa: PLC0415 (optional extra)

        self.inner = inner
        self.view = view
        # the pool's, passed on: ``TimeoutInvoker`` waits for a server's start with it
        self.ready: ReadyFn | None = getattr(inner, "ready", None)
        self._context: Any = context
        self._trace: Any = trace
        self._inject: Any = propagator.inject if propagator is not None else propagate.inject

    async def invoke(self, call: ToolCall) -> ToolResult:
        span = self.view.span_for(call.key, call.attempt)
        if span is None:
            return await self.inner.invoke(call)
        current = self._trace.set_span_in_context(span)
        carrier: dict[str, str] = {}
        self._inject(carrier, context=current)
        token = self._context.attach(current)
        try:
            return await self.inner.invoke(replace(call, meta={**call.meta, **carrier}))
        finally:
            self._context.detach(token)
