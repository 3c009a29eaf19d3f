"""Server-sent events of a run: each event of the durable log, once, in seq order.

The event id is the event's ``seq``. A client that reconnects with
``Last-Event-ID: N`` gets the events after ``N`` (from the live feed, which holds
every event of the log), so it sees each event exactly once. The stream ends after
``RunFinished`` (or when the server stops); comments keep an idle connection open.

Each stream moves a run view (``RunView``) on by each event and sends with it the
steps the event changed, as the API shows them (``changed``): the page draws them as
they are, and folds nothing itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio

from plansmith.execution import (
    Event,
    PlanReady,
    Replanned,
    RunFinished,
    RunView,
    StepEvent,
    StepFailed,
    StepSkipped,
    StepSucceeded,
)
from plansmith.web._feed import Feed
from plansmith.web._views import step_json

__all__ = ["event_payload", "format_sse", "sse_stream", "KEEPALIVE_S"]

KEEPALIVE_S = 15.0
_DROP = ("result", "outputs", "plan", "bound")


def event_payload(event: Event, view: RunView) -> dict[str, Any]:
    """The JSON of ``event`` for a page: large fields dropped, step timing added, and the
    steps it changed. ``view`` is moved on by ``event`` here."""
    changed = view.apply(event)
    data: dict[str, Any] = {k: v for k, v in event.to_dict().items() if k not in _DROP}
    if isinstance(event, PlanReady | Replanned):
        data["steps"] = len(cast(list[Any], event.bound.get("steps") or []))
    if isinstance(event, StepEvent):
        data["started"] = view.steps[event.step].started
        ended = isinstance(event, StepSucceeded | StepFailed | StepSkipped)
        data["ended"] = event.time if ended else None
        data.setdefault("duration_ms", None)
    data["changed"] = [step_json(view.steps[i], view) for i in changed]
    return data


def format_sse(event: Event, payload: dict[str, Any]) -> str:
    body = json.dumps(payload, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.type}\ndata: {body}\n\n"


async def sse_stream(
    feed: Feed, after: int, *, keepalive_s: float = KEEPALIVE_S
) -> AsyncIterator[str]:
    """The SSE text of ``feed``'s events after seq ``after``, live until the run ends."""
    view = RunView()
    index = 0
    yield "retry: 1000\n\n"
    while True:
        events = feed.events
        while index < len(events):
            event = events[index]
            index += 1
            if event.seq > after:
                after = event.seq
                yield format_sse(event, event_payload(event, view))
            else:  # sent before: the view is moved on all the same
                view.apply(event)
            if isinstance(event, RunFinished):
                return
        signal = feed.signal
        if index < len(feed.events):
            continue
        if feed.closed:  # no more events will come from this process
            return
        with anyio.move_on_after(keepalive_s) as scope:
            await signal.wait()
        if scope.cancelled_caught:
            yield ": keepalive\n\n"
