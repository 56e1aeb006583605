"""Bardo's staging buffer, with its numbers: a full buffer (maxStagedRevisions = 10) makes
room by utility score, and entries wait for live validation however long the golem was away."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oneiros.events._staging import EntryDisplaced
from oneiros.events._types import Episode, Outcome
from oneiros.store._store import open_store
from tests.cli_runner import run_cli
from tests.projections_support import World, staged


def _world(**settings: object) -> World:
    world = World(open_store("memory://"), "g1", **settings)
    world.golems.record_episodes(
        world.golem,
        [
            # gain = surprise + |pnl| x 10 + regret: 0.9 + 0.6 + 0.3 = 1.8; need = 0.5 + significance 0.5
            Episode(
                tick=1,
                summary="liquidation cascade",
                tags=("eth",),
                outcome=Outcome(surprise=0.9, pnl=-0.06, regret=0.3),
            ),
            Episode(tick=2, summary="quiet drift", tags=("eth",)),
        ],
    )
    world.tick = 2
    return world


@pytest.mark.parametrize(("displace_by", "victim"), [("utility", "quiet"), ("confidence", "first")])
def test_a_full_buffer_displaces_the_lowest_utility_entry(displace_by: str, victim: str) -> None:
    """Ten entries fill Bardo's buffer: nine hypotheses at 0.2 drawn from a surprising loss (utility
    1.8 x 1.0 = 1.8) and one insight at 0.3 drawn from a quiet episode (utility 0). The eleventh
    displaces the quiet insight, though it has the highest confidence; by confidence it would have
    been the oldest 0.2 hypothesis."""
    world = _world(displace_by=displace_by)
    world.dream(
        [staged("CYCLE", i, "strategy_hypothesis", f"hypothesis {i}", 0.2, ticks=(1,)) for i in range(9)]
        + [staged("CYCLE", 9, "novel_insight", "[eth] quiet insight", 0.3, ticks=(2,))]
    )
    world.dream([staged("CYCLE", 10, "strategy_hypothesis", "the eleventh", 0.2, ticks=(1,))])
    entries = world.entries()
    displaced = [e for e, v in entries.items() if v.status == "displaced"]
    expected = "CYCLE:010" if victim == "quiet" else "CYCLE:001"
    assert [expected] == displaced
    assert 10 == sum(v.active for v in entries.values())
    (event,) = [r.event for r in world.store.read_all() if isinstance(r.event, EntryDisplaced)]
    assert (0 if victim == "quiet" else 20) == event.utility_pct


@pytest.mark.parametrize(("expire_after_ticks", "status", "confidence"), [(None, "proposed", 30), (500, "expired", 20)])
def test_an_outcome_after_a_long_waking_gap_still_reaches_its_entry(
    expire_after_ticks: int | None, status: str, confidence: int
) -> None:
    """Staged at tick 2, confirmed at tick 100 002 after 100 000 waking ticks: with no expiry (the
    default) the confirmation moves 0.2 to 0.3 (+0.1); with a 500-tick expiry the entry has expired."""
    world = _world(expire_after_ticks=expire_after_ticks)
    world.dream([staged("CYCLE", 0, "strategy_hypothesis", "a hypothesis", 0.2, ticks=(1,))])
    (entry_id,) = world.entries()
    world.episodes(100_001)
    world.outcome("confirms", entry_id, tick=100_002)
    entry = world.entry(entry_id)
    assert (status, confidence) == (entry.status, entry.confidence_pct)


def _oneiros(cwd: Path, *args: str, **env: str) -> str:
    done = run_cli(
        [*args], cwd=cwd, env={**{k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}, **env}
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout


def test_the_cli_keeps_entries_through_a_gap_unless_the_config_sets_an_expiry(tmp_path: Path) -> None:
    """On the user's path: after ``oneiros dream`` on the sample episodes (ticks up to 951), an
    outcome at tick 100 000 still confirms an entry; with ``ONEIROS_STAGING__EXPIRE_AFTER_TICKS=500``
    the same outcome finds it expired."""
    for name, env, expected in (
        ("kept", {}, "proposed"),
        ("expiring", {"ONEIROS_STAGING__EXPIRE_AFTER_TICKS": "500"}, "expired"),
    ):
        cwd = tmp_path / name
        cwd.mkdir()
        _oneiros(cwd, "dream", "--sample")
        entries = json.loads(_oneiros(cwd, "staging", "--json", "--status", "proposed", **env))
        target = next(e for e in entries if e["kind"] == "playbook_revision")
        _oneiros(
            cwd,
            "outcome",
            "--golem",
            "golem",
            "--tick",
            "100000",
            "--verdict",
            "confirms",
            "--entry",
            target["entry_id"],
            **env,
        )
        after = {e["entry_id"]: e for e in json.loads(_oneiros(cwd, "staging", "--json", **env))}
        moved = after[target["entry_id"]]
        assert (expected, 0.3 if expected == "proposed" else 0.2) == (moved["status"], moved["confidence"])
