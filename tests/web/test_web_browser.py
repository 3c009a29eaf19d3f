"""End to end in Debian's headless chromium (Playwright, no browser download): open the
plan page, approve, and watch every step turn done over SSE while a real plan runs on
the counter MCP server. Screenshots go to tests/web/artifacts/ (gitignored).

Also measures (prints, does not assert) how long the 623-step lab PCR plan takes to
draw. Skipped when /usr/bin/chromium or Playwright is missing (.ci/run installs both).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _web_helpers import ServerThread, write_domains

from plansmith.web import WebSettings, create_app

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SLOWER = """\
bindings:
  summarise:
    server: counter
    tool: sleep
    arguments: {seconds: 0.2}
    outputs: {done: "$.structured.slept"}
  index:
    server: counter
    tool: echo
    arguments: {x: "${summarise(d).done}"}
    outputs: {value: "$.structured.value"}
"""

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),  # a fresh, empty --user-data-dir
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1440, "height": 900},
        )
        try:
            yield context.new_page()
        finally:
            context.close()


def test_approve_on_the_plan_page_then_every_step_turns_done_live(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    root = write_domains(tmp_path, sizes=(4,), bindings=SLOWER)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    ARTIFACTS.mkdir(exist_ok=True)
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        page.get_by_role("button", name="create run").click()  # plans, binds, awaits approval
        page.wait_for_url("**/runs/*/plan", timeout=60_000)
        page.wait_for_selector("body[data-rendered='8']", timeout=30_000)
        nodes = page.locator("svg [data-step]")
        assert nodes.count() == 8
        first = page.locator("[data-step='s1']")
        assert "summarise(d0)" in (first.text_content() or "")
        assert "counter / sleep" in (first.text_content() or "")
        first.click()
        assert "read" in page.locator("#detail").inner_text()
        page.screenshot(path=str(ARTIFACTS / "plan-page.png"))

        page.get_by_role("button", name="Approve").click()
        page.wait_for_url("**/runs/r-*", timeout=30_000)
        page.wait_for_function(
            "() => { const g = [...document.querySelectorAll('svg [data-step]')];"
            " return g.length === 8 && g.every(n => n.dataset.state === 'done'); }",
            timeout=60_000,
        )
        page.wait_for_selector("body[data-status='succeeded']", timeout=30_000)
        body = page.locator("body")
        assert body.get_attribute("data-sse-done") == "8"  # every step reached the page by SSE
        assert page.locator("#bar-label").inner_text() == "8 / 8 done"
        assert page.locator("#timeline rect.bar.st-done").count() == 8
        assert page.locator("#cancel").is_disabled()
        page.screenshot(path=str(ARTIFACTS / "run-finished.png"))

        page.get_by_role("link", name="report").click()
        page.wait_for_selector("#report table", timeout=30_000)
        assert "succeeded" in page.locator("#report").inner_text()
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        page.goto(server.url + "/runs")
        page.wait_for_selector("tr[data-run]", timeout=30_000)
    assert (ARTIFACTS / "run-finished.png").stat().st_size > 10_000


def test_draw_time_of_the_623_step_lab_pcr_plan_is_measured(
    tmp_path: Path, browser_page: Any
) -> None:
    from plansmith.domains.lab import PCR_DOMAIN, problem_for

    folder = tmp_path / "domains" / "pcr"
    folder.mkdir(parents=True)
    shutil.copy(PCR_DOMAIN, folder / "domain.yaml")
    (folder / "problem-96x1.yaml").write_text(problem_for(96, 1))
    app = create_app(WebSettings(home=tmp_path / "home", domains=tmp_path / "domains"))
    page = browser_page
    with ServerThread(app) as server:
        page.goto(server.url + "/plan?domain=pcr&problem=problem-96x1")
        page.wait_for_selector("body[data-rendered]", timeout=120_000)
        steps = int(page.locator("body").get_attribute("data-rendered") or 0)
        timing = page.evaluate(
            "() => ({fetch_ms: +document.body.dataset.fetchMs,"
            " draw_ms: +document.body.dataset.drawMs,"
            " since_navigation_ms: +document.body.dataset.renderedAt})"
        )
        assert page.locator("svg [data-step]").count() == steps
        assert page.locator("#tree details").count() > 0  # the HTN decomposition
        page.screenshot(path=str(ARTIFACTS / "pcr-96x1-plan.png"))
    ARTIFACTS.mkdir(exist_ok=True)
    result = {"plan": "lab pcr 96 samples 1 channel", "steps": steps, **timing}
    (ARTIFACTS / "pcr-96x1-render.json").write_text(json.dumps(result, indent=2))
    print(f"\nDAG render of {steps} steps: {json.dumps(timing)}")
    assert steps >= 600
