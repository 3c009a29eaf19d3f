"""A domain's inputs on the index page, in Debian's headless chromium (Playwright, no
browser download), over the shipped catalog: a FASTA chosen for bio's gene is uploaded
as it is chosen, and the GC/ORF goal's form plans over it; the lab's PCR plans from the
number of samples alone. Screenshots go to tests/web/artifacts/ (gitignored). Skipped
when /usr/bin/chromium or Playwright is missing (.ci/run installs both)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

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
