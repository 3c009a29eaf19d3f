"""The SSE stream: every event of the durable log once, across reconnects (Last-Event-ID)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _web_helpers import ServerThread, settings

from plansmith.execution import (
    RunFinished,
    RunStarted,
    SqliteRunLog,
    StepStarted,
    StepSucceeded,
)
from plansmith.web import Feed, create_app, sse_stream


def _read(
    client: httpx.Client, run_id: str, last: int | None, stop: str | None
) -> list[dict[str, Any]]:
    """Events from a new connection (after ``last``) until one of type ``stop`` (or the end)."""
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    got: list[dict[str, Any]] = []
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as stream:
        fields: dict[str, str] = {}
        for line in stream.iter_lines():
            if line:
                if not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    fields[key] = value
                continue
            if "data" in fields:
                event = json.loads(fields["data"])
                assert int(fields["id"]) == event["seq"]
                assert fields["event"] == event["type"]
                got.append(event)
                if event["type"] == stop:
                    break
            fields = {}
    return got


def test_reconnecting_with_last_event_id_gets_every_event_exactly_once(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        run = client.post("/api/runs", json={"domain": "docs", "problem": "problem-3"}).json()
        run_id = run["run_id"]
        first = _read(client, run_id, None, "AwaitingApproval")  # then the client goes away
        client.post(f"/api/runs/{run_id}/approve", json={"plan_hash": run["plan_hash"]})
        second = _read(client, run_id, first[-1]["seq"], "StepSucceeded")
        third = _read(client, run_id, second[-1]["seq"], None)
        last_seq = client.get(f"/api/runs/{run_id}").json()["last_seq"]
    seqs = [e["seq"] for e in first + second + third]
    assert seqs == list(range(1, last_seq + 1))
    assert third[-1]["type"] == "RunFinished"
    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    assert [e.type for e in log.events(run_id)] == [e["type"] for e in first + second + third]
    log.close()
    done = [e for e in second + third if e["type"] == "StepSucceeded"]
    assert len(done) == 6
    for event in done:
        assert event["step"]
        assert event["tool"] in ("work", "echo")
        assert event["server"] == "counter"
        assert event["started"] <= event["ended"] == event["time"]
        assert event["duration_ms"] > 0
        assert "result" not in event
        assert "outputs" not in event


def test_last_event_id_must_be_a_non_negative_integer(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        run = client.post("/api/runs", json={"domain": "docs", "problem": "problem-2"}).json()
        for bad in ("x", "-1"):
            response = client.get(
                f"/api/runs/{run['run_id']}/events", headers={"Last-Event-ID": bad}
            )
            assert response.status_code == 422
        assert client.get("/api/runs/r-missing/events").status_code == 404


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_stream_sends_live_events_after_the_given_seq_and_ends_with_the_run() -> None:
    def started(seq: int, step: str) -> StepStarted:
        return StepStarted(run_id="r", seq=seq, time=f"t{seq}", step=step, action="a")

    feed = Feed([RunStarted(run_id="r", seq=1, time="t1"), started(2, "s1")])
    received: list[str] = []

    async def consume() -> None:
        received.extend([chunk async for chunk in sse_stream(feed, 1, keepalive_s=30)])

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await anyio.wait_all_tasks_blocked()
            feed.push(started(2, "s1"))  # a duplicate is ignored
            feed.push(
                StepSucceeded(run_id="r", seq=3, time="t3", step="s1", action="a", duration_ms=5.0)
            )
            feed.push(RunFinished(run_id="r", seq=4, time="t4"))
    ids = [c.split("\n")[0] for c in received if c.startswith("id:")]
    assert ids == ["id: 2", "id: 3", "id: 4"]
    succeeded = json.loads(received[2].split("data: ", 1)[1])
    assert succeeded["started"] == "t2"
    assert succeeded["ended"] == "t3"
    assert succeeded["duration_ms"] == 5.0
