"""A domain's named goals as forms on the web: each parameter with the objects that fit,
a plan for a chosen goal, and a run of it to the end (a real engine, the counter server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from _web_helpers import BINDINGS, write_domains

from _shared_servers import docs_domain
from plansmith.web import WebSettings, create_app

pytestmark = pytest.mark.anyio

GOALS = """\
goals:
  searchable:
    description: make a document searchable
    goal: [indexed(d)]
    parameters: {d: document}
  both:
    description: two documents searchable
    goal: [indexed(a), indexed(b)]
    parameters: {a: document, b: document}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    root = write_domains(tmp_path, sizes=(3,), bindings=BINDINGS)
    (root / "docs" / "domain.yaml").write_text(docs_domain(rest=GOALS))
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        yield c
    await app.state.controller.aclose()


async def test_the_domains_list_each_named_goal_with_the_objects_that_fit(
    client: httpx.AsyncClient,
) -> None:
    (docs,) = (await client.get("/api/domains")).json()
    assert docs["goals"] == [
        {
            "name": "searchable",
            "description": "make a document searchable",
            "parameters": [{"name": "d", "type": "document", "choices": ["d0", "d1", "d2"]}],
        },
        {
            "name": "both",
            "description": "two documents searchable",
            "parameters": [
                {"name": "a", "type": "document", "choices": ["d0", "d1", "d2"]},
                {"name": "b", "type": "document", "choices": ["d0", "d1", "d2"]},
            ],
        },
    ]


async def test_a_chosen_goal_plans_over_the_default_problems_objects(
    client: httpx.AsyncClient,
) -> None:
    body = {"domain": "docs", "goal": "both", "args": {"a": "d2", "b": "d0"}}
    first = (await client.post("/api/plan", json=body)).json()
    again = (await client.post("/api/plan", json=body)).json()
    assert first["plan_hash"] == again["plan_hash"]  # the same choice, the same plan
    steps = [(s["action"], s["args"]) for s in first["plan"]["steps"]]
    assert sorted(steps) == [
        ("index", ["d0"]), ("index", ["d2"]), ("summarise", ["d0"]), ("summarise", ["d2"])
    ]  # fmt: skip


async def test_a_goal_runs_to_the_end_once_its_plan_is_approved(
    client: httpx.AsyncClient,
) -> None:
    created = await client.post(
        "/api/runs", json={"domain": "docs", "goal": "searchable", "args": {"d": "d1"}}
    )
    assert created.status_code == 201, created.text
    run = created.json()
    assert run["status"] == "awaiting approval"
    assert [s["args"] for s in run["steps"]] == [["d1"], ["d1"]]
    approved = await client.post(
        f"/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}
    )
    assert approved.status_code == 202
    with anyio.fail_after(60):  # a bound on a hang, not a timing claim
        async with client.stream("GET", f"/api/runs/{run['run_id']}/events") as events:
            async for line in events.aiter_lines():
                if '"RunFinished"' in line:
                    assert '"succeeded"' in line
                    break
    detail = (await client.get(f"/api/runs/{run['run_id']}")).json()
    assert detail["status"] == "succeeded"


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        ({"domain": "docs", "goal": "nope"}, 422, "no goal 'nope'"),
        ({"domain": "docs", "goal": "searchable"}, 422, "goal 'searchable' takes d"),
        ({"domain": "docs", "goal": "searchable", "args": {"d": "zz"}}, 422, "'zz' is not a"),
        ({"domain": "docs", "goal": "searchable", "args": {"d": "d0", "x": "d1"}}, 422, "takes d"),
        ({"domain": "docs"}, 422, "give a problem or a goal"),
        ({"domain": "docs", "problem": "problem-3", "goal": "searchable"}, 422, "not both"),
        ({"domain": "docs", "problem": "problem-3", "args": {"d": "d0"}}, 422, "args go with"),
    ],
)
async def test_a_bad_goal_choice_is_refused_with_what_to_give(
    client: httpx.AsyncClient, body: dict[str, object], status: int, text: str
) -> None:
    response = await client.post("/api/plan", json=body)
    assert response.status_code == status, response.text
    assert text in response.text
    runs = await client.post("/api/runs", json=body)
    assert runs.status_code == status
    assert (await client.get("/api/runs")).json() == []  # no run was made
