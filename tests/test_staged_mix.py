"""A cycle's staged mix under ``max_staged``: reasoning before fragments (a setting), and a quality
figure that says what it is made of."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.cli import app
from oneiros.episodes._episodes import load_episodes
from oneiros.events._content import DreamStaged
from oneiros.settings._cycle import CycleSettings, EngineSettings, IntegrationSettings
from oneiros.settings._vocabulary import StagedKind

WEEK = Path(__file__).resolve().parents[1] / "examples" / "episodes.jsonl"
runner = CliRunner()


def _staged(integration: IntegrationSettings) -> list[DreamStaged]:
    deps = Deps(clock=FixedClock(datetime(2026, 10, 6, tzinfo=UTC), timedelta(seconds=1)), ids=SequentialIds("m"))
    golems = Golems(open_store("memory://"), deps=deps)
    golems.create("coder")
    golems.record_episodes("coder", load_episodes(WEEK))
    settings = CycleSettings(engines=EngineSettings(integration=integration))
    assert InProcessExecutor(golems, settings=settings).run_cycle("coder").complete
    return [r.event for r in golems.store.read_stream("coder") if isinstance(r.event, DreamStaged)]


def test_max_staged_keeps_reasoning_before_fragments_in_the_cycles_order() -> None:
    """Uncapped, a cycle over the coding week classifies hypnagogic fragments first; capped at 3 or
    5 it keeps the kinds ``staged_first`` names first (insights, playbook revisions... before the
    creative predictions), each the first of its kind in the cycle's order, and stages exactly the
    cap; with creative predictions named first, the fragments come back."""
    every = _staged(IntegrationSettings())
    kinds = [s.kind for s in every]
    assert "creative_prediction" == kinds[0]
    order = IntegrationSettings().staged_first
    for cap in (3, 5):
        kept = _staged(IntegrationSettings(max_staged=cap))
        expected = sorted(range(len(every)), key=lambda i: (order.index(kinds[i]), i))[:cap]
        assert [(every[i].kind, every[i].content) for i in sorted(expected)] == [(s.kind, s.content) for s in kept]
        assert "creative_prediction" not in {s.kind for s in kept}
    fragments_first: tuple[StagedKind, ...] = ("creative_prediction", *(k for k in order if k != "creative_prediction"))
    again = _staged(IntegrationSettings(max_staged=3, staged_first=fragments_first))
    assert ["creative_prediction"] * 3 == [s.kind for s in again]


def test_quality_says_what_it_is_made_of(tmp_path: Path) -> None:
    """``journal --json`` and ``report`` give the quality figure with its basis: the cycle's
    self-assessment and what it judged, what it staged by kind, and that nothing is validated yet."""
    env = {"ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db", "ONEIROS_CYCLE__ENGINES__INTEGRATION__MAX_STAGED": "3"}
    assert 0 == runner.invoke(app, ["dream", "--golem", "g1", "--episodes", str(WEEK), "--json"], env=env).exit_code
    (entry,) = json.loads(runner.invoke(app, ["journal", "--json"], env=env).output)
    assert entry["quality_basis"].startswith(f"self-assessed {entry['self_assessed_pct']}% (")
    assert "replay patterns new" in entry["quality_basis"]
    assert entry["quality_basis"].endswith("; staged 3 novel_insight; nothing validated yet")
    assert {"novel_insight": 3} == entry["staged_kinds"]
    report = json.loads(runner.invoke(app, ["report", "--golem", "g1", "--json"], env=env).output)
    assert (entry["quality_pct"], entry["quality_basis"]) == (report["quality_pct"], report["quality_basis"])
    shown = runner.invoke(app, ["report", "--golem", "g1"], env={**env, "COLUMNS": "300"})
    assert f"quality: {entry['quality_basis']}" in shown.output
