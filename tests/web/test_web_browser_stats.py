"""The stats page in Debian's headless chromium (Playwright, no browser download): over
the log of _metrics_log.py, its SVG charts hold a bar per domain and outcome, per tool
and result, per day and outcome, each with the count counted by hand; the nav links to
it. The screenshot goes to tests/web/artifacts/stats-page.png. Skipped when
/usr/bin/chromium or Playwright is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _browser import ARTIFACTS, browser_context, browser_page, needs_chromium
from _metrics_log import write_known_log
from _web_helpers import ServerThread, write_domains

from plansmith.web import WebSettings, create_app

__all__ = ["browser_context", "browser_page"]  # fixtures, used by name

pytestmark = [needs_chromium, pytest.mark.e2e]


def _bars(page: Any, selector: str) -> dict[str, str]:
    """``{data-kind: data-count}`` of the bars under ``selector``."""
    bars = page.locator(selector + " rect.bar")
    return {
        bars.nth(i).get_attribute("data-kind"): bars.nth(i).get_attribute("data-count")
        for i in range(bars.count())
    }


def test_the_stats_page_draws_a_bar_per_count_of_the_log(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    home = tmp_path / "home"
    home.mkdir()
    write_known_log(home)
    app = create_app(WebSettings(home=home, domains=write_domains(tmp_path)))
    with ServerThread(app) as server:
        page.goto(server.url + "/runs")
        page.get_by_role("link", name="stats").click()
        page.wait_for_url("**/stats")
        # 4 bars per domain and outcome, 5 per tool and result, 4 per day and outcome
        page.wait_for_selector("body[data-rendered='13']", timeout=30_000)

        domains = "#domains-chart"
        assert page.locator(f"{domains} g[data-row]").count() == 3
        assert _bars(page, f"{domains} g[data-domain='docs']") == {"succeeded": "1", "failed": "1"}
        assert _bars(page, f"{domains} g[data-domain='drug-target']") == {"succeeded": "1"}
        assert _bars(page, f"{domains} g[data-domain='lab']") == {"cancelled": "1"}
        assert page.locator(f"{domains} g[data-domain='docs']").get_attribute("data-runs") == "2"
        assert "50% completed" in page.locator(f"{domains} g[data-domain='docs']").inner_html()

        tools = "#tools-chart"
        assert page.locator(f"{tools} g[data-row]").count() == 4
        expected = {
            "counter/echo": ("2", {"succeeded": "2"}),
            "counter/fail": ("2", {"failed": "2"}),
            "counter/sleep": ("2", {"succeeded": "1", "failed": "1"}),
            "dt/score": ("1", {"succeeded": "1"}),
        }
        for tool, (calls, bars) in expected.items():
            row = f"{tools} g[data-tool='{tool}']"
            assert page.locator(row).get_attribute("data-calls") == calls, tool
            assert _bars(page, row) == bars, tool

        windows = "#windows-chart g[data-window]"
        assert page.locator(windows).count() == 2
        first, second = page.locator(windows).nth(0), page.locator(windows).nth(1)
        assert first.get_attribute("data-window") == "2026-01-01T00:00:00Z"
        assert _bars(page, "#windows-chart g[data-window='2026-01-01T00:00:00Z']") == {
            "succeeded": "1", "failed": "1"
        }  # fmt: skip
        assert _bars(page, "#windows-chart g[data-window='2026-01-02T00:00:00Z']") == {
            "succeeded": "1", "cancelled": "1"
        }  # fmt: skip
        assert second.get_attribute("data-runs") == "2"

        totals = page.locator("#totals")
        assert totals.locator("tr[data-figure='runs'] td").inner_text() == "4"
        assert "50% (2 of 4 finished)" in totals.inner_text()
        assert "3 (2 approvals by a person, 1 cancel, 0 run retries)" in totals.inner_text()
        assert "p50 20 s, p95 120 s (2 approvals)" in totals.inner_text()
        assert page.locator("#failures tr[data-failure='counter/fail/tool_error']").count() == 1
        assert page.locator("#failures tr[data-failure]").count() == 2
        page.screenshot(path=str(ARTIFACTS / "stats-page.png"), full_page=True)

        # per hour: one bar row per run's hour
        page.select_option("#window", "1h")
        page.wait_for_url("**/stats?window=1h")
        page.wait_for_selector("body[data-rendered]", timeout=30_000)
        assert page.locator("#windows-chart g[data-window]").count() == 4
    assert (ARTIFACTS / "stats-page.png").stat().st_size > 10_000
