"""Run progress as resource updates: ``plansmith://runs/{id}`` changes with each event.

A host that listens (``subscriptions/listen``, protocol 2026-07-28) for a run's
resource is told each time the run records an event: a step started, finished or
failed, a replan, the run's end. It then reads the resource again (the report) or
``plansmith://runs/{id}/events`` (the events so far), instead of polling
``get_run_status``. Every run this face starts or resumes is followed, from the
table's feed (the one stream the other views read), for as long as the face serves.
The first update is sent when the following starts (the run was just started), so a
host that subscribed before ``start_run`` sees the run's end even if the run ends
before its events are followed.

A host on protocol 2025-11-25 subscribes with ``resources/subscribe`` instead: see
``_legacy_updates``, which sends the same updates from the same bus.
"""

from __future__ import annotations

from anyio.abc import TaskGroup
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from plansmith.engine import RunTable
from plansmith.mcp._legacy_updates import LegacySubscriptions

__all__ = ["RunUpdates", "run_uri", "events_uri"]


def run_uri(run_id: str) -> str:
    return f"plansmith://runs/{run_id}"


def events_uri(run_id: str) -> str:
    return f"plansmith://runs/{run_id}/events"


class RunUpdates:
    """Publishes an update of a run's resources for each event of the runs it follows.

    ``bus`` is the face server's subscription bus; ``start`` gives it the task group
    that lives as long as the face (the server's lifespan), ``follow`` adds a run.
    ``legacy`` (the face's ``resources/subscribe``) is started with it.
    """

    def __init__(
        self, bus: InMemorySubscriptionBus, legacy: LegacySubscriptions | None = None
    ) -> None:
        self.bus = bus
        self.legacy = legacy
        self._following: set[str] = set()
        self._group: TaskGroup | None = None

    def start(self, group: TaskGroup) -> None:
        self._group = group
        if self.legacy is not None:
            self.legacy.start(group)

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
            await self._updated(run_id)  # started: what it recorded so far is there to read
            async for _ in table.subscribe(run_id, after):
                await self._updated(run_id)
        finally:
            self._following.discard(run_id)

    async def _updated(self, run_id: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=run_uri(run_id)))
        await self.bus.publish(ResourceUpdated(uri=events_uri(run_id)))
