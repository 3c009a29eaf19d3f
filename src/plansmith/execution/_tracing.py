"""OpenTelemetry spans from a run's events: one span per run, one child span per step attempt.

``TraceView`` is a subscriber like every other view (``Engine.run(..., subscribe=view)``):
it reads only the frozen events, so a live run and a replayed log give the same spans.
OpenTelemetry is optional (``pip install plansmith[otel]``) and is imported only when a
view is built, so there is no cost when tracing is off. Only the event fields named
below become attributes: never inputs, outputs, results or messages (they may hold secrets).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from plansmith.errors import InputError, Location
from plansmith.execution._events import (
    AwaitingApproval,
    Event,
    PlanApproved,
    PlanReady,
    Replanned,
    RunCancelled,
    RunCreated,
    RunFinished,
    RunStarted,
    StepEvent,
    StepFailed,
    StepRetrying,
    StepStarted,
    StepSucceeded,
)

if TYPE_CHECKING:
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["TraceView"]

_SCOPE = "plansmith"


def _time_ns(event: Event) -> int | None:
    """The event's UTC time in ns since the epoch (None: now, for events without a time)."""
    if not event.time:
        return None
    try:
        moment = datetime.fromisoformat(event.time)
    except ValueError:
        return None
    return int(moment.timestamp() * 1_000_000) * 1000


class TraceView:
    """Turns run events into OpenTelemetry spans through ``tracer_provider``.

    Without a provider the global one is used (configured, e.g., by the ``OTEL_*``
    environment variables and an OTLP exporter). Raises ``InputError`` when
    OpenTelemetry is not installed.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        try:
            from opentelemetry import trace  # noqa: PLC0415 (optional, imported on use)
        except ImportError as error:
            raise InputError(
                "tracing needs OpenTelemetry, which is not installed",
                location=Location(file="pyproject.toml"),
                hint="pip install plansmith[otel]",
            ) from error
        self._trace: Any = trace
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self._tracer = provider.get_tracer(_SCOPE)
        self._runs: dict[str, Span] = {}
        self._steps: dict[tuple[str, str], Span] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, StepEvent):
            self._step_event(event)
        elif isinstance(event, RunCreated | RunStarted):
            span = self._run_span(event)
            if isinstance(event, RunStarted) and event.resumed:
                span.set_attribute("plansmith.run.resumed", True)
        elif isinstance(event, PlanReady | AwaitingApproval | PlanApproved | Replanned):
            if event.plan_hash:
                self._run_span(event).set_attribute("plansmith.plan.hash", event.plan_hash)
        elif isinstance(event, RunFinished):
            self._end_run(event, event.state, event.reason, ok=event.state == "succeeded")
        elif isinstance(event, RunCancelled):
            self._end_run(event, "cancelled", event.reason, ok=False)

    def _run_span(self, event: Event) -> Span:
        span = self._runs.get(event.run_id)
        if span is None:
            span = self._tracer.start_span(
                "plansmith.run",
                attributes={"plansmith.run.id": event.run_id},
                start_time=_time_ns(event),
            )
            self._runs[event.run_id] = span
        return span

    def _step_event(self, event: StepEvent) -> None:
        key = (event.run_id, event.step)
        if isinstance(event, StepStarted):
            self._end_step(key, event, "superseded")
            parent = self._trace.set_span_in_context(self._run_span(event))
            self._steps[key] = self._tracer.start_span(
                f"plansmith.step {event.action}",
                context=parent,
                attributes={
                    "plansmith.run.id": event.run_id,
                    "plansmith.step.id": event.step,
                    "plansmith.step.action": event.action,
                    "plansmith.step.args": [str(a) for a in event.args],
                    "plansmith.step.server": event.server,
                    "plansmith.step.tool": event.tool,
                    "plansmith.step.attempt": event.attempt,
                },
                start_time=_time_ns(event),
            )
            return
        span = self._steps.pop(key, None)
        if span is None:
            return
        if isinstance(event, StepSucceeded):
            span.set_attribute("plansmith.step.duration_ms", event.duration_ms)
            span.set_status(self._trace.Status(self._trace.StatusCode.OK))
        elif isinstance(event, StepFailed | StepRetrying):
            if isinstance(event, StepFailed):
                span.set_attribute("plansmith.step.duration_ms", event.duration_ms)
            span.set_attribute("plansmith.step.error_class", event.error_class)
            span.set_attribute("plansmith.step.retrying", isinstance(event, StepRetrying))
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.error_class))
        else:  # StepProgress and the like: not an end; keep the span open
            self._steps[key] = span
            return
        span.end(end_time=_time_ns(event))

    def _end_step(self, key: tuple[str, str], event: Event, why: str) -> None:
        span = self._steps.pop(key, None)
        if span is not None:
            span.set_attribute("plansmith.step.ended_by", why)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, why))
            span.end(end_time=_time_ns(event))

    def _end_run(self, event: Event, state: str, reason: str | None, *, ok: bool) -> None:
        for key in [k for k in self._steps if k[0] == event.run_id]:
            self._end_step(key, event, f"run {state}")
        span = self._run_span(event)
        del self._runs[event.run_id]
        span.set_attribute("plansmith.run.state", state)
        if reason:
            span.set_attribute("plansmith.run.reason", reason)
        code = self._trace.StatusCode.OK if ok else self._trace.StatusCode.ERROR
        span.set_status(self._trace.Status(code, None if ok else state))
        span.end(end_time=_time_ns(event))
