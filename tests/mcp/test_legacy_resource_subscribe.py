"""Run progress for a host on protocol 2025-11-25 (the ``initialize`` handshake): it
``resources/subscribe``s to a run's resources and is sent ``notifications/resources/
updated`` as the run goes on, up to its end; ``resources/unsubscribe`` stops them; an
unknown URI is a typed error. In process and over stdio (``plansmith mcp``), with the
SDK ``Client(mode="legacy")``. The tests wait on the notifications, never on a clock."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import _face_helpers as fh
import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from test_face_transports import _args

pytestmark = pytest.mark.anyio
counter_url = fh.counter_url

Handler = Callable[[Any], Awaitable[None]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def _updates() -> Iterator[tuple[Handler, MemoryObjectReceiveStream[str]]]:
    """A ``message_handler`` that passes on the URI of each resource-updated notification."""
    from mcp.types import ResourceUpdatedNotification

    send, receive = anyio.create_memory_object_stream[str](10_000)

    async def handler(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            send.send_nowait(message.params.uri)

    with send, receive:
        yield handler, receive


def _uris(run_id: str) -> tuple[str, str]:
    return f"plansmith://runs/{run_id}", f"plansmith://runs/{run_id}/events"


async def _subscribe(client: Any, uri: str) -> None:
    from mcp.shared.exceptions import MCPDeprecationWarning

    with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
        await client.subscribe_resource(uri)


async def _unsubscribe(client: Any, uri: str) -> None:
    from mcp.shared.exceptions import MCPDeprecationWarning

    with pytest.warns(MCPDeprecationWarning, match="resources/unsubscribe"):
        await client.unsubscribe_resource(uri)


async def _held_run(client: Any, goal: str) -> str:
    """A planned and approved run, not started yet (``make_plan`` made it)."""
    plan = await fh.call(client, "make_plan", {"domain": "docs", "goal": [goal]})
    assert plan["status"] == "planned", plan
    await fh.call(client, "approve_plan", {"plan_hash": plan["plan_hash"]})
    run_id: str = plan["run_id"]
    return run_id


async def _start(client: Any, run_id: str) -> None:
    plan_hash = (await fh.call(client, "get_run_status", {"run_id": run_id}))["plan_hash"]
    started = await fh.call(client, "start_run", {"plan_hash": plan_hash})
    assert started["run_id"] == run_id


async def _events(client: Any, run_id: str) -> list[dict[str, Any]]:
    text = (await client.read_resource(f"plansmith://runs/{run_id}/events")).contents[0].text
    events: list[dict[str, Any]] = json.loads(text)
    return events


async def _until_end(
    client: Any, updates: MemoryObjectReceiveStream[str], run_id: str, seen: list[str]
) -> list[dict[str, Any]]:
    """Take the updates (into ``seen``), reading the run's events after each, until they
    end with the run's end; the events."""
    with anyio.fail_after(120):
        while True:
            seen.append(await updates.receive())
            events = await _events(client, run_id)
            if events and events[-1]["type"] == "RunFinished":
                return events


async def _legacy_flow(client: Any, updates: MemoryObjectReceiveStream[str]) -> None:
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    assert client.protocol_version == "2025-11-25"
    resources = client.server_capabilities.resources
    assert resources is not None
    assert resources.subscribe is True
    seen: list[str] = []

    # a run whose report was unsubscribed before it started: only its events are updated
    first = await _held_run(client, "indexed(d1)")
    first_report, first_events = _uris(first)
    await _subscribe(client, first_report)
    await _subscribe(client, first_events)
    await _unsubscribe(client, first_report)
    await _start(client, first)
    events = await _until_end(client, updates, first, seen)
    assert events[-1]["state"] == "succeeded", events[-1]

    # a run subscribed to both: both are updated, up to the run's end. Its updates come
    # after every update of the first run (one sender a connection, in order), so by its
    # end the first run's report would have been announced had it been sent.
    second = await _held_run(client, "summarised(d2)")
    second_report, second_events = _uris(second)
    await _subscribe(client, second_report)
    await _subscribe(client, second_events)
    await _start(client, second)
    events = await _until_end(client, updates, second, seen)
    with anyio.fail_after(120):
        while second_report not in seen or second_events not in seen:
            seen.append(await updates.receive())  # both URIs are updated with each event
    assert events[-1]["state"] == "succeeded", events[-1]
    assert {"StepStarted", "StepSucceeded"} <= {e["type"] for e in events}
    assert first_events in seen
    assert first_report not in seen  # unsubscribed: never announced
    assert set(seen) <= {first_events, second_report, second_events}
    await _unsubscribe(client, second_report)
    await _unsubscribe(client, second_events)
    await _unsubscribe(client, second_events)  # again: nothing to do, no error

    # a URI that names nothing, or a run that is not there, is a typed error
    for uri, expected in [
        ("plansmith://runs/r-000000000000", "RunNotFoundError"),
        ("plansmith://runs/r-000000000000/events", "RunNotFoundError"),
        ("plansmith://domains/nosuch", "no domain named 'nosuch'"),
        ("file:///etc/passwd", "InputError: unknown resource 'file:///etc/passwd'"),
    ]:
        with pytest.raises(MCPError) as caught:
            await _subscribe(client, uri)
        assert caught.value.code == INVALID_PARAMS
        assert expected in caught.value.message, caught.value.message
    await _subscribe(client, "plansmith://domains/docs")  # there; never changes


async def test_in_process_legacy_host_is_told_of_a_run_until_its_end(
    counter_url: str, tmp_path: Path
) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    server = build_face_server(fh.make_service(tmp_path, url=counter_url), env={})
    with _updates() as (handler, updates):
        async with Client(server, mode="legacy", message_handler=handler) as client:
            await _legacy_flow(client, updates)


async def test_stdio_legacy_host_is_told_of_a_run_until_its_end(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters, stdio_client

    env = {"PYTHONPATH": os.pathsep.join(sys.path), "PLANSMITH_LLM_BASE_URL": ""}
    params = StdioServerParameters(command=sys.executable, args=_args(tmp_path), env=env)
    with (
        anyio.fail_after(180),
        (tmp_path / "stderr.log").open("w") as errlog,
        _updates() as (handler, updates),
    ):
        async with Client(
            stdio_client(params, errlog=errlog),
            mode="legacy",
            message_handler=handler,
            read_timeout_seconds=120,
        ) as client:
            await _legacy_flow(client, updates)


async def test_a_modern_host_still_listens(counter_url: str, tmp_path: Path) -> None:
    from mcp import Client

    from plansmith.mcp import build_face_server

    server = build_face_server(fh.make_service(tmp_path, url=counter_url), env={})
    async with Client(server) as client:  # 2026-07-28
        assert client.protocol_version == "2026-07-28"
        resources = client.server_capabilities.resources
        assert resources is not None
        assert resources.subscribe is True  # through subscriptions/listen
        run_id = await _held_run(client, "indexed(d1)")
        report, _ = _uris(run_id)
        async with client.listen(resource_subscriptions=[report]) as subscription:
            updates = aiter(subscription)
            await _start(client, run_id)
            with anyio.fail_after(120):
                while (await _events(client, run_id))[-1]["type"] != "RunFinished":
                    assert (await anext(updates)).uri == report
