"""The pages in Debian's headless chromium: a bad page request shows a readable HTML
error (its status kept, the API still JSON), no page logs a console error (the icon
included), the run page's timeline grows while a step runs, and the graph and controls
can be reached and named by assistive technology."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from _browser import browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread, sleepy_bindings, write_domains

from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = needs_chromium

SLEEPY = sleepy_bindings(1.5)

BAD_PAGES = {
    "/plan?domain=%3Cscript%3E&problem=p": (422, "RequestValidationError", "domain"),
    "/plan?domain=docs": (422, "RequestValidationError", "problem"),
    "/plan": (422, "RequestValidationError", "domain"),
    "/runs/%3Cimg%3E": (422, "RequestValidationError", "run_id"),
    "/nosuchpage": (404, "HTTPError", "Not Found"),
}


def _console_problems(page: Any) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("response", lambda r: r.status == 404 and problems.append(f"404 {r.url}"))
    return problems


def test_a_bad_page_request_shows_a_readable_html_error_with_its_status(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    app = create_app(WebSettings(home=tmp_path / "home", domains=write_domains(tmp_path)))
    with ServerThread(app) as server:
        for path, (status, kind, text) in BAD_PAGES.items():
            response = page.goto(server.url + path)
            assert response is not None
            assert response.status == status, path
            assert response.headers["content-type"].startswith("text/html"), path
            shown = page.locator("main").inner_text()
            assert kind in shown, path
            assert text in shown, path
            assert '{"error"' not in page.content(), path
            assert page.locator("main script, main img").count() == 0, path  # escaped
        # the API is JSON whatever the client accepts
        for path in ("/api/nothing", "/api/runs/%3Cimg%3E"):
            answer = httpx.get(server.url + path, headers={"Accept": "text/html"})
            assert answer.headers["content-type"] == "application/json", path
            assert "error" in answer.json(), path


def test_the_pages_log_no_console_error_and_have_an_icon(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    problems = _console_problems(page)
    app = create_app(WebSettings(home=tmp_path / "home", domains=write_domains(tmp_path)))
    with ServerThread(app) as server:
        for path in ("/", "/runs", "/plan?domain=docs&problem=problem-2"):
            page.goto(server.url + path)
            page.wait_for_load_state("networkidle")
            assert page.locator("link[rel=icon]").count() == 1, path
        page.wait_for_selector("svg [data-step]", timeout=30_000)
    assert problems == []


def test_the_timeline_grows_while_a_step_runs(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    problems = _console_problems(page)
    root = write_domains(tmp_path, sizes=(1,), bindings=SLEEPY)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        created = httpx.post(
            server.url + "/api/runs", json={"domain": "docs", "problem": "problem-1"}, timeout=60
        ).json()
        run_id = created["run_id"]
        page.goto(f"{server.url}/runs/{run_id}")
        page.wait_for_selector("body[data-status]", timeout=30_000)
        approved = httpx.post(
            f"{server.url}/api/runs/{run_id}/approve",
            json={"plan_hash": created["plan_hash"]},
            timeout=30,
        )
        assert approved.status_code == 202
        running = "#timeline rect.bar.st-running"
        page.wait_for_selector(running, timeout=30_000)
        # no event arrives while the step sleeps: only a clock moves the axis on, to
        # a second while the step still runs (its bar still yellow)
        page.wait_for_function(
            "() => { const axis = document.querySelector('#timeline svg text[text-anchor=end]');"
            " return axis && / s$/.test(axis.textContent)"
            " && parseFloat(axis.textContent) >= 1"
            " && document.querySelector('#timeline rect.bar.st-running'); }",
            timeout=10_000,
        )
        page.wait_for_selector("body[data-status='succeeded']", timeout=30_000)
    assert problems == []


def test_steps_and_controls_are_reachable_and_named(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    app = create_app(WebSettings(home=tmp_path / "home", domains=write_domains(tmp_path)))
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        button = page.get_by_role("button", name="create run for docs / problem-2")
        button.wait_for(timeout=30_000)  # the index fills in once /api/domains answers
        assert button.count() == 1
        page.goto(server.url + "/plan?domain=docs&problem=problem-2")
        page.wait_for_selector("svg [data-step='s1']", timeout=30_000)
        step = page.locator("[data-step='s1']")
        assert step.get_attribute("tabindex") == "0"
        assert step.get_attribute("role") == "button"
        assert "s1" in (step.get_attribute("aria-label") or "")
        assert "summarise" in (step.get_attribute("aria-label") or "")
        step.focus()
        page.keyboard.press("Enter")
        assert "summarise" in page.locator("#detail").inner_text()
        page.locator("[data-step='s2']").focus()
        page.keyboard.press(" ")
        assert "s2" in page.locator("#detail").inner_text()

        created = httpx.post(
            server.url + "/api/runs", json={"domain": "docs", "problem": "problem-2"}, timeout=60
        ).json()
        page.goto(f"{server.url}/runs/{created['run_id']}")
        page.wait_for_selector("body[data-status]", timeout=30_000)
        assert page.locator("[role=status][aria-live=polite]").count() >= 1
        bar = page.get_by_role("progressbar")
        assert bar.get_attribute("aria-valuenow") == "0"
        assert int(bar.get_attribute("aria-valuemax") or 0) >= 1
