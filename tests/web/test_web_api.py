"""The HTTP API over a real engine and the counter MCP server (ASGI transport, no socket)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _web_helpers import SLOW_BINDINGS, ServerThread, settings, sse_events, write_domains

from _shared_servers import INDEX, SUMMARISE, action, binding, docs_domain
from plansmith.domains.folders import GTPYHOP_READINESS, shipped_domain_dirs
from plansmith.web import WebSettings, create_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings(tmp_path))
    async with await _client(app) as c:
        yield c
    await app.state.controller.aclose()


async def _finish(client: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    """Read the run's SSE stream to its end; the events' JSON."""
    with anyio.fail_after(60):
        response = await client.get(f"/api/runs/{run_id}/events")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return [json.loads(e["data"]) for e in sse_events(response.text)]


async def test_domains_lists_each_folder_with_its_problems(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/domains")
    assert response.status_code == 200
    assert response.json() == [
        {
            "name": "docs",
            "domain_file": "domain.yaml",
            "problems": ["problem-2", "problem-3"],
            "runnable": True,
            "kind": "file",
            "readiness": {"ready": True, "reason": "", "fix": "", "notes": []},
            "goals": [],
            "inputs": [],
        }
    ]


async def test_plan_returns_the_plan_json_and_its_hash(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/plan", json={"domain": "docs", "problem": "problem-3"})
    assert response.status_code == 200
    body = response.json()
    assert body["steps"] == 6
    assert body["plan"]["hash"] == body["plan_hash"]
    assert {s["action"] for s in body["plan"]["steps"]} == {"summarise", "index"}


async def test_unknown_problem_is_a_422_with_a_reason_and_hint(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/plan", json={"domain": "docs", "problem": "nope"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["type"] == "InputError"
    assert "nope" in error["message"]
    assert "problem-2" in error["hint"]


async def test_invalid_names_and_bodies_are_rejected_before_any_work(
    client: httpx.AsyncClient,
) -> None:
    bad = [
        {"domain": "../etc", "problem": "x"},
        {"domain": "docs"},
        {"domain": "docs", "problem": "problem-2", "extra": 1},
    ]
    for body in bad:
        response = await client.post("/api/plan", json=body)
        assert response.status_code == 422
        assert response.json()["error"]["type"] == "RequestValidationError"
    response = await client.post(
        "/api/plan", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


async def test_missing_run_is_404_and_malformed_run_id_is_422(client: httpx.AsyncClient) -> None:
    missing = await client.get("/api/runs/r-000000000000")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "RunNotFoundError"
    malformed = await client.get("/api/runs/..%2F..%2Fetc")
    assert malformed.status_code in (404, 422)
    assert (await client.get("/api/runs/a%20b")).status_code == 422


async def test_run_waits_for_approval_then_runs_every_step(client: httpx.AsyncClient) -> None:
    created = await client.post("/api/runs", json={"domain": "docs", "problem": "problem-2"})
    assert created.status_code == 201
    run = created.json()
    assert run["status"] == "awaiting approval"
    assert [s["state"] for s in run["steps"]] == ["pending"] * 4
    assert {(s["server"], s["tool"]) for s in run["steps"]} == {
        ("counter", "work"),
        ("counter", "echo"),
    }
    run_id = run["run_id"]

    wrong = await client.post(
        f"/api/runs/{run_id}/approve", json={"plan_hash": "sha256:" + "0" * 64}
    )
    assert wrong.status_code == 409
    assert run["plan_hash"] in wrong.json()["error"]["hint"]

    approved = await client.post(
        f"/api/runs/{run_id}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202
    events = await _finish(client, run_id)
    assert events[-1]["type"] == "RunFinished"
    assert events[-1]["state"] == "succeeded"

    detail = (await client.get(f"/api/runs/{run_id}")).json()
    assert detail["status"] == "succeeded"
    assert detail["approved_by"] == "person"
    assert [s["state"] for s in detail["steps"]] == ["succeeded"] * 4
    assert all(s["duration_ms"] > 0 for s in detail["steps"])

    report = (await client.get(f"/api/runs/{run_id}/report")).json()
    assert report["counts"]["succeeded"] == 4
    assert {(t["tool"], t["calls"]) for t in report["by_tool"]} == {("work", 2), ("echo", 2)}
    assert report["wall_ms"] > 0

    runs = (await client.get("/api/runs")).json()
    assert runs[0]["run_id"] == run_id
    assert runs[0]["status"] == "succeeded"
    again = await client.post(f"/api/runs/{run_id}/approve", json={"plan_hash": run["plan_hash"]})
    assert again.status_code == 409


#: ``summarise`` always fails (``fail`` is not retried); ``summarise_alt`` does its work
REPLANNED_DOMAIN = docs_domain(
    SUMMARISE,
    action("summarise_alt", "exists(d), not summarised(d)", "summarised(d)", "read", cost=5),
    INDEX,
)
REPLANNED_BINDINGS = (
    "bindings:\n"
    + binding("summarise", "fail", '{message: "summariser down"}')
    + binding("summarise_alt", "work", '{name: "alt-${d}"}', '{done: "$.structured.done"}')
    + binding("index", "echo", '{x: "${d}"}', '{value: "$.structured.value"}')
)


async def test_the_report_lists_the_failed_step_of_a_replaced_plan(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=REPLANNED_BINDINGS)
    (root / "docs" / "domain.yaml").write_text(REPLANNED_DOMAIN)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    async with await _client(app) as client:
        run = await client.post("/api/runs", json={"domain": "docs", "problem": "problem-1"})
        run_id, plan_hash = run.json()["run_id"], run.json()["plan_hash"]
        await client.post(f"/api/runs/{run_id}/approve", json={"plan_hash": plan_hash})
        assert [e["type"] for e in await _finish(client, run_id)].count("Replanned") == 1
        report = (await client.get(f"/api/runs/{run_id}/report")).json()
    await app.state.controller.aclose()
    assert report["status"] == "succeeded"
    steps = [(s["id"], s["action"], s["state"]) for s in report["steps"]]
    assert steps == [  # every step that ran, in order; s2 (index) never ran: replaced
        ("s1", "summarise", "failed"),
        ("r1.s1", "summarise_alt", "succeeded"),
        ("r1.s2", "index", "succeeded"),
    ]
    assert report["failures"] == [
        {"step": "s1", "action": "summarise", "error": "tool_error: summariser down"}
    ]
    [replan] = report["replans"]
    assert (replan["failed"], replan["new_steps"]) == (["s1"], ["r1.s1", "r1.s2"])
    counts = report["counts"]
    assert (counts["failed"], counts["dropped"], counts["succeeded"]) == (1, 1, 2)


def _run_to_its_first_step(client: httpx.Client) -> str:
    """Create and approve a run of problem-1; return its id once a step has started."""
    run = client.post("/api/runs", json={"domain": "docs", "problem": "problem-1"}).json()
    client.post(f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]})
    with client.stream("GET", f"/api/runs/{run['run_id']}/events") as stream:
        for line in stream.iter_lines():
            if line == "event: StepStarted":
                break
    return str(run["run_id"])


def test_cancel_stops_a_running_step_and_records_it(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        run_id = _run_to_its_first_step(client)
        cancelled = client.post(f"/api/runs/{run_id}/cancel", json={"reason": "stop"})
        assert cancelled.status_code == 202
        assert cancelled.json()["status"] == "cancelled"
        events = [
            json.loads(e["data"]) for e in sse_events(client.get(f"/api/runs/{run_id}/events").text)
        ]
        assert [e["type"] for e in events[-2:]] == ["RunCancelled", "RunFinished"]
        # the stream sends the steps an event changed, as the API shows them
        assert [(s["id"], s["state"]) for s in events[-2]["changed"]] == [("s1", "cancelled")]
        assert events[-1]["state"] == "cancelled"
        assert events[-1]["reason"] == "stop"  # the runner records the reason given
        detail = client.get(f"/api/runs/{run_id}").json()
        assert detail["steps"][0]["state"] == "cancelled"  # started, cancelled with the run
        assert client.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 409


def test_stopping_the_server_cancels_its_runs_with_that_reason(tmp_path: Path) -> None:
    from plansmith.execution import SqliteRunLog

    root = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        run_id = _run_to_its_first_step(client)
    log = SqliteRunLog(tmp_path / "home" / "runs.db")  # the server has stopped
    ends = [(e.type, getattr(e, "reason", None)) for e in log.events(run_id)[-2:]]
    log.close()
    assert ends == [
        ("RunCancelled", "the web server stopped"),
        ("RunFinished", "the web server stopped"),
    ]


async def test_cancel_of_a_run_awaiting_approval_ends_it(client: httpx.AsyncClient) -> None:
    run = (await client.post("/api/runs", json={"domain": "docs", "problem": "problem-2"})).json()
    # bodyless, but sent as JSON (a POST that is not is a 415: test_web_csrf.py)
    response = await client.post(
        f"/api/runs/{run['run_id']}/cancel", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 202
    detail = (await client.get(f"/api/runs/{run['run_id']}")).json()
    assert detail["status"] == "cancelled"
    approve = await client.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approve.status_code == 409


async def test_cancel_of_a_finished_run_is_a_409_that_changes_nothing(
    client: httpx.AsyncClient,
) -> None:
    run = (await client.post("/api/runs", json={"domain": "docs", "problem": "problem-2"})).json()
    run_id = run["run_id"]
    approved = await client.post(
        f"/api/runs/{run_id}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202
    assert (await _finish(client, run_id))[-1]["state"] == "succeeded"
    before = (await client.get(f"/api/runs/{run_id}")).json()

    for body in ({"reason": "too late"}, {}):
        response = await client.post(f"/api/runs/{run_id}/cancel", json=body)
        assert response.status_code == 409, response.text
        assert response.headers["content-type"].startswith("application/json")
        error = response.json()["error"]
        assert error["type"] == "ExecutionError"
        assert error["message"] == (
            f"run {run_id} has finished (succeeded): it cannot be cancelled"
        )
        assert f"/api/runs/{run_id}/report" in error["hint"]
    after = (await client.get(f"/api/runs/{run_id}")).json()
    assert after["status"] == "succeeded"
    assert after["last_seq"] == before["last_seq"]  # nothing was recorded


async def test_token_is_required_as_bearer_or_query_when_set(tmp_path: Path) -> None:
    app = create_app(settings(tmp_path, token="s3cret"))
    async with await _client(app) as client:
        assert (await client.get("/api/domains")).status_code == 401
        wrong = await client.get("/api/domains", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = await client.get("/api/domains", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert (await client.get("/api/domains?token=s3cret")).status_code == 200
        assert (await client.get("/")).status_code == 200  # pages hold no data
    await app.state.controller.aclose()


async def test_foreign_host_names_are_refused_on_loopback(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/domains", headers={"Host": "evil.example"})
    assert response.status_code == 400


async def test_pages_and_static_assets_are_served_without_a_cdn(client: httpx.AsyncClient) -> None:
    for path in (
        "/",
        "/runs",
        "/plan?domain=docs&problem=problem-2",
        "/runs/r-1/plan",
        "/runs/r-1",
    ):
        response = await client.get(path)
        assert response.status_code == 200, path
        assert "http" not in response.text.split("<main>")[0].replace("http-equiv", "")
        for src in ("/static/common.js", "/static/dag.js", "/static/app.css"):
            assert src in response.text
    assert (await client.get("/static/dag.js")).status_code == 200
    assert (await client.get("/runs/bad%20id")).status_code == 422


async def test_openapi_schema_lists_every_operation(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    paths = set(schema["paths"])
    assert {
        "/api/domains",
        "/api/plan",
        "/api/check",
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/approve",
        "/api/runs/{run_id}/cancel",
        "/api/runs/{run_id}/report",
        "/api/runs/{run_id}/events",
    } <= paths


async def test_check_binds_every_step_against_the_live_server(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/check", json={"domain": "docs", "problem": "problem-2"})
    assert response.status_code == 200
    body = response.json()
    assert body["steps"] == 4
    assert {s["tool"] for s in body["bound"]["steps"]} == {"work", "echo"}


async def test_check_reports_binding_problems_as_422_with_details(tmp_path: Path) -> None:
    bindings = SLOW_BINDINGS.replace("tool: sleep", "tool: no_such_tool")
    root = write_domains(tmp_path, sizes=(1,), bindings=bindings)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    async with await _client(app) as client:
        response = await client.post("/api/check", json={"domain": "docs", "problem": "problem-1"})
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["type"] == "BindingError"
        assert any("no_such_tool" in d for d in [error["message"], *error["details"]])
    await app.state.controller.aclose()


async def test_a_server_that_does_not_start_is_a_424_and_a_failed_run(tmp_path: Path) -> None:
    root = write_domains(tmp_path, sizes=(1,), COUNTER_DIE_AT_START="1")
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    async with await _client(app) as client:
        response = await client.post("/api/runs", json={"domain": "docs", "problem": "problem-1"})
        assert response.status_code == 424
        assert response.json()["error"]["type"] == "ServerStartError"
        runs = (await client.get("/api/runs")).json()
        assert [r["status"] for r in runs] == ["failed"]
    await app.state.controller.aclose()


async def test_an_app_over_an_existing_engine_uses_its_run_log(tmp_path: Path) -> None:
    from plansmith.engine import Engine

    engine = Engine(tmp_path / "home")
    engine.log.create_run("r-old", "2026-01-01T00:00:00.000Z", {"domain": "d.yaml"})
    app = create_app(engine)
    async with await _client(app) as client:
        domains = (await client.get("/api/domains")).json()  # no --domains: the shipped ones
        made = ["bio-opentrons", "dna-extraction", "drug-target"]  # made by code, after
        assert [d["name"] for d in domains] == [p.name for p in shipped_domain_dirs()] + made
        assert [d["kind"] for d in domains][-3:] == ["made"] * 3
        assert "doc-pipeline" not in {d["name"] for d in domains}  # plan-only: not offered
        for d in domains:  # a domain that cannot run here says why and what fixes it
            assert d["runnable"] == d["readiness"]["ready"]
            assert d["runnable"] or (d["readiness"]["reason"] and d["readiness"]["fix"])
        plan = await client.post("/api/plan", json={"domain": "code", "problem": "problem"})
        assert plan.status_code == 200
        assert plan.json()["steps"] > 0
        assert (
            plan.json()["readiness"] == next(d for d in domains if d["name"] == "code")["readiness"]
        )
        runs = (await client.get("/api/runs")).json()
        assert [(r["run_id"], r["status"]) for r in runs] == [("r-old", "created")]
    await app.state.controller.aclose()


GTPYHOP_DOMAIN = """\
from gtpyhop import Domain, declare_actions, declare_task_methods

the_domain = Domain("bumps")

def bump(state, by):
    state.count = state.count + by
    return state

def m_twice(state, by):
    return [("bump", by), ("bump", by)]

declare_actions(bump)
declare_task_methods("twice", m_twice)
"""

GTPYHOP_PROBLEMS = """\
from gtpyhop import State

print("problems.py talks while it is imported")

def get_problems():
    return {
        "small": (State("s", count=0), [("twice", 1)]),
        "big": (State("s", count=0), [("twice", 5)]),
    }
"""


def _gtpyhop_folder(root: Path, name: str, problems: str = GTPYHOP_PROBLEMS) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "domain.py").write_text(GTPYHOP_DOMAIN)
    (folder / "problems.py").write_text(problems)


async def test_a_gtpyhop_folder_is_a_domain_whose_plans_show_but_do_not_run(
    tmp_path: Path,
) -> None:
    root = write_domains(tmp_path, sizes=(1,))
    _gtpyhop_folder(root, "bumps")
    _gtpyhop_folder(root, "broken", problems="raise RuntimeError('no problems today')\n")
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    async with await _client(app) as client:
        domains = {d["name"]: d for d in (await client.get("/api/domains")).json()}
        assert domains["bumps"] == {
            "name": "bumps",
            "domain_file": "domain.py",
            "problems": ["small", "big"],
            "runnable": False,
            "kind": "gtpyhop",
            "readiness": GTPYHOP_READINESS.to_dict(),
            "goals": [],
            "inputs": [],
        }
        assert domains["broken"]["problems"] == []  # its code fails: listed, nothing to plan
        assert domains["docs"]["kind"] == "file"
        response = await client.post("/api/plan", json={"domain": "bumps", "problem": "big"})
        assert response.status_code == 200
        body = response.json()
        assert (body["steps"], body["runnable"]) == (2, False)
        assert [s["action"] for s in body["plan"]["steps"]] == ["bump", "bump"]
        assert body["plan"]["hash"] == body["plan_hash"]
        refused = await client.post("/api/runs", json={"domain": "bumps", "problem": "big"})
        assert refused.status_code == 422
        assert "GTPyhop" in refused.json()["error"]["message"]
        assert (await client.get("/api/runs")).json() == []
    await app.state.controller.aclose()


def _logged_runs(home: Path, n: int) -> list[str]:
    """``n`` finished runs written straight into the run log at ``home``, oldest first."""
    from plansmith.execution import Emitter, RunFinished, SqliteRunLog

    log = SqliteRunLog(home / "runs.db")
    ids = [f"r-page{k:03d}" for k in range(n)]
    for k, run_id in enumerate(ids):
        log.create_run(run_id, f"2026-01-01T00:00:{k:02d}.000Z", {"domain": "d.yaml"})
        Emitter(log, run_id).emit(RunFinished(run_id=run_id, state="succeeded"))
    log.close()
    return ids


async def test_the_runs_list_comes_a_page_at_a_time_newest_first(tmp_path: Path) -> None:
    ids = _logged_runs(tmp_path / "home", 5)
    app = create_app(settings(tmp_path))
    async with await _client(app) as client:
        seen: list[str] = []
        query: dict[str, Any] = {"limit": 2}
        while True:
            page = (await client.get("/api/runs", params=query)).json()
            assert len(page) <= 2
            seen += [r["run_id"] for r in page]
            if len(page) < 2:
                break
            query["before"] = page[-1]["run_id"]
        assert seen == ids[::-1]
        assert [r["status"] for r in (await client.get("/api/runs")).json()] == ["succeeded"] * 5
        missing = await client.get("/api/runs", params={"before": "r-nothere"})
        assert missing.status_code == 404
        assert "r-nothere" in missing.json()["error"]["message"]
        for bad in ({"limit": 0}, {"limit": 1001}, {"before": "../x"}):
            assert (await client.get("/api/runs", params=bad)).status_code == 422, bad
    await app.state.controller.aclose()
