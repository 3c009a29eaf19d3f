"""Debian's headless chromium driven by Playwright (never a downloaded browser): the
fixtures of the browser tests, and where their screenshots and figures go."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")


@pytest.fixture
def browser_context(tmp_path: Path) -> Iterator[Any]:
    """A persistent context over a fresh, empty ``--user-data-dir``."""
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1440, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def browser_page(browser_context: Any) -> Any:
    return browser_context.new_page()
