"""A domain's inputs on the index page, in Debian's headless chromium (Playwright, no
browser download), over the shipped catalog: a FASTA chosen for bio's gene is uploaded
as it is chosen, and the GC/ORF goal's form plans over it; the lab's PCR plans from the
number of samples alone. Then every runnable domain (bio, code, pcr on the simulator
where the lab venv is) from its form to a succeeded run: create, approve, watch.
Screenshots go to tests/web/artifacts/ (gitignored). Skipped
when /usr/bin/chromium or Playwright is missing (.ci/run installs both)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread

from plansmith.domains.bio import DATA_DIR
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = needs_chromium


def test_an_uploaded_fasta_is_the_gene_of_the_gc_and_orf_goal(
    tmp_path: Path, browser_page: Any
) -> None:
    gene = tmp_path / "my gene.fasta"
    shutil.copy(DATA_DIR / "query.fasta", gene)
    home = tmp_path / "home"
    app = create_app(WebSettings(home=home))  # the shipped domains
    page = browser_page
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector(".domain .inputs")
        cards = {c.locator("h2").text_content(): c for c in page.locator(".domain").all()}
        bio = cards["bio"]
        assert bio.locator(".not-ready").count() == 0
        chooser = bio.get_by_label("bio gene")
        assert chooser.get_attribute("type") == "file"
        assert ".fasta" in (chooser.get_attribute("accept") or "")
        assert bio.get_by_label("bio family").get_attribute("type") == "file"
        assert cards["code"].get_by_label("code repo").get_attribute("type") == "text"
        assert cards["pcr"].get_by_label("pcr samples").get_attribute("type") == "number"

        chooser.set_input_files(str(gene))  # uploaded as it is chosen
        status = bio.locator("[data-input-status='gene'][data-path]")
        status.wait_for(timeout=30_000)
        assert status.inner_text() == "my_gene.fasta (1092 bytes)"
        stored = Path(status.get_attribute("data-path") or "")
        assert stored.parent.parent == home / "uploads"
        assert stored.read_bytes() == gene.read_bytes()

        form = bio.locator(".goal[data-goal='gc_and_orf_summary']")
        form.get_by_label("gc_and_orf_summary s").select_option("gene")
        form.get_by_role("button", name="plan bio / gc_and_orf_summary").click()
        form.locator(".goal-plan ol li").first.wait_for(timeout=30_000)
        preview = form.locator(".goal-plan").inner_text()
        assert "4 steps" in preview
        items = form.locator(".goal-plan ol li").all_inner_texts()
        assert items == [
            "load_sequences(gene)", "gc_content(gene)", "find_orfs(gene)", "write_summary(gene)"
        ]  # fmt: skip
        assert form.get_by_role(
            "button", name="create run for bio / gc_and_orf_summary"
        ).is_enabled()
        page.screenshot(path=str(ARTIFACTS / "index-inputs-bio.png"), full_page=True)

        other = bio.locator(".goal[data-goal='homologues_of_gene']")
        other.get_by_role("button", name="plan bio / homologues_of_gene").click()
        other.locator(".goal-plan .message").wait_for(timeout=30_000)
        assert "needs input(s) for this goal: family" in other.locator(".goal-plan").inner_text()

        pcr = cards["pcr"]
        pcr.get_by_label("pcr samples").fill("16")
        job = pcr.locator(".job[data-job='pcr']")
        job.get_by_role("button", name="plan pcr / inputs").click()
        job.locator(".goal-plan ol li").first.wait_for(timeout=60_000)
        assert "steps, sha256:" in job.locator(".goal-plan").inner_text()
        job.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "index-inputs-pcr.png"))
    assert [e for e in errors if "status of 422" not in e] == []  # the 422 is the test's


def _approve_and_watch(page: Any) -> str:
    """On a run's plan page (after *create run*): approve it, open its run page, and wait
    until the run ends; the run's state."""
    page.wait_for_url("**/runs/*/plan", timeout=60_000)
    page.wait_for_selector("body[data-rendered]", timeout=60_000)
    run_id = page.url.split("/runs/")[1].split("/")[0]
    page.get_by_role("button", name="Approve").click()
    page.goto(page.url.rsplit("/plan", 1)[0])
    page.wait_for_function(
        "() => ['succeeded', 'failed', 'cancelled'].includes(document.body.dataset.status)",
        timeout=240_000,
    )
    assert run_id in page.url
    return str(page.locator("body").get_attribute("data-status"))


def test_every_runnable_domain_runs_from_its_form_to_a_succeeded_run(
    tmp_path: Path, browser_page: Any
) -> None:
    from _shop_repo import shop_repo
    from plansmith.domains.lab import find_lab_python

    gene = tmp_path / "gene.fasta"
    shutil.copy(DATA_DIR / "query.fasta", gene)
    repo = shop_repo(tmp_path)
    app = create_app(WebSettings(home=tmp_path / "home"))  # the shipped domains
    page = browser_page
    with ServerThread(app) as server:

        def card(name: str) -> Any:
            page.goto(server.url + "/")
            page.wait_for_selector(".domain .inputs")
            return page.locator(".domain").filter(has=page.locator("h2", has_text=name)).first

        bio = card("bio")
        bio.get_by_label("bio gene").set_input_files(str(gene))
        bio.locator("[data-input-status='gene'][data-path]").wait_for(timeout=30_000)
        form = bio.locator(".goal[data-goal='gc_and_orf_summary']")
        form.get_by_label("gc_and_orf_summary s").select_option("gene")
        form.get_by_role("button", name="create run for bio / gc_and_orf_summary").click()
        assert _approve_and_watch(page) == "succeeded"
        assert page.locator("#bar-label").inner_text() == "4 / 4 done"
        page.screenshot(path=str(ARTIFACTS / "index-run-bio.png"))

        code = card("code")
        code.get_by_label("code repo").fill(str(repo))
        form = code.locator(".goal[data-goal='diagnosis']")
        form.get_by_role("button", name="create run for code / diagnosis").click()
        assert _approve_and_watch(page) == "succeeded"
        page.screenshot(path=str(ARTIFACTS / "index-run-code.png"))

        if find_lab_python()[0].exists():  # the lab venv: the Opentrons simulator
            pcr = card("pcr")
            pcr.get_by_label("pcr samples").fill("8")
            pcr.get_by_label("pcr cycles").fill("1")
            job = pcr.locator(".job[data-job='pcr']")
            job.get_by_role("button", name="create run for pcr / inputs").click()
            assert _approve_and_watch(page) == "succeeded"
            page.screenshot(path=str(ARTIFACTS / "index-run-pcr.png"))
        runs = httpx.get(server.url + "/api/runs", timeout=30).json()
    lab = find_lab_python()[0].exists()
    assert [r["status"] for r in runs] == ["succeeded"] * (3 if lab else 2)
