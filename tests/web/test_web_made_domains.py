"""GTPyhop's Python domains on the web page of ``plansmith serve`` with its defaults: the
index lists bio-opentrons, dna-extraction and drug-target with their scenarios; a
scenario's plan is shown, and "create run" makes its run (by the domain's run maker),
which is approved on its plan page and runs to success (Chromium). A goal or an unknown
scenario is refused with a typed error, and no run is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread
from test_web_browser_inputs import _approve_and_watch

from plansmith.domains.lab import find_lab_python
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name


def test_the_api_lists_plans_and_refuses_for_the_domains_made_by_code(tmp_path: Path) -> None:
    app = create_app(WebSettings(home=tmp_path / "home"))
    with ServerThread(app) as server:
        domains = {d["name"]: d for d in httpx.get(server.url + "/api/domains").json()}
        drug = domains["drug-target"]
        assert drug["kind"] == "made"
        assert drug["problems"] == [
            "scenario_1_breast_cancer",
            "scenario_2_alzheimers",
            "scenario_3_diabetes",
        ]
        assert drug["runnable"] is True
        assert domains["bio-opentrons"]["problems"][0] == "scenario_1"
        plan = httpx.post(
            server.url + "/api/plan",
            json={"domain": "drug-target", "problem": "scenario_3_diabetes"},
            timeout=60,
        )
        assert plan.status_code == 200, plan.text
        assert plan.json()["steps"] == 11
        unknown = httpx.post(
            server.url + "/api/runs",
            json={"domain": "drug-target", "problem": "scenario_9"},
            timeout=60,
        )
        assert unknown.status_code == 422, unknown.text
        assert "no scenario 'scenario_9'" in unknown.text
        goal = httpx.post(
            server.url + "/api/runs", json={"domain": "drug-target", "goal": "x"}, timeout=60
        )
        assert goal.status_code == 422, goal.text
        assert "has no named goals" in goal.text
        check = httpx.post(
            server.url + "/api/check",
            json={"domain": "drug-target", "problem": "scenario_1_breast_cancer"},
            timeout=60,
        )
        assert check.status_code == 422, check.text
        assert httpx.get(server.url + "/api/runs").json() == []  # no run made


@needs_chromium
def test_a_scenario_of_a_domain_made_by_code_runs_from_its_card(
    tmp_path: Path, browser_page: Any
) -> None:
    app = create_app(WebSettings(home=tmp_path / "home"))  # the shipped domains
    page = browser_page
    with ServerThread(app) as server:

        def card(name: str) -> Any:
            page.goto(server.url + "/")
            page.wait_for_selector(".domain h2")
            return page.locator(".domain").filter(has=page.locator("h2", has_text=name)).first

        drug = card("drug-target")
        assert "scenario_2_alzheimers: targets for Alzheimer's" in drug.inner_text()
        drug.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "index-made-domains.png"))
        drug.get_by_role(
            "button", name="create run for drug-target / scenario_2_alzheimers"
        ).click()
        assert _approve_and_watch(page) == "succeeded"
        assert page.locator("#bar-label").inner_text() == "11 / 11 done"
        page.screenshot(path=str(ARTIFACTS / "index-run-drug-target.png"))
        lab = find_lab_python()[0].exists()
        if lab:  # the lab venv: the Opentrons simulator
            bio = card("bio-opentrons")
            bio.get_by_role("button", name="create run for bio-opentrons / scenario_1").click()
            assert _approve_and_watch(page) == "succeeded"
            page.screenshot(path=str(ARTIFACTS / "index-run-bio-opentrons.png"))
            dna = card("dna-extraction")
            name = "create run for dna-extraction / scenario_2_dry_run"
            dna.get_by_role("button", name=name).click()
            assert _approve_and_watch(page) == "succeeded"
        runs = httpx.get(server.url + "/api/runs", timeout=30).json()
    assert [r["status"] for r in runs] == ["succeeded"] * (3 if lab else 1)
    makers = {r["inputs"]["made_by"] for r in runs}
    assert makers == (
        {"drug-target", "bio-opentrons", "dna-extraction"} if lab else {"drug-target"}
    )
