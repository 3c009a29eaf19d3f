"""OpenTelemetry spans from a run's events: one span per run, one child span per step attempt.

``TraceView`` is a subscriber like every other view (``Engine.run(..., subscribe=view)``):
it reads only the frozen events, so a live run and a replayed log give the same spans.
OpenTelemetry is optional (``pip install plansmith[otel]``) and is imported only when a
view is built, so there is no cost when tracing is off. Only the event fields named
below become attributes: never inputs, outputs, results or messages (they may hold secrets).

The plan's DAG is kept as span links, not as parents: every step span's parent is the run
span, and it links to the last attempt span of each step it comes ``after`` in the bound
plan (``PlanReady``/``Replanned`` carry it); a retried attempt also links to the attempt
before it. A link carries ``plansmith.link`` (``after`` or ``previous_attempt``) and the
step id it points to.

``StepRetrying`` ends an attempt's span; the runner starts the next attempt without a
``StepStarted``, so that attempt's span starts at the retry event's time plus its backoff
delay, when the first of its events (or ``span_for``, from ``TracingInvoker``) needs it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from plansmith.errors import InputError, Location
from plansmith.execution._codec import bound_from_dict
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
    StepSkipped,
    StepStarted,
    StepSucceeded,
)

if TYPE_CHECKING:
    from opentelemetry.trace import Link, Span, SpanContext, TracerProvider

    from plansmith.execution._states import RunState

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
        # per (run, step): the steps it comes after, the last attempt's span context,
        # the attempt the open span is for, and the next attempt after a StepRetrying
        self._after: dict[tuple[str, str], tuple[str, ...]] = {}
        self._last: dict[tuple[str, str], SpanContext] = {}
        self._attempt: dict[tuple[str, str], int] = {}
        self._next: dict[tuple[str, str], tuple[StepRetrying, int | None]] = {}
        self._keys: dict[str, tuple[str, str]] = {}  # idempotency key -> (run, step)
        self._ended: set[str] = set()  # runs whose span ended (RunFinished after RunCancelled)
        self._failed: dict[str, list[str]] = {}  # run -> the steps seen failing for good

    def prime(self, state: RunState) -> None:
        """Learn a resumed run's plan (its DAG) without making spans for its past events.

        Links reach only the spans this view made: steps that finished before the
        resume are in another trace's past and get no link.
        """
        if state.bound is not None:
            for s in state.bound.steps:
                self._after[(state.run_id, s.id)] = s.after

    def span_for(self, key: str, attempt: int) -> Span | None:
        """The open span of the step with idempotency ``key`` at ``attempt`` (None: none)."""
        where = self._keys.get(key)
        if where is None:
            return None
        span = self._steps.get(where)
        if span is None:
            span = self._start_next(where, attempt)
        if span is None or self._attempt.get(where) != attempt:
            return None
        return span

    def __call__(self, event: Event) -> None:
        if isinstance(event, StepEvent):
            self._step_event(event)
        elif isinstance(event, RunCreated | RunStarted):
            self._ended.discard(event.run_id)
            span = self._run_span(event)
            if isinstance(event, RunStarted) and event.resumed:
                span.set_attribute("plansmith.run.resumed", True)
        elif isinstance(event, PlanReady | AwaitingApproval | PlanApproved | Replanned):
            if isinstance(event, PlanReady | Replanned) and event.bound:
                for s in bound_from_dict(event.bound).steps:
                    self._after[(event.run_id, s.id)] = s.after
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

    def _forget(self, run_id: str) -> None:
        """Drop what the view keeps about a run once it ends (a view may outlive runs)."""
        for table in (self._after, self._last, self._attempt, self._next):
            for key in [k for k in table if k[0] == run_id]:
                del table[key]
        for k in [k for k, where in self._keys.items() if where[0] == run_id]:
            del self._keys[k]
        self._failed.pop(run_id, None)

    def _step_event(self, event: StepEvent) -> None:
        key = (event.run_id, event.step)
        if isinstance(event, StepStarted):
            self._end_step(key, event, "superseded")
            self._next.pop(key, None)
            if event.key:
                self._keys[event.key] = key
            self._start(key, event, event.attempt, _time_ns(event))
            return
        span = self._steps.get(key) or self._start_next(key, event.attempt)
        if span is None:
            return
        if isinstance(event, StepSucceeded):
            span.set_attribute("plansmith.step.duration_ms", event.duration_ms)
            span.set_status(self._trace.Status(self._trace.StatusCode.OK))
        elif isinstance(event, StepSkipped):  # no call: a value it reads is absent
            span.set_attribute("plansmith.step.skipped", event.reason)
            span.set_status(self._trace.Status(self._trace.StatusCode.OK))
        elif isinstance(event, StepFailed | StepRetrying):
            if isinstance(event, StepFailed):
                span.set_attribute("plansmith.step.duration_ms", event.duration_ms)
                self._failed.setdefault(event.run_id, []).append(event.step)
            span.set_attribute("plansmith.step.error_class", event.error_class)
            span.set_attribute("plansmith.step.retrying", isinstance(event, StepRetrying))
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.error_class))
            if isinstance(event, StepRetrying):
                start = _time_ns(event)
                delay = int(event.delay_s * 1e9) if start is not None else 0
                self._next[key] = (event, None if start is None else start + delay)
        else:  # StepProgress and the like: not an end; keep the span open
            return
        del self._steps[key]
        span.end(end_time=_time_ns(event))

    def _start(self, key: tuple[str, str], event: StepEvent, attempt: int, at: int | None) -> Span:
        """Open the span of ``key``'s ``attempt``: a child of the run span, linked to the
        spans of the steps it comes after and to its previous attempt."""
        links: list[Link] = []
        for before in self._after.get(key, ()):
            context = self._last.get((key[0], before))
            if context is not None:
                links.append(self._link(context, "after", before))
        previous = self._last.get(key)
        if previous is not None:
            links.append(self._link(previous, "previous_attempt", key[1]))
        parent = self._trace.set_span_in_context(self._run_span(event))
        span = self._tracer.start_span(
            f"plansmith.step {event.action}",
            context=parent,
            attributes={
                "plansmith.run.id": event.run_id,
                "plansmith.step.id": event.step,
                "plansmith.step.action": event.action,
                "plansmith.step.args": [str(a) for a in event.args],
                "plansmith.step.server": event.server,
                "plansmith.step.tool": event.tool,
                "plansmith.step.attempt": attempt,
            },
            links=links,
            start_time=at,
        )
        self._steps[key] = span
        self._attempt[key] = attempt
        self._last[key] = span.get_span_context()
        return span

    def _link(self, context: SpanContext, kind: str, step: str) -> Link:
        link: Link = self._trace.Link(context, {"plansmith.link": kind, "plansmith.step.id": step})
        return link

    def _start_next(self, key: tuple[str, str], attempt: int) -> Span | None:
        """The span of the attempt after a ``StepRetrying``, opened on first need."""
        pending = self._next.get(key)
        if pending is None or pending[0].attempt + 1 != attempt:
            return None
        del self._next[key]
        retrying, at = pending
        return self._start(key, retrying, attempt, at)

    def _end_step(self, key: tuple[str, str], event: Event, why: str) -> None:
        span = self._steps.pop(key, None)
        if span is not None:
            span.set_attribute("plansmith.step.ended_by", why)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, why))
            span.end(end_time=_time_ns(event))

    def _end_run(self, event: Event, state: str, reason: str | None, *, ok: bool) -> None:
        if event.run_id in self._ended:
            return
        self._ended.add(event.run_id)
        for key in [k for k in self._steps if k[0] == event.run_id]:
            self._end_step(key, event, f"run {state}")
        failed = self._failed.get(event.run_id, [])
        self._forget(event.run_id)
        span = self._run_span(event)
        del self._runs[event.run_id]
        span.set_attribute("plansmith.run.state", state)
        # a failed run's reason quotes its steps' messages, which may hold secrets (as
        # results and inputs may): its failed steps are named instead
        if reason and state == "cancelled":
            span.set_attribute("plansmith.run.reason", reason)
        if failed:
            span.set_attribute("plansmith.run.failed_steps", list(dict.fromkeys(failed)))
        code = self._trace.StatusCode.OK if ok else self._trace.StatusCode.ERROR
        span.set_status(self._trace.Status(code, None if ok else state))
        span.end(end_time=_time_ns(event))
