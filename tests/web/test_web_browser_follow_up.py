"""In headless chromium: a finished run's page offers "continue from here"; the follow-up
it starts links to its parent, and runs without calling the parent's steps again (the
counter server logs each call of ``work``). Skipped without /usr/bin/chromium or
Playwright (.ci/run installs both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread, write_domains

from _shared_servers import problem_text
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = needs_chromium

ENDED = "() => ['succeeded', 'failed', 'cancelled'].includes(document.body.dataset.status)"


def test_continue_from_here_starts_a_follow_up_linked_to_its_parent(
    tmp_path: Path, browser_page: Any
) -> None:
    calls = tmp_path / "calls.jsonl"
    root = write_domains(tmp_path, sizes=(2,), COUNTER_LOG=str(calls))
    (root / "docs" / "problem-summarised.yaml").write_text(
        problem_text(2, goal="summarised(d0), summarised(d1)")
    )
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    page = browser_page
    with ServerThread(app) as server:
        made = httpx.post(
            server.url + "/api/runs",
            json={"domain": "docs", "problem": "problem-summarised"},
            timeout=60,
        ).json()
        parent = made["run_id"]
        approved = httpx.post(
            f"{server.url}/api/runs/{parent}/approve",
            json={"plan_hash": made["plan_hash"]},
            timeout=60,
        )
        assert approved.status_code == 202, approved.text
        httpx.get(f"{server.url}/api/runs/{parent}/events", timeout=120)  # to its end
        assert len(calls.read_text().splitlines()) == 2

        page.goto(f"{server.url}/runs/{parent}")
        page.wait_for_function(ENDED, timeout=60_000)
        form = page.locator("#continue")
        form.wait_for(state="visible", timeout=30_000)
        assert page.locator("#after-link").is_hidden()  # the parent follows up no run
        page.locator("#continue-goal").select_option("problem:problem-2")
        page.screenshot(path=str(ARTIFACTS / "run-continue-from-here.png"))
        page.get_by_role("button", name="Continue from here").click()
        page.wait_for_url(lambda url: "/runs/" in url and parent not in url, timeout=60_000)
        child = page.url.split("/runs/")[1].split("/")[0]
        page.wait_for_selector("body[data-status='awaiting approval']", timeout=30_000)
        link = page.locator("#after-link")
        assert link.inner_text() == f"after {parent}"
        assert link.get_attribute("href") == f"/runs/{parent}"
        assert f"{parent}/s1" in page.locator("#inherited").inner_text()

        page.goto(f"{server.url}/runs/{child}/plan")
        page.wait_for_selector("body[data-rendered]", timeout=60_000)
        page.get_by_role("button", name="Approve").click()
        page.wait_for_url(f"**/runs/{child}", timeout=30_000)
        page.wait_for_function(ENDED, timeout=60_000)
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        assert page.locator("#bar-label").inner_text() == "2 / 2 done"
        page.screenshot(path=str(ARTIFACTS / "run-follow-up.png"))
    assert len(calls.read_text().splitlines()) == 2  # the parent's steps: not called again
