"""Several OS processes writing to ONE golem at once, on SQLite and on PostgreSQL: episodes,
activity, outcomes and in-process dreams (one dreamer's phases fail every other cycle).

Afterwards no golem is left Dreaming, every cycle ended complete or interrupted with a reason,
nothing any writer reports it wrote is missing from the log or in it twice, and the golem replays
to the state a fresh read folds. Bounded by default; ``ONEIROS_CHAOS_SCALE=N`` multiplies every
writer's count by N (see docs/architecture.md, "Concurrent writers").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from oneiros import Deps, Golems, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._staging import FEEDBACK_STREAM, OutcomeRecorded, side_stream
from oneiros.events._types import DreamInterrupted, DreamStart, EpisodeRecorded, ModeChanged
from oneiros.fsm._service import replay
from tests.conftest import postgres_url

ROOT = Path(__file__).resolve().parent.parent
SCALE = max(1, int(os.environ.get("ONEIROS_CHAOS_SCALE", "1") or "1"))
WRITERS = [
    ("episodes", 1, 15),
    ("episodes", 2, 15),
    ("activity", 3, 20),
    ("outcomes", 4, 10),
    ("dreamer", 5, 2),
    ("faulty", 6, 2),
]


@pytest.fixture(params=["sqlite", "postgres"])
def chaos_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/events.db"
    return postgres_url(request.getfixturevalue("pg_schema"))


@pytest.mark.timeout(900)
def test_concurrent_writers_strand_nothing_and_lose_nothing(
    chaos_url: str, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """Six processes at once on one golem: nothing stranded, lost or duplicated; the golem replays."""
    store = open_store(chaos_url)
    golems = Golems(store, deps=Deps())
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    env = dict(os.environ)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.chaos_writer", role, chaos_url, str(writer), str(count * SCALE), str(go)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role, writer, count in WRITERS
    ]
    time.sleep(1.0)  # let every writer import and open the store
    go.touch()
    reports: dict[str, list[object]] = {"episodes": [], "activity": [], "outcomes": [], "cycles": []}
    for proc, (role, writer, _count) in zip(procs, WRITERS, strict=True):
        out, err = proc.communicate(timeout=600)
        assert 0 == proc.returncode, f"{role} writer {writer}: {err[-3000:]}"
        for key, values in json.loads(out.strip().splitlines()[-1]).items():
            if key == "retries":  # tries lost before each write landed: the margin races.attempts leaves
                record_property(f"max_retries_{role}_{writer}", max(values, default=0))
            if key in reports:
                reports[key] += values

    history = store.read_stream("g")
    state = Golems(store, deps=Deps()).state("g")
    assert "Waking" == state.mode

    episodes = Counter(r.event.episode.tick for r in history if isinstance(r.event, EpisodeRecorded))
    written = Counter(reports["episodes"])
    assert written == Counter({tick: n for tick, n in episodes.items() if tick in written})
    assert len(episodes) == sum(episodes.values())  # no tick twice, the sample's included
    activity = Counter(r.event.detail for r in history if isinstance(r.event, ActivityRecorded))
    assert Counter(reports["activity"]) == activity
    feedback = store.read_stream(side_stream("g", FEEDBACK_STREAM))
    outcomes = Counter(r.event.tick for r in feedback if isinstance(r.event, OutcomeRecorded))
    assert Counter(reports["outcomes"]) == outcomes

    started = [r.event.cycle_id for r in history if isinstance(r.event, DreamStart)]
    assert sorted(reports["cycles"]) == sorted(started)  # type: ignore[type-var]
    ended: Counter[str] = Counter()
    for record in history:
        event = record.event
        if isinstance(event, DreamInterrupted):
            assert event.reason, f"cycle {event.cycle_id} interrupted without a reason"
            ended[event.cycle_id] += 1
        elif isinstance(event, ModeChanged) and event.reason == "cycle complete":
            ended[record.meta.cycle_id or ""] += 1
    assert Counter(started) == ended  # each cycle ended exactly once
    faulty = [c for c in started if c.startswith("w6-c") and int(c.rsplit("c", 1)[1]) % 2 == 0]
    interrupted = {r.event.cycle_id for r in history if isinstance(r.event, DreamInterrupted)}
    assert set(faulty) <= interrupted
    assert set() == interrupted - set(faulty)  # no healthy phase lost a race it should have rebased
    assert (len(started), len(started)) == (
        state.cycles_started,
        state.cycles_completed + state.cycles_interrupted,
    )
    assert state == replay(store)["g"]
    inside, dreaming = 0, False  # host facts that landed while a cycle was on: phases rebased over them
    for record in history:
        dreaming = record.event.to_mode == "Dreaming" if isinstance(record.event, ModeChanged) else dreaming
        inside += dreaming and isinstance(record.event, EpisodeRecorded | ActivityRecorded)
    assert inside > 0
    store.close()
