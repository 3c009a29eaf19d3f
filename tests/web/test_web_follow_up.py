"""The web's "continue from here": POST /api/runs with ``after`` makes a follow-up run,
planned from the final state of a finished run; its steps read that run's outputs and do
not call its steps again (the counter server logs each call of ``work``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _web_helpers import asgi_client, sse_events, write_domains

from _shared_servers import problem_text
from plansmith.engine import Engine
from plansmith.execution import StepSucceeded
from plansmith.web import WebSettings, create_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    domains = write_domains(tmp_path, sizes=(2,), COUNTER_LOG=str(tmp_path / "calls.jsonl"))
    (domains / "docs" / "problem-summarised.yaml").write_text(
        problem_text(2, goal="summarised(d0), summarised(d1)")
    )
    app = create_app(WebSettings(home=tmp_path / "home", domains=domains))
    async with asgi_client(app) as c:
        yield c
    await app.state.controller.aclose()


async def _approved_to_the_end(client: httpx.AsyncClient, run: dict[str, Any]) -> list[Any]:
    """Approve the run's plan and read its SSE stream to its end: its events' JSON."""
    response = await client.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert response.status_code == 202, response.text
    with anyio.fail_after(60):
        response = await client.get(f"/api/runs/{run['run_id']}/events")
    return [json.loads(e["data"]) for e in sse_events(response.text)]


def _work_calls(tmp_path: Path) -> int:
    return len((tmp_path / "calls.jsonl").read_text().splitlines())


async def test_continue_from_here_makes_a_follow_up_that_calls_no_parent_step_again(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    made = await client.post("/api/runs", json={"domain": "docs", "problem": "problem-summarised"})
    assert made.status_code == 201, made.text
    parent = made.json()
    events = await _approved_to_the_end(client, parent)
    assert events[-1]["state"] == "succeeded"
    assert _work_calls(tmp_path) == 2

    body = {"domain": "docs", "problem": "problem-2", "after": parent["run_id"]}
    made = await client.post("/api/runs", json=body)
    assert made.status_code == 201, made.text
    child = made.json()
    assert child["after"] == parent["run_id"]
    assert child["status"] == "awaiting approval"
    assert {s["action"] for s in child["steps"]} == {"index"}  # summarise holds already
    assert sorted(i["producer"] for i in child["inherited"]) == [
        f"{parent['run_id']}/s1",
        f"{parent['run_id']}/s2",
    ]
    events = await _approved_to_the_end(client, child)
    assert events[-1]["state"] == "succeeded", events[-1]
    assert _work_calls(tmp_path) == 2  # the parent's steps were not called again
    engine = Engine(tmp_path / "home")  # the outputs: read from the parent by reference
    logged = engine.log.events(child["run_id"])
    engine.close()
    outputs = [e.outputs["value"] for e in logged if isinstance(e, StepSucceeded)]  # type: ignore[index]
    assert sorted(outputs) == ["d0!", "d1!"]

    report = (await client.get(f"/api/runs/{child['run_id']}/report")).json()
    assert report["after"] == parent["run_id"]
    assert len(report["inherited"]) == 2
    page = await client.get(f"/runs/{child['run_id']}")
    assert 'id="after-link"' in page.text
    assert 'id="continue"' in page.text


async def test_continue_from_a_bad_run_is_refused_and_records_nothing(
    client: httpx.AsyncClient,
) -> None:
    made = await client.post("/api/runs", json={"domain": "docs", "problem": "problem-2"})
    waiting = made.json()["run_id"]  # awaits approval: not finished
    before = (await client.get("/api/runs")).json()
    for after, said in (("no-such-run", "is not in the run log"), (waiting, "has not finished")):
        body = {"domain": "docs", "problem": "problem-2", "after": after}
        response = await client.post("/api/runs", json=body)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["type"] == "InputError"
        assert said in error["message"]
        assert error["hint"]
    response = await client.post(
        "/api/plan", json={"domain": "docs", "problem": "problem-2", "after": waiting}
    )
    assert response.status_code == 422  # only a run follows up a run
    assert (await client.get("/api/runs")).json() == before
