"""Server-sent events of a run: each event of the durable log, once, in seq order.

The event id is the event's ``seq``. A client that reconnects with
``Last-Event-ID: N`` gets the events after ``N`` (from the live feed, which holds
every event of the log), so it sees each event exactly once. The stream ends after
``RunFinished`` (or when the server stops); comments keep an idle connection open.
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
    StepEvent,
    StepFailed,
    StepSucceeded,
)
from plansmith.web._feed import Feed

__all__ = ["event_payload", "format_sse", "sse_stream", "KEEPALIVE_S"]

KEEPALIVE_S = 15.0
_DROP = ("result", "outputs", "plan", "bound")


def event_payload(event: Event, started: dict[str, str]) -> dict[str, Any]:
    """The JSON of ``event`` for a view: large fields dropped, step timing added.

    ``started`` maps step ids to the time of their latest start; it is updated.
    """
    data: dict[str, Any] = {k: v for k, v in event.to_dict().items() if k not in _DROP}
    if isinstance(event, PlanReady | Replanned):
        data["steps"] = len(cast(list[Any], event.bound.get("steps") or []))
    if isinstance(event, StepEvent):
        if event.type == "StepStarted":
            started[event.step] = event.time
        data["started"] = started.get(event.step)
        data["ended"] = event.time if isinstance(event, StepSucceeded | StepFailed) else None
        data.setdefault("duration_ms", None)
    return data


def format_sse(event: Event, payload: dict[str, Any]) -> str:
    body = json.dumps(payload, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.type}\ndata: {body}\n\n"


async def sse_stream(
    feed: Feed, after: int, *, keepalive_s: float = KEEPALIVE_S
) -> AsyncIterator[str]:
    """The SSE text of ``feed``'s events after seq ``after``, live until the run ends."""
    started: dict[str, str] = {}
    index = 0
    yield "retry: 1000\n\n"
    while True:
        events = feed.events
        while index < len(events):
            event = events[index]
            index += 1
            payload = event_payload(event, started)
            if event.seq > after:
                after = event.seq
                yield format_sse(event, payload)
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
