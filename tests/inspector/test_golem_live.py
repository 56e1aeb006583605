"""The golem page's cycle list once a cycle it watched has ended, in real Chromium against a live
``oneiros serve``, with the cycle dreamt by another process (``oneiros dream``)."""

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


def _dreamt_once(tmp_path: Path) -> tuple[str, dict[str, str], list[str]]:
    """A store where ``oneiros dream --sample`` ran one cycle; its URL, the environment the CLI runs
    in and the command line of a further ``dream --json``."""
    store = f"sqlite:///{tmp_path}/events.db"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"ONEIROS_SPANS": "off"}
    dream = [sys.executable, "-m", "oneiros", "dream", "--store", store, "--json"]
    subprocess.run([*dream, "--sample"], cwd=tmp_path, env=environ, check=True, capture_output=True)
    return store, environ, dream


def test_the_cycle_list_shows_a_watched_cycle_complete_once_it_ends(browser: Any, tmp_path: Path) -> None:
    """A golem page open while ``oneiros dream`` runs a cycle: when the diagram is back in Waking,
    the cycle list shows that cycle complete with what it staged, not the 'dreaming, 0 staged' or
    'complete, 0 staged' row read while the server's projections and staging process were still
    behind the event stream (it stayed so)."""
    from playwright.sync_api import expect

    store, environ, dream = _dreamt_once(tmp_path)
    server = start_server(store, tmp_path / "serve")
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/#token={server.tokens['read']}&golems/golem")
        expect(page.locator(".live.on")).to_be_visible(timeout=60_000)
        expect(page.locator("tr[data-cycle]")).to_have_count(1, timeout=30_000)
        ran = subprocess.run(dream, cwd=tmp_path, env=environ, check=True, capture_output=True, text=True)
        cycle = json.loads(ran.stdout)["cycle_id"]
        expect(page.locator('[data-state="Waking"]')).to_have_attribute("data-lit", "true", timeout=60_000)
        row = page.locator(f'tr[data-cycle="{cycle}"]')
        expect(row.locator("td").first).to_have_text("complete", timeout=15_000)
        journal = [*dream[:3], "journal", "--store", store, "--json"]
        entries = json.loads(subprocess.run(journal, cwd=tmp_path, env=environ, check=True, capture_output=True).stdout)
        staged = next(e["staged"] for e in entries if e["cycle_id"] == cycle)
        assert staged > 0
        expect(row.locator("td.num").first).to_have_text(str(staged), timeout=15_000)
        assert [] == errors
        page.close()
    finally:
        server.stop()


def test_the_golems_list_counts_a_watched_cycle_once_it_ends(browser: Any, tmp_path: Path) -> None:
    """The golems list open while ``oneiros dream`` runs a second cycle: once it ends the golem's row
    says Waking with no cycle and 2 cycles, where it kept the ended cycle's id and said 1 until the
    page was reloaded."""
    from playwright.sync_api import expect

    store, environ, dream = _dreamt_once(tmp_path)
    server = start_server(store, tmp_path / "serve")
    try:
        page = browser.new_page()
        page.goto(f"{server.url}/#token={server.tokens['read']}&")
        row = page.locator('tr[data-golem="golem"]')
        expect(row.locator("td.num").nth(1)).to_have_text("1", timeout=60_000)
        page.wait_for_timeout(1000)  # the list subscribes to the stream once it has read the head
        subprocess.run(dream, cwd=tmp_path, env=environ, check=True, capture_output=True)
        expect(row.locator("td.num").nth(1)).to_have_text("2", timeout=15_000)
        assert ("Waking", "—") == (row.locator("[data-field=mode]").inner_text(), row.locator("td.mono").inner_text())
        page.close()
    finally:
        server.stop()
