"""Fixtures of the inspector's browser tests: Debian's Chromium driven by Playwright for Python.

Chromium is installed by ``scripts/test`` (apt-get install chromium); Playwright's own browser
download is never used. Without Chromium or Playwright the browser tests skip, except under
``CI=true``, where they fail."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workers.conftest import redis_url  # noqa: F401 - the fixture, shared

CHROMIUM = os.environ.get("ONEIROS_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
DOCS_SHOTS = ROOT / "docs" / "screenshots"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (scripts/test installs Debian's chromium package)"
    try:
        import playwright.sync_api  # noqa: F401 - only to know it is there
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that drives Chromium is marked ``browser``: ``scripts/test`` installs Chromium only
    when one is selected, and ``--quick`` leaves them out. They share one pytest-xdist worker
    (``--dist loadgroup``), so Chromium starts once per module there rather than on every worker."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="module")  # Playwright's sync API holds an event loop: close it before other modules run
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the browser tests, with a fresh profile directory."""
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; CI must have it")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        # A persistent context is the only way to give Chromium its own --user-data-dir.
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True, viewport={"width": 1280, "height": 900}
        )
        try:
            yield context
        finally:
            context.close()


class Shots:
    """Screenshots kept as test artifacts (``$ONEIROS_SCREENSHOTS`` or the pytest tmp dir), and,
    with ``ONEIROS_DOCS_SCREENSHOTS=1``, the documentation's copies in docs/screenshots/."""

    def __init__(self, artifacts: Path) -> None:
        self.artifacts = artifacts
        self.docs = os.environ.get("ONEIROS_DOCS_SCREENSHOTS") == "1"

    def take(self, page: Any, name: str, *, docs: bool = False, full_page: bool = False) -> Path:
        path = self.artifacts / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        if docs and self.docs:
            DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"), full_page=full_page)
        return path


@pytest.fixture
def shots(tmp_path: Path) -> Shots:
    where = os.environ.get("ONEIROS_SCREENSHOTS")
    artifacts = Path(where) if where else tmp_path / "screenshots"
    artifacts.mkdir(parents=True, exist_ok=True)
    return Shots(artifacts)
