"""``costs: "learned"`` of the web face (``/api/plan``, ``/api/check``, ``POST
/api/runs``): two tools reach one fact, the one declared cheaper is slow in practice (it
sleeps; the domain of the CLI's learned-costs test); once the run log holds runs of both,
the learned costs make the plan take the other, under another plan hash, and the answer
lists the costs learned and from how many runs. A run made with them records them (in
``asked`` and with the run) and runs the other tool. A ``costs`` that is neither
``declared`` nor ``learned`` is a 422, and so is ``learned`` for a domain made by code
or a GTPyhop folder. On the index page (Chromium), "costs: learned" makes the plan page
list the learned costs, and the run it creates is planned with them."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread, asgi_client, sse_events

from _shared_servers import servers_json
from plansmith.engine import COSTS_KEY, Engine, RunInputs
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = pytest.mark.anyio

_CLI_TEST = Path(__file__).resolve().parents[1] / "cli" / "test_stats_and_learned_costs.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _cli_test() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_learned_costs", _CLI_TEST)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(root: Path) -> Path:
    """``root/domains/fetch``: the fetch domain, its bindings (``fetch_slow`` sleeps 0.3
    s, ``fetch_quick`` echoes), the counter server, and the problems ``problem-any``
    (either tool reaches its goal), ``problem-slow`` and ``problem-quick`` (only that
    tool does)."""
    module = _cli_test()
    folder = root / "domains" / "fetch"
    folder.mkdir(parents=True)
    (folder / "domain.yaml").write_text(module.DOMAIN)
    (folder / "bindings.yaml").write_text(module.BINDINGS)
    (folder / "servers.json").write_text(servers_json())
    for name, goal in [("any", "done(c)"), ("slow", "via_slow(a)"), ("quick", "via_quick(b)")]:
        (folder / f"problem-{name}.yaml").write_text(module._problem(goal))
    return folder


async def _record(engine: Engine, folder: Path, *recorded: str) -> None:
    """A run of each problem ``recorded`` in ``engine``'s log."""
    with anyio.fail_after(120):
        for name in recorded:
            files = RunInputs(
                folder / "domain.yaml",
                folder / f"problem-{name}.yaml",
                folder / "servers.json",
                folder / "bindings.yaml",
            )
            outcome = await engine.run(files, approve=True)
            assert outcome.state == "succeeded", outcome.reason


async def _client(root: Path, *recorded: str) -> AsyncIterator[httpx.AsyncClient]:
    """The web app over an engine whose log holds a run of each problem ``recorded``."""
    folder = _folder(root)
    engine = Engine(root / "home")
    await _record(engine, folder, *recorded)
    app = create_app(engine, WebSettings(home=root / "home", domains=root / "domains"))
    async with asgi_client(app) as c:
        yield c
    await app.state.controller.aclose()


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The web app over a log of four runs: each tool's twice."""
    async for c in _client(tmp_path, "slow", "quick", "slow", "quick"):
        yield c


@pytest.fixture
async def empty(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The web app over an empty log."""
    async for c in _client(tmp_path):
        yield c


def _actions(body: dict[str, Any]) -> list[str]:
    return [s["action"] for s in body["plan"]["steps"]]


async def test_plan_with_learned_costs_takes_the_faster_tool_and_says_why(
    client: httpx.AsyncClient,
) -> None:
    declared = await client.post("/api/plan", json={"domain": "fetch", "problem": "problem-any"})
    assert declared.status_code == 200, declared.text
    assert _actions(declared.json()) == ["fetch_slow"]  # declared 1 < 2
    assert declared.json()["costs"] == "declared"
    assert declared.json()["learned_costs"] == []

    asked = {"domain": "fetch", "problem": "problem-any", "costs": "learned"}
    learned = await client.post("/api/plan", json=asked)
    assert learned.status_code == 200, learned.text
    body = learned.json()
    assert _actions(body) == ["fetch_quick"]
    assert body["costs"] == "learned"
    assert body["plan_hash"] != declared.json()["plan_hash"]  # the hash covers the costs
    costs = {c["action"]: c for c in body["learned_costs"]}
    assert set(costs) == {"fetch_slow", "fetch_quick"}
    slow, quick = costs["fetch_slow"], costs["fetch_quick"]
    assert (slow["declared"], slow["calls"], slow["runs"]) == (1.0, 2, 2)
    assert (quick["declared"], quick["calls"], quick["runs"]) == (2.0, 2, 2)
    assert slow["cost"] > quick["cost"]
    assert "2/2 calls succeeded" in slow["why"]

    again = await client.post("/api/plan", json=asked)  # the same log: the same plan
    assert again.json()["plan_hash"] == body["plan_hash"]

    check = await client.post("/api/check", json=asked)
    assert check.status_code == 200, check.text
    assert check.json()["plan_hash"] == body["plan_hash"]  # what a run with them plans
    bound = check.json()["bound"]
    assert [s["action"] for s in bound["steps"]] == ["fetch_quick"]


async def test_a_run_with_learned_costs_records_them_and_runs_the_faster_tool(
    client: httpx.AsyncClient,
) -> None:
    planned = await client.post(
        "/api/plan", json={"domain": "fetch", "problem": "problem-any", "costs": "learned"}
    )
    made = await client.post(
        "/api/runs", json={"domain": "fetch", "problem": "problem-any", "costs": "learned"}
    )
    assert made.status_code == 201, made.text
    run = made.json()
    assert run["status"] == "awaiting approval"
    assert run["plan_hash"] == planned.json()["plan_hash"]
    assert [s["action"] for s in run["steps"]] == ["fetch_quick"]
    asked = run["inputs"]["asked"]
    assert asked["domain"] == "fetch"
    assert set(asked["costs"]) == {"fetch_slow", "fetch_quick"}
    assert asked["costs"]["fetch_slow"] > asked["costs"]["fetch_quick"]
    assert run["inputs"][COSTS_KEY] == asked["costs"]  # the run's replans and resume

    approved = await client.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202, approved.text
    with anyio.fail_after(60):
        streamed = await client.get(f"/api/runs/{run['run_id']}/events")
    events = [json.loads(e["data"]) for e in sse_events(streamed.text)]
    assert events[-1]["type"] == "RunFinished"
    done = (await client.get(f"/api/runs/{run['run_id']}")).json()
    assert done["status"] == "succeeded", done["reason"]
    assert [s["action"] for s in done["steps"]] == ["fetch_quick"]

    declared = await client.post("/api/runs", json={"domain": "fetch", "problem": "problem-any"})
    assert declared.status_code == 201, declared.text
    assert "costs" not in declared.json()["inputs"]["asked"]
    assert COSTS_KEY not in declared.json()["inputs"]
    assert [s["action"] for s in declared.json()["steps"]] == ["fetch_slow"]


@pytest.mark.parametrize("path", ["/api/plan", "/api/check", "/api/runs"])
async def test_costs_other_than_declared_or_learned_is_a_422(
    empty: httpx.AsyncClient, path: str
) -> None:
    response = await empty.post(
        path, json={"domain": "fetch", "problem": "problem-any", "costs": "cheapest"}
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["type"] == "RequestValidationError"
    assert error["location"] == "body.costs"
    assert (await empty.get("/api/runs")).json() == []  # no run made


async def test_learned_costs_of_an_empty_log_are_the_declared_ones(
    empty: httpx.AsyncClient,
) -> None:
    asked = {"domain": "fetch", "problem": "problem-any"}
    declared = (await empty.post("/api/plan", json=asked)).json()
    learned = (await empty.post("/api/plan", json=asked | {"costs": "learned"})).json()
    assert learned["learned_costs"] == []
    assert _actions(learned) == ["fetch_slow"]
    assert learned["plan_hash"] == declared["plan_hash"]


async def test_learned_costs_of_a_domain_made_by_code_are_a_typed_422(tmp_path: Path) -> None:
    app = create_app(WebSettings(home=tmp_path / "home"))  # the shipped domains
    asked = {"domain": "drug-target", "problem": "scenario_3_diabetes", "costs": "learned"}
    async with asgi_client(app) as client:
        for path in ("/api/plan", "/api/check", "/api/runs"):
            response = await client.post(path, json=asked)
            assert response.status_code == 422, response.text
            error = response.json()["error"]
            assert error["type"] == "InputError"
            assert "made by Python code" in error["message"]
            assert "costs" in error["location"]
            assert "costs declared" in error["hint"]
        assert (await client.get("/api/runs")).json() == []  # no run made
    await app.state.controller.aclose()


async def test_learned_costs_of_a_gtpyhop_folder_are_a_typed_422(tmp_path: Path) -> None:
    pytest.importorskip("gtpyhop")
    from test_web_api import GTPYHOP_DOMAIN, GTPYHOP_PROBLEMS

    folder = tmp_path / "domains" / "bumps"
    folder.mkdir(parents=True)
    (folder / "domain.py").write_text(GTPYHOP_DOMAIN)
    (folder / "problems.py").write_text(GTPYHOP_PROBLEMS)
    app = create_app(WebSettings(home=tmp_path / "home", domains=tmp_path / "domains"))
    async with asgi_client(app) as client:
        asked = {"domain": "bumps", "problem": "small"}
        assert (await client.post("/api/plan", json=asked)).status_code == 200
        response = await client.post("/api/plan", json=asked | {"costs": "learned"})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert (error["type"], error["location"]) == ("InputError", "argument costs")
        assert "GTPyhop folder" in error["message"]
    await app.state.controller.aclose()


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """The domains folder, and a home whose log holds each tool's runs twice (recorded
    before the browser's fixtures: Playwright's sync API holds an event loop)."""
    folder = _folder(tmp_path)
    engine = Engine(tmp_path / "home")
    try:
        anyio.run(_record, engine, folder, "slow", "quick", "slow", "quick")
    finally:
        engine.close()
    return tmp_path / "domains"


@needs_chromium
def test_learned_costs_chosen_on_the_index_page_are_listed_and_planned_with(
    tmp_path: Path, recorded: Path, browser_page: Any
) -> None:
    app = create_app(WebSettings(home=tmp_path / "home", domains=recorded))
    page = browser_page
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector(".domain h2")
        card = page.locator(".domain").filter(has=page.locator("h2", has_text="fetch")).first
        card.get_by_label("costs for fetch").select_option("learned")
        row = card.locator(".problem").filter(has=page.locator("code", has_text="problem-any"))
        row.get_by_role("link", name="view plan").click()
        page.wait_for_selector("#costs li[data-action=fetch_slow]")
        assert page.locator("#title").inner_text() == "plan: fetch / problem-any (learned costs)"
        slow = page.locator("#costs li[data-action=fetch_slow]").inner_text()
        assert slow.startswith("fetch_slow 1 → ")
        assert "(declared → learned, from 2 calls in 2 runs)" in slow
        quick = page.locator("#costs li[data-action=fetch_quick]").inner_text()
        assert quick.startswith("fetch_quick 2 → ")
        page.wait_for_function("document.body.dataset.rendered === '1'")
        assert "fetch_quick" in page.locator("#graph").inner_text()
        page.screenshot(path=str(ARTIFACTS / "plan-learned-costs.png"))
        page.get_by_role("button", name="Bind and create run").click()
        page.wait_for_url("**/runs/*/plan")
        page.wait_for_selector("#costs:not([hidden])")
        said = page.locator("#costs").inner_text()
        assert said.startswith("planned with the costs learned from the run log: ")
        assert "fetch_slow" in said
        assert "fetch_quick" in page.locator("#graph").inner_text()
        runs = httpx.get(server.url + "/api/runs", timeout=30).json()
    assert len(runs) == 5
    assert runs[0]["status"] == "awaiting approval"
