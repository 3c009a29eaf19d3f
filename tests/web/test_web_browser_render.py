"""How long big plans take to load and draw on the plan page, in Debian's headless
chromium: the 623-step lab PCR plan (a YAML domain) and the 612-step GTPyhop plan of
``bio_opentrons`` scenario_6 (a GTPyhop folder among the served domains). Measured,
printed and saved to tests/web/artifacts/*-render.json, never asserted.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread

from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = needs_chromium


def _measure(page: Any, url: str, name: str, label: str) -> dict[str, Any]:
    """Open the plan page at ``url``, wait until it is drawn, save a screenshot and the
    timings (the page's own, from ``performance.now()``) to ``artifacts/<name>-*``."""
    page.goto(url)
    page.wait_for_selector("body[data-rendered]", timeout=120_000)
    steps = int(page.locator("body").get_attribute("data-rendered") or 0)
    timing = page.evaluate(
        "() => ({fetch_ms: +document.body.dataset.fetchMs,"
        " draw_ms: +document.body.dataset.drawMs,"
        " since_navigation_ms: +document.body.dataset.renderedAt})"
    )
    assert page.locator("svg [data-step]").count() == steps
    page.screenshot(path=str(ARTIFACTS / f"{name}-plan.png"))
    result = {"plan": label, "steps": steps, **timing}
    (ARTIFACTS / f"{name}-render.json").write_text(json.dumps(result, indent=2))
    print(f"\nDAG render of {label} ({steps} steps): {json.dumps(timing)}")
    return result


def test_draw_time_of_the_623_step_lab_pcr_plan_is_measured(
    tmp_path: Path, browser_page: Any
) -> None:
    from plansmith.domains.lab import PCR_DOMAIN, problem_for

    folder = tmp_path / "domains" / "pcr"
    folder.mkdir(parents=True)
    shutil.copy(PCR_DOMAIN, folder / "domain.yaml")
    (folder / "problem-96x1.yaml").write_text(problem_for(96, 1))
    app = create_app(WebSettings(home=tmp_path / "home", domains=tmp_path / "domains"))
    with ServerThread(app) as server:
        url = server.url + "/plan?domain=pcr&problem=problem-96x1"
        result = _measure(browser_page, url, "pcr-96x1", "lab pcr 96 samples 1 channel")
        assert browser_page.locator("#tree details").count() > 0  # the HTN decomposition
    assert result["steps"] >= 600


def test_draw_time_of_bio_opentrons_scenario_6_from_a_gtpyhop_folder_is_measured(
    tmp_path: Path, browser_page: Any
) -> None:
    spec = importlib.util.find_spec("gtpyhop")  # the bench extra; found, not imported
    if spec is None or spec.origin is None:
        pytest.skip("needs gtpyhop (pip install -e '.[bench]')")
    source = Path(spec.origin).parent / "examples" / "mcp-orchestration" / "bio_opentrons"
    domains = tmp_path / "domains"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(source, domains / "bio_opentrons", ignore=ignore)
    app = create_app(WebSettings(home=tmp_path / "home", domains=domains))
    page = browser_page
    with ServerThread(app) as server:
        url = server.url + "/plan?domain=bio_opentrons&problem=scenario_6"
        label = "gtpyhop bio_opentrons scenario_6"
        result = _measure(page, url, "bio-opentrons-scenario-6", label)
        assert page.locator("#create").is_hidden()  # a GTPyhop folder is planned, not run
        assert "plans only" in page.locator("#message").inner_text()
        first = page.locator("[data-step='s1']").text_content() or ""
        assert "not bound yet" in first
    assert result["steps"] >= 600
