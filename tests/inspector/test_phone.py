"""The inspector's pages on a phone-wide window, in real Chromium against a live ``oneiros serve``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import start_server

pytestmark = pytest.mark.timeout(300)


def test_no_page_is_wider_than_a_phone(browser: Any, tmp_path: Path) -> None:
    """At 390 px wide the golem, cycle, staging, dream and memory pages scroll only down: a dream's
    page, whose heading is a 36-character entry id, was 433 px wide and cut the id off."""
    from playwright.sync_api import expect

    store = f"sqlite:///{tmp_path}/events.db"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"ONEIROS_SPANS": "off"}
    run = [sys.executable, "-m", "oneiros"]
    dreamt = subprocess.run(
        [*run, "dream", "--sample", "--store", store, "--json"],
        cwd=tmp_path,
        env=environ,
        check=True,
        capture_output=True,
    )
    cycle = json.loads(dreamt.stdout)["cycle_id"]
    server = start_server(store, tmp_path / "serve")
    try:
        page = browser.new_page()
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{server.url}/#token={server.tokens['read']}&golems/golem")
        expect(page.locator("h1")).to_contain_text("golem", timeout=60_000)
        widths = {}
        for route in (
            "golems/golem",
            f"golems/golem/cycles/{cycle}",
            "golems/golem/staging",
            f"dreams/{cycle}:001",
            "golems/golem/memory",
        ):
            page.evaluate(f"location.hash = '#/{route}'")
            expect(page.locator("main .card").first).to_be_visible(timeout=30_000)
            page.wait_for_timeout(500)
            widths[route] = page.evaluate("document.documentElement.scrollWidth")
        assert {route: 390 for route in widths} == widths
        page.close()
    finally:
        server.stop()


FITS = """() => [...document.querySelectorAll('.diagram g.state:not(.compound)')].map((g) => {
  const box = g.querySelector('rect').getBBox(), text = g.querySelector('text').getBBox();
  return [g.dataset.state, text.x >= box.x && text.x + text.width <= box.x + box.width];
})"""


@pytest.mark.parametrize("width", [1280, 390])
def test_each_state_name_fits_its_box_in_the_diagram(browser: Any, tmp_path: Path, width: int) -> None:
    """In the golem page's diagram, wide and on a phone, every state's name lies inside its box:
    'Hypnopompic Return' ran past both sides of its 150-unit box."""
    from playwright.sync_api import expect

    store = f"sqlite:///{tmp_path}/events.db"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"ONEIROS_SPANS": "off"}
    create = [sys.executable, "-m", "oneiros", "dream", "--sample", "--store", store, "--json"]
    subprocess.run(create, cwd=tmp_path, env=environ, check=True, capture_output=True)
    server = start_server(store, tmp_path / "serve")
    try:
        page = browser.new_page()
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server.url}/#token={server.tokens['read']}&golems/golem")
        expect(page.locator('.diagram [data-state="Dreaming_HypnopompicReturn"]')).to_be_visible(timeout=60_000)
        fits = dict(page.evaluate(FITS))
        assert {state: True for state in fits} == fits
        assert "Dreaming_HypnopompicReturn" in fits
        page.close()
    finally:
        server.stop()
