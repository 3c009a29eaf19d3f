"""End to end in Debian's headless chromium (Playwright, no browser download): open the
plan page, approve, and watch every step turn done over SSE while a real plan runs on
the counter MCP server; then the colours of a step that fails once and is retried, and
of a failed step whose rest of the plan is replanned; the Cancel button only while the
run is live, gone as the page learns it finished. Screenshots go to
tests/web/artifacts/ (gitignored). Skipped when /usr/bin/chromium or Playwright is
missing (.ci/run installs both).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _web_helpers import (
    DOMAIN,
    SLOW_BINDINGS,
    ServerThread,
    gated_bindings,
    sleepy_bindings,
    write_domains,
)

from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

SLOWER = sleepy_bindings(0.2)

pytestmark = needs_chromium


def test_approve_on_the_plan_page_then_every_step_turns_done_live(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    gate = tmp_path / "gate"  # no step succeeds before the run page has loaded the run
    root = write_domains(tmp_path, sizes=(4,), bindings=gated_bindings(gate))
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        page.get_by_role("button", name="create run").click()  # plans, binds, awaits approval
        page.wait_for_url("**/runs/*/plan", timeout=60_000)
        page.wait_for_selector("body[data-rendered='8']", timeout=30_000)
        nodes = page.locator("svg [data-step]")
        assert nodes.count() == 8
        first = page.locator("[data-step='s1']")
        assert "summarise(d0)" in (first.text_content() or "")
        assert "counter / wait_for_file" in (first.text_content() or "")
        first.click()
        assert "read" in page.locator("#detail").inner_text()
        page.screenshot(path=str(ARTIFACTS / "plan-page.png"))

        page.get_by_role("button", name="Approve").click()
        page.wait_for_url("**/runs/r-*", timeout=30_000)
        page.wait_for_selector("body[data-status]", timeout=30_000)  # the run is loaded
        gate.write_text("open")  # the steps succeed now: each one's event comes by SSE
        page.wait_for_function(
            "() => { const g = [...document.querySelectorAll('svg [data-step]')];"
            " return g.length === 8 && g.every(n => n.dataset.state === 'succeeded'); }",
            timeout=60_000,
        )
        page.wait_for_selector("body[data-status='succeeded']", timeout=30_000)
        body = page.locator("body")
        assert body.get_attribute("data-sse-done") == "8"  # every step reached the page by SSE
        assert page.locator("#bar-label").inner_text() == "8 / 8 done"
        assert page.locator("#timeline rect.bar.st-succeeded").count() == 8
        assert page.locator("#cancel").is_disabled()
        page.screenshot(path=str(ARTIFACTS / "run-finished.png"))

        page.get_by_role("link", name="report").click()
        page.wait_for_selector("#report table", timeout=30_000)
        assert "succeeded" in page.locator("#report").inner_text()
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        page.goto(server.url + "/runs")
        page.wait_for_selector("tr[data-run]", timeout=30_000)
    assert (ARTIFACTS / "run-finished.png").stat().st_size > 10_000


# Records every change of a step's state on the page, with the fill the step then has.
RECORDER = """
window.__seen = [];
new MutationObserver((records) => {
  for (const r of records) {
    const g = r.target;
    const rect = g.querySelector && g.querySelector("rect");
    if (!g.dataset || !g.dataset.step || !rect) continue;
    window.__seen.push({ step: g.dataset.step, from: r.oldValue,
                         to: g.getAttribute("data-state"), fill: getComputedStyle(rect).fill });
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"],
                       attributeOldValue: true });
"""
ORANGE, RED, VIOLET, GREEN, GREY = (
    "rgb(253, 186, 116)",  # --retrying
    "rgb(252, 165, 165)",  # --failed
    "rgb(196, 181, 253)",  # --dropped
    "rgb(134, 239, 172)",  # --succeeded
    "rgb(203, 213, 225)",  # --cancelled
)
FLAKY = """\
bindings:
  summarise:
    server: counter
    tool: flaky
    arguments: {name: "${d}", fails: 2}
    outputs: {done: "$.structured.attempts"}
    retries: 2
  index:
    server: counter
    tool: echo
    arguments: {x: "${summarise(d).done}"}
    outputs: {value: "$.structured.value"}
"""
FAILING_WITH_ALTERNATIVE = """\
bindings:
  summarise:
    server: counter
    tool: fail
    arguments: {message: "summariser down"}
  summarise_alt:
    server: counter
    tool: work
    arguments: {name: "alt-${d}"}
    outputs: {done: "$.structured.done"}
  index:
    server: counter
    tool: echo
    arguments: {x: "${d}"}
    outputs: {value: "$.structured.value"}
"""
ALTERNATIVE = """\
  summarise_alt:
    parameters: {d: document}
    precondition: [exists(d), not summarised(d)]
    effect: [summarised(d)]
    cost: 5
    tier: read
"""


def _new_run_plan_page(context: Any, url: str) -> Any:
    """Create a run on the domains page; its plan page, drawn (the run awaits approval)."""
    page = context.new_page()
    page.goto(url + "/")
    page.get_by_role("button", name="create run").click()
    page.wait_for_url("**/runs/*/plan", timeout=60_000)
    page.wait_for_selector("body[data-rendered]", timeout=30_000)
    return page


def _run_watched(context: Any, url: str) -> Any:
    """Create the run on the domains page, open its run page (recording every state
    change) while it awaits approval, approve it on its plan page, and wait until it
    ends; the run page."""
    planner = _new_run_plan_page(context, url)
    run_id = planner.url.split("/runs/")[1].split("/")[0]
    watcher = context.new_page()
    watcher.add_init_script(RECORDER)
    watcher.goto(f"{url}/runs/{run_id}")
    watcher.wait_for_function(
        "() => document.getElementById('status-line').textContent === 'live'", timeout=30_000
    )
    assert watcher.locator("body").get_attribute("data-status") == "awaiting approval"
    planner.get_by_role("button", name="Approve").click()
    watcher.wait_for_function(
        "() => ['succeeded', 'failed', 'cancelled'].includes(document.body.dataset.status)",
        timeout=60_000,
    )
    return watcher


def _node(page: Any, step: str) -> tuple[str, str]:
    """A step's state and the fill of its box."""
    state, fill = page.evaluate(
        "(id) => { const g = document.querySelector(`svg [data-step='${id}']`);"
        " return [g.dataset.state, getComputedStyle(g.querySelector('rect')).fill]; }",
        step,
    )
    return str(state), str(fill)


def test_a_step_that_fails_then_succeeds_turns_orange_while_retried_then_green(
    tmp_path: Path, browser_context: Any
) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=FLAKY)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        page = _run_watched(browser_context, server.url)
        seen = page.evaluate("() => window.__seen")
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        s1 = [(c["from"], c["to"]) for c in seen if c["step"] == "s1"]
        assert s1[0] == ("pending", "running")
        assert ("running", "retrying") in s1  # after the first failure, live over SSE
        assert s1[-1] == ("retrying", "succeeded")  # the third attempt succeeded
        assert {c["fill"] for c in seen if c["step"] == "s1" and c["to"] == "retrying"} == {ORANGE}
        assert _node(page, "s1") == ("succeeded", GREEN)
        assert _node(page, "s2") == ("succeeded", GREEN)
        page.locator("[data-step='s1']").click()
        assert "transient failure" in page.locator("#detail").inner_text()
        page.screenshot(path=str(ARTIFACTS / "run-retried.png"))


def test_a_failed_step_turns_red_and_the_replaced_rest_violet_when_replanned(
    tmp_path: Path, browser_context: Any
) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=FAILING_WITH_ALTERNATIVE)
    (root / "docs" / "domain.yaml").write_text(DOMAIN + ALTERNATIVE)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        page = _run_watched(browser_context, server.url)
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        seen = page.evaluate("() => window.__seen")
        assert {c["fill"] for c in seen if c["step"] == "s1" and c["to"] == "failed"} == {RED}
        assert _node(page, "s1") == ("failed", RED)
        assert _node(page, "s2") == ("dropped", VIOLET)  # index(d0) of the first plan
        nodes = page.locator("svg [data-step]")
        assert nodes.count() == 4  # the new steps are added to the graph
        added = [nodes.nth(i).get_attribute("data-step") for i in range(2, 4)]
        assert [_node(page, s) for s in added] == [("succeeded", GREEN)] * 2
        assert "summarise_alt(d0)" in page.locator("#graph").inner_text()
        assert page.locator("#bar-label").inner_text() == "2 / 3 done"  # the failed one counts
        page.screenshot(path=str(ARTIFACTS / "run-replanned.png"))


#: ``summarise`` finds no ``found`` (an optional output); ``index`` reads it and says skip
ABSENT = """\
bindings:
  summarise:
    server: counter
    tool: work
    arguments: {name: "${d}"}
    outputs: {found: {path: "$.structured.nothing", optional: true}}
  index:
    server: counter
    tool: echo
    arguments: {x: "${summarise(d).found}"}
    outputs: {value: "$.structured.value"}
    when_absent: skip
"""
CYAN = "rgb(165, 243, 252)"  # --skipped


def test_a_step_whose_value_is_absent_turns_skipped_and_counts_as_done(
    tmp_path: Path, browser_context: Any
) -> None:
    root = write_domains(tmp_path, sizes=(1,), bindings=ABSENT)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        page = _run_watched(browser_context, server.url)
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        seen = page.evaluate("() => window.__seen")
        assert [c["to"] for c in seen if c["step"] == "s2"][-1] == "skipped"  # live, over SSE
        assert _node(page, "s1") == ("succeeded", GREEN)
        assert _node(page, "s2") == ("skipped", CYAN)
        assert page.locator("#bar-label").inner_text() == "2 / 2 done"
        assert "1 skipped" in page.locator("#summary").inner_text()
        page.locator("[data-step='s2']").click()
        detail = page.locator("#detail").inner_text()
        assert "${summarise(d).found} (an output of step s1) is null" in detail
        page.screenshot(path=str(ARTIFACTS / "run-skipped.png"))


def test_the_runs_page_shows_fifty_runs_and_links_to_the_older_ones(
    tmp_path: Path, browser_page: Any
) -> None:
    from plansmith.execution import Emitter, RunFinished, SqliteRunLog

    log = SqliteRunLog(tmp_path / "home" / "runs.db")
    for k in range(51):
        run_id = f"r-page{k:03d}"
        log.create_run(run_id, f"2026-01-01T00:{k // 60:02d}:{k % 60:02d}.000Z", {})
        Emitter(log, run_id).emit(RunFinished(run_id=run_id, state="succeeded"))
    log.close()
    page = browser_page
    app = create_app(WebSettings(home=tmp_path / "home", domains=write_domains(tmp_path)))
    with ServerThread(app) as server:
        page.goto(server.url + "/runs")
        page.wait_for_selector("tr[data-run]", timeout=30_000)
        rows = page.locator("tr[data-run]")
        assert rows.count() == 50
        assert rows.first.get_attribute("data-run") == "r-page050"  # newest first
        assert page.locator("#newest-runs").count() == 0
        page.locator("#older-runs").click()
        page.wait_for_url("**/runs?before=r-page001", timeout=30_000)
        page.wait_for_selector("tr[data-run]", timeout=30_000)
        assert [r.get_attribute("data-run") for r in page.locator("tr[data-run]").all()] == [
            "r-page000"
        ]
        assert page.locator("#older-runs").count() == 0
        page.locator("#newest-runs").click()
        page.wait_for_url(server.url + "/runs", timeout=30_000)
        page.wait_for_selector("tr[data-run]", timeout=30_000)
        assert page.locator("tr[data-run]").count() == 50


SLEEPY = sleepy_bindings(60)


def test_cancel_on_the_run_page_turns_the_steps_in_flight_cancelled_live(
    tmp_path: Path, browser_context: Any
) -> None:
    root = write_domains(tmp_path, sizes=(2,), bindings=SLEEPY)
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        planner = _new_run_plan_page(browser_context, server.url)
        planner.get_by_role("button", name="Approve").click()
        planner.wait_for_url("**/runs/r-*", timeout=30_000)
        page = planner
        page.wait_for_function(  # both summarise steps sleep
            "() => document.querySelectorAll(\"svg [data-state='running']\").length === 2",
            timeout=60_000,
        )
        page.get_by_role("button", name="cancel").click()
        page.wait_for_selector("body[data-status='cancelled']", timeout=30_000)
        assert "cancelled from the web" in page.locator("body").inner_text()
        states = page.evaluate(
            "() => Object.fromEntries([...document.querySelectorAll('svg [data-step]')]"
            ".map(g => [g.dataset.step, g.dataset.state]))"
        )
        assert sorted(states.values()) == ["cancelled", "cancelled", "pending", "pending"]
        running = [s for s, st in states.items() if st == "cancelled"]
        assert _node(page, running[0]) == ("cancelled", GREY)
        page.wait_for_function(  # the summary is painted on the next animation frame
            "() => document.getElementById('summary').textContent.includes('2 cancelled')",
            timeout=10_000,
        )
        page.locator(f"[data-step='{running[0]}']").click()
        assert "cancelled with the run" in page.locator("#detail").inner_text()
        page.reload()  # the same, folded from the log
        page.wait_for_selector("body[data-status='cancelled']", timeout=30_000)
        assert page.locator("svg [data-state='cancelled']").count() == 2
        page.screenshot(path=str(ARTIFACTS / "run-cancelled.png"))


# The Cancel button as the page shows it: present (not hidden) and enabled, or not.
CANCEL_STATE = """() => { const b = document.getElementById('cancel');
  return { shown: !b.hidden && getComputedStyle(b).display !== 'none', enabled: !b.disabled }; }"""
LIVE, GONE = {"shown": True, "enabled": True}, {"shown": False, "enabled": False}
#: set on the page's window: still there after the run ended, so the page was not reloaded
MARK = "() => { window.__notReloaded = true; }"


def _create(url: str) -> dict[str, Any]:
    created = httpx.post(
        url + "/api/runs", json={"domain": "docs", "problem": "problem-1"}, timeout=60
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def _approve(url: str, run: dict[str, Any]) -> None:
    approved = httpx.post(
        f"{url}/api/runs/{run['run_id']}/approve", json={"plan_hash": run["plan_hash"]}, timeout=30
    )
    assert approved.status_code == 202, approved.text


def _live_run_page(page: Any, url: str, run: dict[str, Any]) -> None:
    """Open the run page of ``run`` (awaiting approval: Cancel is there), approve it, and
    wait until a step runs, listened to over SSE; Cancel is there and enabled."""
    page.goto(f"{url}/runs/{run['run_id']}")
    page.wait_for_function(
        "() => document.getElementById('status-line').textContent === 'live'", timeout=30_000
    )
    assert page.locator("body").get_attribute("data-status") == "awaiting approval"
    assert page.evaluate(CANCEL_STATE) == LIVE
    _approve(url, run)
    page.wait_for_selector("svg [data-state='running']", timeout=60_000)
    assert page.locator("body").get_attribute("data-status") == "running"
    assert page.evaluate(CANCEL_STATE) == LIVE
    assert page.get_by_role("button", name="Cancel").is_enabled()
    page.evaluate(MARK)


def test_the_cancel_button_is_there_while_the_run_is_live_and_gone_once_it_succeeded(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    root = write_domains(tmp_path, sizes=(1,), bindings=sleepy_bindings(1.5))
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        run = _create(server.url)
        _live_run_page(page, server.url, run)
        # the run ends on its own; the page learns it from RunFinished, not a reload
        page.wait_for_selector("#cancel", state="hidden", timeout=60_000)
        assert page.locator("body").get_attribute("data-status") == "succeeded"
        assert page.evaluate("() => window.__notReloaded") is True
        assert page.evaluate(CANCEL_STATE) == GONE
        assert page.get_by_role("button", name="Cancel").count() == 0  # not offered at all
        page.screenshot(path=str(ARTIFACTS / "run-finished-no-cancel.png"))

        page.reload()  # the finished run's page, as it is drawn from the API
        page.wait_for_selector("body[data-status='succeeded']", timeout=30_000)
        assert page.evaluate(CANCEL_STATE) == GONE
        assert page.locator("body").get_attribute("data-cancellable") == "false"
        # and the server refuses it all the same
        answer = httpx.post(f"{server.url}/api/runs/{run['run_id']}/cancel", json={}, timeout=30)
        assert answer.status_code == 409
        assert answer.json()["error"]["type"] == "ExecutionError"
    assert (ARTIFACTS / "run-finished-no-cancel.png").stat().st_size > 10_000


def test_the_cancel_button_goes_when_the_run_is_cancelled_elsewhere(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    root = write_domains(tmp_path, sizes=(1,), bindings=SLOW_BINDINGS)  # a step of 60 s
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    with ServerThread(app) as server:
        run = _create(server.url)
        _live_run_page(page, server.url, run)
        cancelled = httpx.post(
            f"{server.url}/api/runs/{run['run_id']}/cancel",
            json={"reason": "elsewhere"},
            timeout=60,
        )
        assert cancelled.status_code == 202, cancelled.text
        page.wait_for_selector("#cancel", state="hidden", timeout=30_000)
        assert page.locator("body").get_attribute("data-status") == "cancelled"
        assert page.evaluate("() => window.__notReloaded") is True
        assert page.evaluate(CANCEL_STATE) == GONE
        page.screenshot(path=str(ARTIFACTS / "run-cancelled-elsewhere.png"))


def test_the_index_says_why_a_domain_cannot_run_here_and_what_fixes_it(
    tmp_path: Path, browser_page: Any
) -> None:
    root = write_domains(tmp_path, sizes=(1,))
    plain = root / "plain"
    plain.mkdir()
    (plain / "domain.yaml").write_text((root / "docs" / "domain.yaml").read_text())
    (plain / "problem.yaml").write_text((root / "docs" / "problem-1.yaml").read_text())
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    page = browser_page
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector(".domain")
        cards = {c.locator("h2").text_content(): c for c in page.locator(".domain").all()}
        assert cards["docs"].locator(".not-ready").count() == 0
        assert cards["docs"].get_by_role("button", name="create run").is_enabled()
        plain_card = cards["plain"]
        assert plain_card.locator(".not-ready").inner_text() == (
            "cannot run here: plans only: the folder has no servers.json and bindings.yaml"
        )
        assert "docs/bindings.md" in plain_card.locator(".fix").inner_text()
        assert plain_card.get_by_role("button", name="create run").is_disabled()
        page.screenshot(path=str(ARTIFACTS / "index-readiness.png"))


def test_a_named_goal_is_chosen_planned_and_run_from_its_form(
    tmp_path: Path, browser_page: Any
) -> None:
    from test_web_goals import GOALS

    from _shared_servers import docs_domain

    root = write_domains(tmp_path, sizes=(3,), bindings=SLOWER)
    (root / "docs" / "domain.yaml").write_text(docs_domain(rest=GOALS))
    app = create_app(WebSettings(home=tmp_path / "home", domains=root))
    page = browser_page
    with ServerThread(app) as server:
        page.goto(server.url + "/")
        form = page.locator(".goal[data-goal='both']")
        form.wait_for()
        form.get_by_label("both a").select_option("d2")
        form.get_by_label("both b").select_option("d0")
        form.get_by_role("button", name="plan docs / both").click()
        form.locator(".goal-plan ol li").first.wait_for()
        preview = form.locator(".goal-plan").inner_text()
        assert "4 steps" in preview
        assert "summarise(d2)" in preview
        assert "(d1)" not in preview
        page.screenshot(path=str(ARTIFACTS / "goal-form.png"))
        form.get_by_role("button", name="create run for docs / both").click()
        page.wait_for_url("**/runs/*/plan", timeout=60_000)
        page.wait_for_selector("body[data-rendered='4']", timeout=30_000)
        page.get_by_role("button", name="Approve").click()
        page.wait_for_url("**/runs/r-*", timeout=30_000)
        page.wait_for_function(
            "() => { const g = [...document.querySelectorAll('svg [data-step]')];"
            " return g.length === 4 && g.every(n => n.dataset.state === 'succeeded'); }",
            timeout=60_000,
        )
