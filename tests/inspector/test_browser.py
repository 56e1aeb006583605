"""The web inspector in real Chromium against a live ``oneiros serve`` process: a cycle run by an
``oneiros worker`` walks the diagram through the five phases, the cycle opens, a review promotes a
staged entry; a read-only token sees no review actions and the server refuses them anyway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.inspector.conftest import Shots
from tests.server.conftest import Server, start_server
from tests.server.test_rest import _cycle, _episodes, _ok
from tests.workers.support import Workers, worker_command

pytestmark = pytest.mark.timeout(420)

PHASE_STATES = [
    "Dreaming_HypnagogicOnset",
    "Dreaming_NREM",
    "Dreaming_REM",
    "Dreaming_Integration",
    "Dreaming_HypnopompicReturn",
]
PHASES = ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"]

# Records each state the diagram lights, in order, as the page draws it.
WATCH_DIAGRAM = """() => {
  window.__lit = [];
  const svg = document.querySelector('.diagram svg');
  new MutationObserver(() => {
    const now = svg.getAttribute('data-current');
    if (window.__lit[window.__lit.length - 1] !== now) window.__lit.push(now);
  }).observe(svg, { attributes: true, attributeFilter: ['data-current'] });
}"""


def _open(browser: Any, server: Server, token: str, route: str) -> tuple[Any, list[str]]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/#token={server.tokens[token]}&{route}")
    return page, errors


def _go(page: Any, route: str) -> None:
    page.evaluate(f"location.hash = '#/{route}'")


@pytest.fixture
def queued(tmp_path: Path, redis_url: str) -> Any:
    """A server on SQLite whose cycles go to ``oneiros worker`` processes on its own Redis."""
    running = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", "--queue", redis_url)
    yield running
    running.stop()


def test_a_worker_cycle_walks_the_diagram_then_a_review_promotes(  # noqa: PLR0915 - one walk through every view, so the server, worker and browser start once
    browser: Any,
    queued: Server,
    redis_url: str,
    tmp_path: Path,
    shots: Shots,
) -> None:
    """The golem page lights Waking, then each of the five phases in the machine's order as an
    ``oneiros worker`` runs the cycle, then Waking again; the cycle page shows five timed phases, the
    worker's trace and what was staged; promoting an entry on its page shows ``promoted`` at once
    and the API agrees, and the page then offers Revoke alone (no Promote or Reject); the memory page
    shows the new MEMORY.md version's diff; revoking the entry leaves no decision to take and the
    newest MEMORY.md version's diff removes its line."""
    from playwright.sync_api import expect

    server = queued
    http = server.client("write")
    _ok(http.post("/golems", json={"golem_id": "g1", "name": "trader"}), 201)
    _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
    page, errors = _open(browser, server, "write", "golems/g1")
    expect(page.locator(".live.on")).to_be_visible(timeout=60_000)
    expect(page.locator('[data-state="Waking"]')).to_have_attribute("data-lit", "true")
    page.evaluate(WATCH_DIAGRAM)

    enqueued = _ok(http.post("/golems/g1/cycles", json={"max_outputs": 4}), 202)
    assert "enqueued" == enqueued["status"]
    cycle_id = enqueued["cycle_id"]
    workers = Workers(worker_command(redis_url, server.store, tmp_path / "serve" / "spans.jsonl"), tmp_path)
    workers.start(1)
    try:
        page.wait_for_function("() => window.__lit.includes('Dreaming_REM')", timeout=120_000)
        shots.take(page, "golem-dreaming", docs=True)
        page.wait_for_function("() => window.__lit[window.__lit.length - 1] === 'Waking'", timeout=120_000)
    finally:
        workers.stop()
    assert [*PHASE_STATES, "Waking"] == page.evaluate("window.__lit")
    assert PHASES == page.locator("[data-testid=trail] li").all_inner_texts()
    expect(page.locator('[data-state="Waking"]')).to_have_attribute("data-lit", "true")
    shots.take(page, "golem", docs=True, full_page=True)

    page.locator(f'tr[data-cycle="{cycle_id}"] a').click()
    expect(page.locator("[data-testid=timeline] tbody tr")).to_have_count(5, timeout=30_000)
    assert PHASES == page.locator("[data-testid=timeline] tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.phase)"
    )
    expect(page.locator("[data-testid=waterfall] li").first).to_be_visible()
    workers_seen = page.locator("[data-testid=timeline] tbody td.mono").all_inner_texts()
    assert any(w.startswith("pid ") for w in workers_seen), workers_seen
    shots.take(page, "cycle", docs=True)

    every = _ok(http.get("/golems/g1/staging"))["items"]
    staged = [d for d in every if d["status"] == "proposed"]
    chosen = staged[0]["entry_id"]
    for tick, verdict in ((30, "confirms"), (31, "confirms"), (32, "contradicts")):
        _ok(
            http.post(
                "/golems/g1/outcomes",
                json={"tick": tick, "verdict": verdict, "entry_id": chosen, "summary": f"live trade at tick {tick}"},
            ),
            201,
        )
    _go(page, "golems/g1/staging")
    expect(page.locator("ul.entries > li")).to_have_count(len(every), timeout=30_000)
    shots.take(page, "staging", docs=True)

    page.locator(f'li[data-dream="{chosen}"] a').click()
    expect(page.locator("[data-testid=status]")).to_have_text("proposed", timeout=30_000)
    expect(page.locator(".chart circle")).to_have_count(4)
    expect(page.locator("td", has_text="outcome @")).to_have_count(3)
    page.get_by_label("Reason (recorded with the decision)").fill("confirmed twice in live trading")
    page.locator("[data-decision=promote_candidate]").click()
    expect(page.locator("[data-testid=status]")).to_have_text("promoted", timeout=30_000)
    expect(page.get_by_text("promote_candidate by writer: confirmed twice in live trading")).to_be_visible()
    assert "promoted" == _ok(http.get(f"/dreams/{chosen}"))["status"]
    assert ["revoke"] == page.locator("[data-decision]").evaluate_all("bs => bs.map(b => b.dataset.decision)")
    shots.take(page, "dream", docs=True, full_page=True)

    other = staged[1]["entry_id"]
    _ok(http.post(f"/dreams/{other}/feedback", json={"decision": "promote_candidate", "feedback": "also"}))
    _go(page, "golems/g1/memory")
    expect(page.locator("[data-testid=diff] .add")).to_have_count(1, timeout=30_000)
    shots.take(page, "memory", docs=True, full_page=True)

    _go(page, f"dreams/{chosen}")
    expect(page.locator("[data-testid=status]")).to_have_text("promoted", timeout=30_000)
    page.get_by_label("Reason (recorded with the decision)").fill("the rally was a one-off")
    page.locator("[data-decision=revoke]").click()
    expect(page.locator("[data-testid=status]")).to_have_text("revoked", timeout=30_000)
    expect(page.get_by_text("revoke by writer: the rally was a one-off")).to_be_visible()
    expect(page.locator("[data-decision]")).to_have_count(0)
    expect(page.locator("[data-testid=settled]")).to_be_visible()
    _go(page, "golems/g1/memory")
    expect(page.locator("[data-testid=diff] .del")).to_have_count(1, timeout=30_000)
    expect(page.get_by_text(f"revoked {chosen} by writer: the rally was a one-off")).to_be_visible()

    _go(page, "")
    expect(page.locator('tr[data-golem="g1"] [data-field=mode]')).to_have_text("Waking", timeout=30_000)
    shots.take(page, "golems", docs=True)

    page.set_viewport_size({"width": 390, "height": 844})
    _go(page, "golems/g1")
    expect(page.locator(".live.on")).to_be_visible(timeout=30_000)
    shots.take(page, "golem-phone", docs=True, full_page=True)
    assert [] == errors
    page.close()


def test_a_read_only_token_sees_no_review_actions_and_the_server_refuses_them(
    browser: Any, tmp_path: Path, shots: Shots
) -> None:
    """With a read token the dream page says so and offers no decision buttons; the same POST the
    buttons would send answers 403 Forbidden and the dream stays as it was. The page is usable by
    keyboard: the first Tab reaches the skip link, which moves focus to the content."""
    from playwright.sync_api import expect

    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = server.client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        _cycle(http, "g1", {"max_outputs": 2})
        dream = _ok(http.get("/golems/g1/staging"))["items"][0]["entry_id"]

        page, errors = _open(browser, server, "read", f"dreams/{dream}")
        expect(page.locator("[data-testid=read-only]")).to_be_visible(timeout=60_000)
        expect(page.locator("[data-decision]")).to_have_count(0)
        expect(page.locator("[data-testid=status]")).to_have_text("proposed")
        page.keyboard.press("Tab")
        assert "Skip to content" == page.evaluate("document.activeElement.textContent")
        page.keyboard.press("Enter")
        assert "main" == page.evaluate("document.activeElement.id")
        shots.take(page, "dream-read-only")
        assert [] == errors
        page.close()

        refused = server.client("read").post(
            f"/dreams/{dream}/feedback", json={"decision": "promote_candidate", "feedback": "sneaky"}
        )
        assert 403 == refused.status_code
        assert "Forbidden" == refused.json()["error"]["type"]
        assert "proposed" == _ok(http.get(f"/dreams/{dream}"))["status"]
    finally:
        server.stop()


def test_the_inspector_is_served_at_the_root_without_a_token(tmp_path: Path) -> None:
    """``/`` serves the built inspector (no token needed for static files; its API calls carry one),
    its scripts come from the server itself, and the answer forbids any other origin by CSP."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        root = httpx.get(server.url + "/")
        assert 200 == root.status_code
        assert "text/html" in root.headers["content-type"]
        assert "default-src 'self'" in root.headers["content-security-policy"]
        assert "<title>oneiros inspector</title>" in root.text
        assert "http" not in root.text.split("<body>")[1], "no script or style from elsewhere"
        script = root.text.split('src="')[1].split('"')[0]
        assert 200 == httpx.get(server.url + script).status_code
        assert 401 == httpx.get(server.url + "/api/v1/whoami").status_code
    finally:
        server.stop()


def test_the_golem_page_shows_the_dreaming_health_alarms(browser: Any, tmp_path: Path) -> None:
    """With [health] no_promotion_cycles = 1 (ONEIROS_HEALTH__*), one cycle raises no_promotion:
    the golem page's health panel names the alarm and its detail."""
    from playwright.sync_api import expect

    env = {"ONEIROS_HEALTH__NO_PROMOTION_CYCLES": "1"}
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env=env)
    try:
        http = server.client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        _cycle(http, "g1", {"max_outputs": 2})
        # The cycle ended and the validation layer has settled: the alarm is in the log.
        assert ["no_promotion"] == [a["alarm"] for a in _ok(http.get("/golems/g1/health"))["alarms"]]
        page, errors = _open(browser, server, "read", "golems/g1")
        alarm = page.locator("[data-testid=health] [data-alarm=no_promotion]")
        expect(alarm).to_be_visible(timeout=60_000)
        expect(alarm).to_contain_text("1 cycle in a row without a promotion")
        assert [] == errors
        page.close()
    finally:
        server.stop()
