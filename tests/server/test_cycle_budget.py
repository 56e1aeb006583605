"""A cycle's budget route (the inspector's budget gauges) judges the cycle by the caps it ran with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import start_server
from tests.server.test_rest import _ok

pytestmark = pytest.mark.timeout(180)


def test_a_hardened_cycle_is_judged_by_the_hardened_caps_it_recorded(tmp_path: Path) -> None:
    """A cycle dreamt with ``--tier hardened`` and served by a server on the default (core) config:
    ``GET /golems/{id}/cycles/{cycle}/budget`` gives the hardened tier and its 60,000-token cycle
    cap the cycle recorded in its DreamStart, not core's 12,000 (a hardened cycle may spend past
    that, and the inspector then showed a hard budget overrun that never happened)."""
    store = f"sqlite:///{tmp_path}/events.db"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    dream = [sys.executable, "-m", "oneiros", "dream", "--sample", "--tier", "hardened", "--store", store, "--json"]
    subprocess.run(dream, cwd=tmp_path, env=environ | {"ONEIROS_SPANS": "off"}, check=True, capture_output=True)
    server = start_server(store, tmp_path / "serve")
    try:
        http = server.client("read")
        cycle = _ok(http.get("/golems/golem/journal"))["items"][0]["cycle_id"]
        budget = _ok(http.get(f"/golems/golem/cycles/{cycle}/budget"))
        assert ("hardened", "cycle", 60_000) == (
            budget["tier"],
            budget["caps"][0]["cap"],
            budget["caps"][0]["token_cap"],
        )
    finally:
        server.stop()


def test_a_cycles_window_day_and_month_gauges_count_the_golems_earlier_spend(tmp_path: Path) -> None:
    """Two cycles a moment apart: the second's budget gives its own spend on the cycle cap and both
    cycles' spend on the four-hour window's, as the budget guard counted them when it ran (the
    gauges showed the second cycle's spend alone against the window's cap, and the day's and the
    month's, which are calendar ones and so not compared here)."""
    from oneiros import Golems, InProcessExecutor, load_episodes, open_store
    from oneiros.app import Oneiros
    from oneiros.config._load import load_config
    from oneiros.episodes._episodes import sample_episodes_path

    store = open_store(f"sqlite:///{tmp_path}/events.db", create=True)
    app = None
    try:
        golems = Golems(store)
        golems.create("g1")
        golems.record_episodes("g1", load_episodes(sample_episodes_path()))
        executor = InProcessExecutor(golems)
        first, second = (executor.run_cycle("g1") for _ in range(2))
        app = Oneiros(store, load_config(None), deps=golems.deps)
        budgets = [app.budget("g1", r.cycle_id) for r in (first, second)]
        tokens = [b.tokens_in + b.tokens_out for b in budgets]
        caps = {c.cap: c.tokens for c in app.budget("g1", second.cycle_id).caps}
        assert (tokens[1], sum(tokens)) == (caps["cycle"], caps["window"])
    finally:
        if app is not None:
            app.close()
        store.close()
