"""The bio domain's ask step on the web, end to end in Debian's headless chromium
(Playwright, no browser download), over the shipped catalog and the real programs
(BLAST+, MAFFT, FastTree): the gene and family are uploaded on the index page and the
``reviewed_family_report`` goal's form makes the run; it is approved on its plan page,
runs to ``review_homologues`` and waits; the run page shows the question with the
search's figures; the person picks ``top5``; the run is planned again with
``keep_top_hits`` before ``align_mafft`` and succeeds, the alignment holding the query
and its 5 best hits. Screenshots go to tests/web/artifacts/ (gitignored)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import ServerThread, sse_events

from plansmith.domains.bio import DATA_DIR, detect_tools
from plansmith.engine import Engine
from plansmith.execution import AnswerRecorded, StepSucceeded
from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

PROGRAMS = {"blastn", "mafft", "fasttree"}
needs_programs = pytest.mark.skipif(
    not PROGRAMS.issubset(detect_tools()), reason="needs BLAST+, MAFFT and FastTree"
)
QUESTION = re.compile(
    r"The search found (\d+) hits of gene in family \(best: (\S+) at ([\d.]+)% identity\)\."
    r" Align every homologue, or only the top 5\?"
)


def _events(url: str, run_id: str) -> list[dict[str, Any]]:
    """A finished run's events (its SSE stream, read to its end): type and JSON."""
    response = httpx.get(f"{url}/api/runs/{run_id}/events", timeout=60)
    assert response.status_code == 200, response.text
    return [{"type": e["event"], **json.loads(e["data"])} for e in sse_events(response.text)]


def _settled(url: str, run_id: str) -> dict[str, Any]:
    """The run's JSON once no task of the server drives it (``live`` false): the engine
    that asked returns a moment after its ``AwaitingAnswer`` (till then the run's status
    is ``running``); polled, with a deadline."""
    deadline = time.monotonic() + 60
    while True:
        run: dict[str, Any] = httpx.get(f"{url}/api/runs/{run_id}", timeout=30).json()
        if not run["live"] or time.monotonic() > deadline:
            return run
        time.sleep(0.05)


@needs_chromium
@needs_programs
@pytest.mark.e2e
def test_a_bio_run_asks_which_homologues_and_top5_keeps_the_best_hits(
    tmp_path: Path, browser_page: Any
) -> None:
    gene, family = tmp_path / "gene.fasta", tmp_path / "family.fasta"
    shutil.copy(DATA_DIR / "query.fasta", gene)
    shutil.copy(DATA_DIR / "family.fasta", family)
    home = tmp_path / "home"
    app = create_app(WebSettings(home=home))  # the shipped domains
    page = browser_page
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    with ServerThread(app) as server:
        # the index page: the files chosen (uploaded as they are), the goal's form
        page.goto(server.url + "/")
        page.wait_for_selector(".domain .inputs")
        bio = page.locator(".domain").filter(has=page.locator("h2", has_text="bio")).first
        bio.get_by_label("bio gene").set_input_files(str(gene))
        bio.locator("[data-input-status='gene'][data-path]").wait_for(timeout=30_000)
        bio.get_by_label("bio family").set_input_files(str(family))
        bio.locator("[data-input-status='family'][data-path]").wait_for(timeout=30_000)
        form = bio.locator(".goal[data-goal='reviewed_family_report']")
        assert "reviewed family report" in form.inner_text()
        form.get_by_label("reviewed_family_report q").select_option("gene")
        form.get_by_role("button", name="plan bio / reviewed_family_report").click()
        form.locator(".goal-plan ol li").first.wait_for(timeout=60_000)
        planned = form.locator(".goal-plan ol li").all_inner_texts()
        assert "review_homologues(gene, family, homologues)" in planned
        assert not any(s.startswith("keep_top_hits") for s in planned)  # it assumes "all"
        form.get_by_role("button", name="create run for bio / reviewed_family_report").click()

        # the run's plan page: approve; the page goes on to the run page
        page.wait_for_url("**/runs/*/plan", timeout=60_000)
        page.wait_for_selector("body[data-rendered]", timeout=60_000)
        run_id = page.url.split("/runs/")[1].split("/")[0]
        page.get_by_role("button", name="Approve").click()
        page.wait_for_url(f"{server.url}/runs/{run_id}", timeout=60_000)

        # the question comes (live, by SSE): its form, with the search's figures
        question = page.locator("#questions form.answer")
        question.wait_for(timeout=240_000)
        page.wait_for_selector("body[data-status='awaiting answer']", timeout=30_000)
        step = question.get_attribute("data-step")
        text = question.inner_text()
        asked = QUESTION.search(text)
        assert asked, text
        assert int(asked.group(1)) > 5  # more hits than the top 5
        assert f"{step} review_homologues: " in text
        assert "one of: all, top5" in text
        assert question.get_by_label("all").is_checked()  # the declared default, preset
        assert not question.get_by_label("top5").is_checked()
        run = _settled(server.url, run_id)  # the engine that asked has stopped
        assert run["status"] == "awaiting answer", run["status"]
        [waiting] = run["awaiting_answer"]
        assert (waiting["step"], waiting["action"]) == (step, "review_homologues")
        assert waiting["question"] == asked.group(0)
        assert waiting["assumed"] == "all"
        question.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "run-bio-question.png"))

        question.get_by_label("top5").check()
        question.get_by_role("button", name="Answer").click()
        page.wait_for_function(
            "() => ['succeeded', 'failed', 'cancelled'].includes(document.body.dataset.status)",
            timeout=240_000,
        )
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        assert page.locator("form.answer").count() == 0
        assert page.locator("#questions").is_hidden()

        done = httpx.get(f"{server.url}/api/runs/{run_id}", timeout=30).json()
        events = _events(server.url, run_id)
    assert (done["status"], done["awaiting_answer"]) == ("succeeded", [])
    states = {s["action"]: s["state"] for s in done["steps"] if s["state"] != "dropped"}
    assert states["keep_top_hits"] == states["align_mafft"] == "succeeded", done["steps"]

    types = [e["type"] for e in events]
    assert (types[-1], events[-1]["state"]) == ("RunFinished", "succeeded"), events[-1]
    [recorded] = [e for e in events if e["type"] == "AnswerRecorded"]
    assert (recorded["step"], recorded["answer"]) == (step, "top5")
    assert recorded["by"].startswith("web:"), recorded
    assert types.index("AwaitingAnswer") < types.index("AnswerRecorded")
    assert "Replanned" in types[types.index("AnswerRecorded") :]
    succeeded = [e for e in events if e["type"] == "StepSucceeded"]
    order = [e["action"] for e in succeeded]
    assert order.index("review_homologues") < order.index("keep_top_hits")
    assert order.index("keep_top_hits") < order.index("align_mafft")

    engine = Engine(home)  # the outputs (the stream leaves them out): from the log
    try:
        logged = engine.log.events(run_id)
    finally:
        engine.close()
    outputs: dict[str, Any] = {e.action: e.outputs for e in logged if isinstance(e, StepSucceeded)}
    assert outputs["keep_top_hits"]["count"] == 6  # the query and its 5 best hits
    alignment = Path(outputs["align_mafft"]["alignment"])
    assert alignment.read_text().count(">") == 6
    answers = [e for e in logged if isinstance(e, AnswerRecorded)]
    assert [(a.step, a.answer, a.by[:4]) for a in answers] == [(step, "top5", "web:")]
    assert (ARTIFACTS / "run-bio-question.png").stat().st_size > 10_000
    assert errors == []
