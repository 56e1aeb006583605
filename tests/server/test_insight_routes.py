"""The insight routes against a real ``oneiros serve`` on SQLite and PostgreSQL: a golem's health
alarms (recorded by the server's own follower, with the [health] thresholds from the
environment) and a dream's exact lineage; both scope-checked like the other golem routes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import Server, start_server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def strict_server(store_url: str, tmp_path: Path) -> Iterator[Server]:
    """A server whose health process raises no_promotion after a single cycle."""
    running = start_server(store_url, tmp_path / "serve", env={"ONEIROS_HEALTH__NO_PROMOTION_CYCLES": "1"})
    yield running
    running.stop()


def _health(http: httpx.Client, golem: str) -> dict[str, Any]:
    # The follower records the alarm shortly after the cycle's events: wait for it, briefly.
    deadline = time.monotonic() + 30
    while True:
        health: dict[str, Any] = _ok(http.get(f"/golems/{golem}/health"))
        if health["alarms"] or time.monotonic() > deadline:
            return health
        time.sleep(0.2)


def test_health_and_lineage_routes(strict_server: Server) -> None:
    """After one cycle the no_promotion alarm is raised (threshold 1 from ONEIROS_HEALTH__*), once;
    a dream's lineage names its generator call; another golem's token gets 403 for the health
    and 404 for the dream; an unknown golem is 404."""
    http = strict_server.client("admin")
    cycle = _dreamt(http)
    health = _health(http, "g1")
    assert [("no_promotion", cycle["cycle_id"], 1.0)] == [
        (a["alarm"], a["cycle_id"], a["threshold"]) for a in health["alarms"]
    ]
    assert ["HealthAlarmRaised"] == [h["type"] for h in health["history"]]
    dream = _ok(http.get("/dreams", params={"golem": "g1", "status": "proposed"}))["items"][0]["entry_id"]
    lineage = _ok(http.get(f"/dreams/{dream}/lineage"))
    assert dream == lineage["entry_id"]
    assert lineage["exact"]
    assert lineage["generation"]["call_key"].startswith(cycle["cycle_id"] + ":")
    other = strict_server.client("g2")
    assert 403 == other.get("/golems/g1/health").status_code
    assert 404 == other.get(f"/dreams/{dream}/lineage").status_code
    assert 404 == http.get("/golems/nobody/health").status_code
