"""Offline reasoning speaks the episodes' own language: no domain's vocabulary is built in, and the
observations page shows facts, not dream images."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._observations import DreamObservation
from oneiros.events._types import EpisodeRecorded, GenerationRecorded
from oneiros.projections._sinks import observations
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings, RemSettings
from oneiros.settings._vocabulary import Tier
from oneiros.store._store import EventStore
from tests.cli_runner import run_cli
from tests.doc_blocks import ROOT
from tests.projections_support import World, staged

_TRADING = (
    "trade", "trades", "trading", "market", "markets", "size", "sized", "position", "positions", "side",
    "long", "short", "pnl", "gained", "gain", "entry", "exit", "slippage", "liquidation", "liquidations",
    "exposure", "price", "prices", "profit", "hedge", "oracle",
)  # fmt: skip
_FIGURE = re.compile(r"[+-]\d+\.\d%")


def _dream(episodes_file: str, tier: Tier) -> tuple[str, str]:
    """The text of every output of one offline cycle over ``episodes_file`` (every engine on, at
    ``tier``), and the episodes' own text."""
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds("c"), seed=5),
    )
    golems.create("g")
    golems.record_episodes("g", load_episodes(episodes_file))
    every_engine = EngineSettings(rem=RemSettings(core_tier_limits=False))
    InProcessExecutor(golems, settings=CycleSettings(budget=CycleBudget(tier=tier), engines=every_engine)).run_cycle(
        "g"
    )
    return _texts(golems.store, skip=(EpisodeRecorded, GenerationRecorded)), _texts(golems.store, only=EpisodeRecorded)


def _texts(store: EventStore, *, skip: tuple[type, ...] = (), only: type | None = None) -> str:
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for record in store.read_all():
        if (only is not None and not isinstance(record.event, only)) or isinstance(record.event, skip):
            continue
        walk(msgspec.to_builtins(record.event))
    return "\n".join(out).lower()


@pytest.mark.parametrize("tier", ["core", "hardened"])
def test_a_coding_agents_week_dreams_in_its_own_words(tier: Tier) -> None:
    """Dreaming examples/episodes.jsonl (a coding agent's week) offline, with every engine on: no
    trader's word appears in any output unless the episodes used it, and no outcome is written as a
    percentage, since no episode gave its outcome as one."""
    outputs, episodes = _dream(str(ROOT / "examples" / "episodes.jsonl"), tier)
    used = {w for w in _TRADING if re.search(rf"\b{w}\b", episodes)}
    found = sorted({w for w in _TRADING if w not in used and re.search(rf"\b{w}\b", outputs)})
    assert [] == found
    assert [] == _FIGURE.findall(outputs)


def test_the_trading_sample_still_speaks_of_its_own_trades() -> None:
    """The bundled sample (a trading agent's week) keeps its words: its tags and regimes, and an
    outcome as a percentage where the episode gave it as one ("captured 6%")."""
    outputs, _episodes = _dream(str(sample_episodes_path()), "hardened")
    assert "tagged eth" in outputs
    assert "trending conditions" in outputs
    assert "which went well (+6.0%)" in outputs


def test_the_observations_page_shows_facts_with_their_levels_and_no_dream_images() -> None:
    """A dream's observation is a row of the observations page at its level; a hypnagogic fragment
    or any other staged hypothesis is not, until its validation is news."""
    world = World(open_store("memory://"))
    world.episodes(1)
    fact = DreamObservation(
        cycle_id="CYCLE", text="2 May 2026: Rolled back the deploy", priority="RED", source_episode_ticks=(1,)
    )
    image = staged("CYCLE", 0, "creative_prediction", "I hold broke like a ledger", 0.15)
    world.dream([fact, image])
    world.update()
    rows = observations(world.projections.db, "g1")
    assert [("RED", "2 May 2026: Rolled back the deploy")] == [(o.priority, o.text) for o in rows]


def test_oneiros_memory_lists_the_newest_observations(tmp_path: Path) -> None:
    """``oneiros memory --observations --limit N`` prints the newest N facts of the observations
    page, one a line with its level and the minute it was made; ``--json`` gives the same rows.
    ``--observations`` alone, last, as README shows it (it failed: "requires an argument"), prints
    the newest 20; ``--limit`` without it is refused, not dropped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    env |= {"ONEIROS_SPANS": "off", "COLUMNS": "400"}
    store = f"sqlite:///{tmp_path / 'events.db'}"

    def run(*args: str) -> str:
        done = run_cli([*args, "--store", store, "--golem", "g1"], cwd=tmp_path, env=env, check=True)
        return done.stdout

    run("dream", "--episodes", str(ROOT / "examples" / "episodes.jsonl"), "--json")
    rows = json.loads(run("memory", "--observations", "--limit", "2", "--json"))
    assert 2 == len(rows)
    assert {"GRN", "YLW", "RED"} >= {r["priority"] for r in rows}
    assert [f"{r['priority']} {r['time']} {r['text']}" for r in rows] == run(
        "memory", "--observations", "--limit", "2"
    ).splitlines()
    every = json.loads(run("memory", "--observations", "--json"))
    assert rows == every[-2:]
    assert 2 < len(every) <= 20
    readme = run_cli(["memory", "--store", store, "--golem", "g1", "--observations"], cwd=tmp_path, env=env)
    assert (0, "") == (readme.returncode, readme.stderr)
    assert len(every) == len(readme.stdout.splitlines())
    alone = run_cli(["memory", "--store", store, "--golem", "g1", "--limit", "2"], cwd=tmp_path, env=env)
    assert (2, "error: --limit counts observations: it goes with --observations\n") == (
        alone.returncode,
        alone.stderr,
    )
