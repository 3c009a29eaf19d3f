"""Research from the web (issue 28): ``POST /api/research`` starts a run of the research
domain over the served sources, ``GET /api/research/{id}`` follows it, and its report
carries the trace (subquestions and decisions, searches, verdicts, conflicts); the page
``/research/{id}`` draws it, in Debian's headless chromium. Bad input is a typed error
and makes no run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread

from plansmith.domains.research import PLANTED_DIR
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = pytest.mark.anyio

SOURCES = (f"notes={PLANTED_DIR / 'notes'}", f"blog={PLANTED_DIR / 'blog'}")
QUESTION = "What is frobnicate?"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _settings(tmp_path: Path, sources: tuple[str, ...] | None = SOURCES) -> WebSettings:
    return WebSettings(home=tmp_path / "home", research_sources=sources)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(_settings(tmp_path))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=120
    ) as c:
        yield c
    await app.state.controller.aclose()


async def _finished(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    with anyio.fail_after(120):
        while True:
            status = (await client.get(f"/api/research/{run_id}")).json()
            if status["state"] in ("succeeded", "failed", "cancelled"):
                return dict(status)
            await anyio.sleep(0.05)


async def test_a_question_runs_and_its_report_carries_the_trace(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/api/research")).json() == {"sources": ["notes", "blog"]}
    made = await client.post("/api/research", json={"question": QUESTION})
    assert made.status_code == 201, made.text
    handle = made.json()
    assert handle["sources"] == ["notes", "blog"]
    status = await _finished(client, handle["run_id"])
    assert status["state"] == "succeeded", status
    report = (await client.get(f"/api/research/{handle['run_id']}/report")).json()
    trace = report["trace"]
    assert trace["problem"]["question"]["text"] == QUESTION.rstrip("?")  # as classified
    assert trace["subquestions"]
    assert all(d["kept"] for d in trace["problem"]["decisions"])  # each with its reason
    assert trace["conflicts"]  # the planted latest versions: 2.4.1 (notes), 2.5.0 (blog)
    assert {c["source"] for c in trace["calls"]} == {"notes", "blog"}
    assert trace["claims"]
    assert report["citations"] > 0
    assert "frobnicate" in report["markdown"].lower()
    # the research run is a run of the web's run table: the runs list shows it
    listed = (await client.get("/api/runs")).json()
    assert [r["run_id"] for r in listed] == [handle["run_id"]]


@pytest.mark.parametrize(
    ("body", "status", "where"),
    [
        ({"question": ""}, 422, "body.question"),
        ({"question": "x" * 10_241}, 422, "body.question"),
        ({"question": "What is json?", "sources": ["nowhere"]}, 422, "argument sources"),
        ({"question": "What?", "extra": 1}, 422, "body.extra"),
    ],
)
async def test_bad_questions_are_typed_errors_and_make_no_run(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, where: str
) -> None:
    response = await client.post("/api/research", json=body)
    assert response.status_code == status, response.text
    assert where in str(response.json()["error"].get("location")), response.json()
    assert (await client.get("/api/runs")).json() == []


async def test_without_a_source_research_is_refused_with_how_to_serve_one(
    tmp_path: Path,
) -> None:
    app = create_app(_settings(tmp_path, sources=()))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        assert (await c.get("/api/research")).json() == {"sources": []}
        refused = await c.post("/api/research", json={"question": QUESTION})
    await app.state.controller.aclose()
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["message"] == "no research source is served here"
    assert "--research-source" in error["hint"]


@needs_chromium
def test_the_research_form_runs_a_question_and_its_page_shows_the_trace(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    with ServerThread(create_app(_settings(tmp_path))) as server:
        page.goto(server.url + "/")
        page.get_by_label("research question").fill(QUESTION)
        page.get_by_role("button", name="research the question").click()
        page.wait_for_url("**/research/*", timeout=30_000)
        page.wait_for_function("() => document.body.dataset.traced", timeout=120_000)
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        text = page.locator("#trace").inner_text()
        for heading in ("subquestions and decisions", "searches", "verdicts", "conflicts"):
            assert heading in text.lower()
        assert "notes" in text
        assert "kept as sq1 (definition)" in text  # a decision, with its reason
        assert "2.4.1" in text  # a disputed value, with its source
        assert "blog" in text
        assert QUESTION.rstrip("?") in page.locator("#question").inner_text()
        assert "frobnicate" in page.locator("#report").inner_text().lower()
        page.screenshot(path=str(ARTIFACTS / "research-trace.png"), full_page=True)
