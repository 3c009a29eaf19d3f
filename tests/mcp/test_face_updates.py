"""Run progress as resource updates: a host listening for ``plansmith://runs/{id}`` is
told of each event of the run, and reads the events so far from ``.../events``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(service: Any) -> Any:
    from mcp import Client

    from plansmith.mcp import build_face_server

    return Client(build_face_server(service, env={}))


async def _events(client: Any, run_id: str) -> list[dict[str, Any]]:
    text = (await client.read_resource(f"plansmith://runs/{run_id}/events")).contents[0].text
    events: list[dict[str, Any]] = json.loads(text)
    return events


def _archive_started(events: list[dict[str, Any]]) -> bool:
    return any(e["type"] == "StepStarted" and e["action"] == "archive" for e in events)


async def test_a_listening_host_is_told_of_each_event_until_the_run_ends(
    counter_url: str, tmp_path: Path
) -> None:
    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        # the archive step sleeps 600 s: the run is in flight until it is cancelled
        _, run_id = await fh.plan_approve_run(client, goal=["archived(d1)"])
        uri = f"plansmith://runs/{run_id}"
        updated: list[str] = []
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            updates = aiter(subscription)
            with anyio.fail_after(60):
                while not _archive_started(await _events(client, run_id)):
                    updated.append((await anext(updates)).uri)  # the run's next event
                before = len(await _events(client, run_id))
                await fh.call(client, "cancel_run", {"run_id": run_id})
                updated.append((await anext(updates)).uri)  # an update is waiting
                events = await _events(client, run_id)
    assert updated  # at least the update the cancel made
    assert set(updated) == {uri}  # only the run listened for
    assert len(events) > before  # the cancel added events, each announced
    assert events[-1]["type"] == "RunFinished"
    assert events[-1]["state"] == "cancelled"
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


async def test_the_events_of_another_sessions_run_are_not_found(
    counter_url: str, tmp_path: Path
) -> None:
    from mcp.shared.exceptions import MCPError

    async with _client(fh.make_service(tmp_path, url=counter_url)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("plansmith://runs/r-000000000000/events")
    assert "RunNotFoundError" in str(caught.value)
