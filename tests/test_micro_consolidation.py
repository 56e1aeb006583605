"""Bardo's micro-consolidation fiber with the document's numbers: every 60 s of waking, the
last 5 episodes against the top 10 insights by retrieval frequency; cosine > 0.8 strengthens an
insight by 0.1, > 0.7 with a diverging outcome tags the episode for the next dream, and each pass
with unresolved patterns adds 0.02 urgency. Every effect is an event; the playbook is never touched."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.daemon._daemon import Daemon
from oneiros.daemon._micro import MicroState, micro_pass
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.episodes._fold import EpisodeMemory
from oneiros.episodes._vectors import episode_text
from oneiros.events._content import DreamStaged
from oneiros.events._micro import EpisodePrioritized, InsightStrengthened, MicroConsolidated
from oneiros.events._types import Episode, EpisodeRecorded, Event, EventMeta, Outcome
from oneiros.scheduling._schedule_state import fold_schedule
from oneiros.scheduling._scheduler import should_dream
from oneiros.settings._scheduling import DaemonSettings, MicroConsolidationSettings, ScheduleSettings
from oneiros.store._store import Recorded
from tests.cli_runner import run_cli

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
SOURCE = Episode(tick=1, summary="bought the range floor", tags=("eth",), regime="ranging", outcome=Outcome(pnl=0.02))


class Angles:
    """An embedder that puts each episode at a chosen cosine from the source episode."""

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            c = self.cosines.get(text, 1.0 if text == episode_text(SOURCE) else 0.0)
            rows.append((c, math.sqrt(max(0.0, 1.0 - c * c))))
        return np.asarray(rows, dtype=np.float32)


def _record(event: Event, version: int) -> Recorded:
    return Recorded(version, version, EventMeta(time=T0, event_id=f"e{version}", golem_id="g"), event)


def _state(*episodes: Episode, insights: int = 1) -> MicroState:
    events: list[Event] = [EpisodeRecorded(episode=SOURCE)]
    events += [
        DreamStaged(
            cycle_id="c",
            entry_id=f"c:{i:03d}",
            kind="novel_insight",
            content=f"insight {i}",
            confidence=0.3,
            validation_criterion="",
            source_episode_ticks=(1,),
        )
        for i in range(insights)
    ]
    events += [EpisodeRecorded(episode=e) for e in episodes]
    return MicroState.from_records(_record(e, i + 1) for i, e in enumerate(events))


def _episode(tick: int, pnl: float) -> Episode:
    return Episode(tick=tick, summary=f"episode {tick}", tags=("eth",), regime="ranging", outcome=Outcome(pnl=pnl))


@pytest.mark.parametrize(
    ("cosine", "pnl", "effect"),
    [
        (0.81, 0.01, "strengthened"),
        (0.80, 0.01, None),  # "> 0.8": the boundary itself does not match
        (0.71, -0.01, "prioritized"),
        (0.70, -0.01, None),  # "> 0.7" with a diverging outcome
        (0.95, -0.01, "prioritized"),  # a close match that went the other way is an anomaly, not a confirmation
        (0.75, 0.01, None),  # similar but agreeing, and below 0.8: nothing
    ],
)
def test_one_pass_follows_bardos_thresholds(cosine: float, pnl: float, effect: str | None) -> None:
    """Against an insight drawn from a +2% episode: cosine > 0.8 strengthens it by 0.1; cosine > 0.7
    with a loss tags the episode high priority and adds 0.02 urgency; anything else writes nothing."""
    episode = _episode(10, pnl)
    events = micro_pass(_state(episode), MicroConsolidationSettings(), Angles({episode_text(episode): cosine}))
    kinds = [type(e).__name__ for e in events]
    if effect is None:
        assert [] == kinds
    elif effect == "strengthened":
        assert ["InsightStrengthened"] == kinds
        assert (0.1, 0.1, "c:000", 10) == (
            events[0].delta,
            events[0].strength,
            events[0].entry_id,
            events[0].episode_tick,
        )
    else:
        assert ["EpisodePrioritized", "MicroConsolidated"] == kinds
        assert ("high", 10) == (events[0].priority, events[0].episode_tick)
        assert (0.02, 1, 1) == (events[1].urgency_delta, events[1].prioritized, events[1].unresolved)


def test_only_the_last_five_episodes_and_top_ten_insights() -> None:
    """Seven new episodes and twelve insights: a pass looks at ticks 13-17 only (Bardo's 5) and at
    ten insights (Bardo's 10), so 5 x 10 = 50 strengthenings, each pair once."""
    episodes = [_episode(11 + i, 0.01) for i in range(7)]
    state = _state(*episodes, insights=12)
    events = micro_pass(state, MicroConsolidationSettings(), Angles({episode_text(e): 0.9 for e in episodes}))
    assert 50 == len(events)
    assert {13, 14, 15, 16, 17} == {e.episode_tick for e in events if isinstance(e, InsightStrengthened)}
    assert 10 == len({e.entry_id for e in events if isinstance(e, InsightStrengthened)})
    for i, event in enumerate(events):
        state.apply(_record(event, 100 + i))
    assert [] == micro_pass(state, MicroConsolidationSettings(), Angles({episode_text(e): 0.9 for e in episodes}))


def test_retrieval_frequency_ranks_the_insights() -> None:
    """With a top of 1, the insight matched before (one retrieval) is the one compared, not the newest."""
    first, second = _episode(10, 0.01), _episode(11, 0.01)
    state = _state(first, insights=2)
    state.apply(
        _record(InsightStrengthened(entry_id="c:000", episode_tick=10, similarity=0.9, delta=0.1, strength=0.1), 50)
    )
    state.apply(_record(EpisodeRecorded(episode=second), 51))
    events = micro_pass(state, MicroConsolidationSettings(top_insights=1), Angles({episode_text(second): 0.9}))
    assert [("c:000", 0.2)] == [(e.entry_id, e.strength) for e in events if isinstance(e, InsightStrengthened)]


def _rig(**micro: Any) -> tuple[Golems, Daemon, FixedClock]:
    clock = FixedClock(T0, step=timedelta(0))
    golems = Golems(open_store("memory://"), deps=Deps(clock=clock, ids=SequentialIds("m")))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    InProcessExecutor(golems).run_cycle("g")
    daemon = Daemon(
        golems,
        "g",
        InProcessExecutor(golems),
        schedule=ScheduleSettings(),
        daemon=DaemonSettings(micro=MicroConsolidationSettings(**micro)),
        background=False,
    )
    return golems, daemon, clock


def _contrary(golems: Golems, tick: int, golem: str = "g") -> Episode:
    """A copy of an insight's source episode whose outcome went the other way."""
    history = golems.history(golem)
    insight = next(
        r.event for r in reversed(history) if isinstance(r.event, DreamStaged) and r.event.kind == "novel_insight"
    )
    memory = EpisodeMemory.from_records(history)
    source = next(e for t in insight.source_episode_ticks if (e := memory.get(t)) is not None and e.outcome.pnl)
    return Episode(
        tick=tick,
        summary=source.summary,
        tags=source.tags,
        regime=source.regime,
        outcome=Outcome(pnl=-source.outcome.pnl),
    )


def test_the_daemon_runs_a_pass_every_sixty_seconds_and_urgency_accumulates() -> None:
    """Ticks every 30 s for 5 minutes: passes at 0, 60, ..., 300 s (6 of 11 ticks). The contrary
    episode is tagged once; each pass after leaves it unresolved and adds 0.02, so urgency has
    grown by 6 x 0.02 = 0.12 in the scheduler's score. The next dream replays the episode with its
    priority, and the tag ends when the dream completes."""
    golems, daemon, clock = _rig()
    golems.record_episodes("g", [_contrary(golems, 2000)])
    for _ in range(11):
        daemon.tick()
        clock.advance(timedelta(seconds=30))
    history = golems.history("g")
    passes = [r.event for r in history if isinstance(r.event, MicroConsolidated)]
    tagged = [r.event for r in history if isinstance(r.event, EpisodePrioritized)]
    assert (6, [2000]) == (len(passes), sorted({e.episode_tick for e in tagged}))
    state = fold_schedule("g", history)
    assert 0.12 == pytest.approx(state.micro_urgency)
    without = msgspec.structs.replace(state, micro_urgency=0.0)
    now = clock()
    assert 0.12 == pytest.approx(
        should_dream(ScheduleSettings(), state, now).urgency - should_dream(ScheduleSettings(), without, now).urgency
    )
    memory = EpisodeMemory.from_records(history)
    assert "high" == next(e for e in memory.episodes() if e.tick == 2000).dream_priority
    InProcessExecutor(golems).run_cycle("g")
    after = EpisodeMemory.from_records(golems.history("g"))
    assert "normal" == next(e for e in after.episodes() if e.tick == 2000).dream_priority
    assert 0.0 == fold_schedule("g", golems.history("g")).micro_urgency


def test_the_fiber_never_writes_the_playbook() -> None:
    """Whatever a pass does, it appends only its three event types: nothing staged, reviewed or
    promoted, no confidence moved."""
    golems, daemon, clock = _rig()
    before = len(golems.history("g"))
    golems.record_episodes("g", [_contrary(golems, 2000)])
    for _ in range(5):
        daemon.tick()
        clock.advance(timedelta(seconds=60))
    written = {type(r.event).__name__ for r in golems.history("g")[before + 1 :]}
    assert written <= {"EpisodePrioritized", "InsightStrengthened", "MicroConsolidated", "DreamDecided"}
    assert "MicroConsolidated" in written


def test_oneiros_run_drives_the_fiber(tmp_path: Path) -> None:
    """On the user's path: ``oneiros run`` over a golem that dreamt and then met an episode contrary
    to one of its insights tags it and adds urgency, with the pass every 60 s taken from
    ``ONEIROS_DAEMON__MICRO__EVERY_SECONDS``."""
    url = f"sqlite:///{tmp_path / 'events.db'}"
    golems = Golems(open_store(url), deps=Deps(seed=0))
    golems.create("golem")
    golems.record_episodes("golem", load_episodes(sample_episodes_path()))
    InProcessExecutor(golems).run_cycle("golem")
    golems.record_episodes("golem", [_contrary(golems, 2000, "golem")])
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    env["ONEIROS_DAEMON__MICRO__EVERY_SECONDS"] = "0.001"
    done = run_cli(["run", "--store", url, "--ticks", "3", "--tick-seconds", "0.01", "--json"], cwd=tmp_path, env=env)
    assert 0 == done.returncode, done.stderr
    history = open_store(url).read_stream("golem")
    assert [2000] == sorted({r.event.episode_tick for r in history if isinstance(r.event, EpisodePrioritized)})
    assert 3 == sum(isinstance(r.event, MicroConsolidated) for r in history)
    assert json.loads(done.stdout.strip().splitlines()[-1])
