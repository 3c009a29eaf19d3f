"""Run progress as resource updates: ``plansmith://runs/{id}`` changes with each event.

A host that listens (``subscriptions/listen``, protocol 2026-07-28) for a run's
resource is told each time the run records an event: a step started, finished or
failed, a replan, the run's end. It then reads the resource again (the report) or
``plansmith://runs/{id}/events`` (the events so far), instead of polling
``get_run_status``. Every run this face starts or resumes is followed, from the
table's feed (the one stream the other views read), for as long as the face serves.
"""

from __future__ import annotations

from anyio.abc import TaskGroup
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from plansmith.engine import RunTable

__all__ = ["RunUpdates", "run_uri", "events_uri"]


def run_uri(run_id: str) -> str:
    return f"plansmith://runs/{run_id}"


def events_uri(run_id: str) -> str:
    return f"plansmith://runs/{run_id}/events"


class RunUpdates:
    """Publishes an update of a run's resources for each event of the runs it follows.

    ``bus`` is the face server's subscription bus; ``start`` gives it the task group
    that lives as long as the face (the server's lifespan), ``follow`` adds a run.
    """

    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self.bus = bus
        self._following: set[str] = set()
        self._group: TaskGroup | None = None

    def start(self, group: TaskGroup) -> None:
        self._group = group

    def follow(self, table: RunTable, run_id: str) -> None:
        """Publish ``run_id``'s updates from now until it finishes (once per run)."""
        group = self._group
        if group is None or run_id in self._following:
            return
        self._following.add(run_id)
        group.start_soon(self._publish, table, run_id)

    async def _publish(self, table: RunTable, run_id: str) -> None:
        try:
            after = table.feed(run_id).last_seq
            async for _ in table.subscribe(run_id, after):
                await self.bus.publish(ResourceUpdated(uri=run_uri(run_id)))
                await self.bus.publish(ResourceUpdated(uri=events_uri(run_id)))
        finally:
            self._following.discard(run_id)
