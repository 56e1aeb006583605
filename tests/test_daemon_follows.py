"""`oneiros run` keeps validation running: with nobody reading, the daemon's own follower admits a
cycle's outputs, promotes an entry on the outcomes that confirm it and raises and clears health
alarms; `daemon.follow = false` leaves that to a separate follower."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from oneiros import Golems, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._health import HEALTH_STREAM
from oneiros.events._staging import STAGING_STREAM, EntryPromoted, side_stream
from oneiros.store._store import EventStore
from oneiros.validation._review import Feedback, OutcomeInput
from tests.workers.deployment import Processes, clean_env, wait_for

STARTED = "following the log: validation sweep, health alarms and projections"


def _config(tmp_path: Path, *, follow: bool) -> tuple[Path, EventStore]:
    """A golem with the sample episodes, and a config under which the daemon dreams once at once."""
    url = f"sqlite:///{tmp_path}/events.db"
    store = open_store(url)
    golems = Golems(store)
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    path = tmp_path / "daemon.toml"
    path.write_text(
        f'store = "{url}"\ngolem = "g"\n'
        '[schedule]\nenabled = true\nmode = "owner"\nidle_trigger = true\nsilence_seconds = 0\n'
        f"cooldown_seconds = 0\ndream_hours = {list(range(24))}\nmax_per_day = 1\n"
        "require_no_pending_messages = false\n"
        "[schedule.preconditions.first_dream_episodes]\n"
        "thriving = 0\nstable = 0\nconservation = 0\ndeclining = 0\nterminal = 0\n"
        f"[daemon]\ntick_seconds = 0.2\nfollow = {str(follow).lower()}\n"
        "[health]\nno_promotion_cycles = 1\n"
    )
    return path, store


def _health(store: EventStore) -> list[tuple[str, str]]:
    return [(r.event.type_name, r.event.alarm) for r in store.read_stream(side_stream("g", HEALTH_STREAM))]


def _completed(store: EventStore) -> bool:
    state = Golems(store).state("g")
    return state.cycles_completed == 1 and state.mode == "Waking"


def _daemon(procs: Processes, config: Path) -> None:
    procs.start("daemon", [sys.executable, "-m", "oneiros", "run", "--config", str(config)], clean_env())


def test_the_daemon_promotes_on_outcomes_and_raises_alarms_with_nobody_reading(tmp_path: Path) -> None:
    """`oneiros run --config FILE` as a process: its cycle's outputs are admitted, the cycle without
    a promotion raises ``no_promotion``, outcomes another process records (through the library, as
    a host does, which sweeps nothing) promote the entry they confirm and clear the alarm, all
    written by the daemon's follower with no reading command run; one log line says it started,
    and SIGTERM stops the daemon and its follower with exit code 0."""
    config, store = _config(tmp_path, follow=True)
    procs = Processes(tmp_path)
    _daemon(procs, config)
    try:
        wait_for(lambda: _completed(store), 60, "a completed cycle", procs)
        feedback = Feedback(store)
        wait_for(lambda: any(e.active for e in feedback.entries("g").values()), 30, "admitted entries", procs)
        wait_for(lambda: [("HealthAlarmRaised", "no_promotion")] == _health(store), 30, "the alarm", procs)
        entry = min((e for e in feedback.entries("g").values() if e.active), key=lambda e: e.entry_id)
        for tick in range(100, 100 + (70 - entry.confidence_pct + 9) // 10):
            feedback.record_outcome("g", OutcomeInput(tick=tick, verdict="confirms", entry_id=entry.entry_id))
        stream = side_stream("g", STAGING_STREAM)

        def promoted() -> list[tuple[str, str]]:
            records = store.read_stream(stream)
            return [(r.event.entry_id, r.event.by) for r in records if isinstance(r.event, EntryPromoted)]

        wait_for(lambda: bool(promoted()), 30, "the promotion", procs)
        wait_for(lambda: 2 == len(_health(store)), 30, "the alarm cleared", procs)
    finally:
        codes = procs.stop()
    assert {"daemon": 0} == codes
    assert [(entry.entry_id, "sweep")] == promoted()
    assert [("HealthAlarmRaised", "no_promotion"), ("HealthAlarmCleared", "no_promotion")] == _health(store)
    assert 1 == procs.output("daemon").count(STARTED)


def test_with_follow_off_the_daemon_leaves_validation_to_another_follower(tmp_path: Path) -> None:
    """`daemon.follow = false`: the daemon dreams as before but neither admits its outputs nor
    raises an alarm (seconds after the cycle ended), and says nothing about following."""
    config, store = _config(tmp_path, follow=False)
    procs = Processes(tmp_path)
    _daemon(procs, config)
    try:
        wait_for(lambda: _completed(store), 60, "a completed cycle", procs)
        time.sleep(2)  # the follower, when on, admits within a poll (tens of milliseconds)
    finally:
        codes = procs.stop()
    assert {"daemon": 0} == codes
    assert ([], []) == (store.read_stream(side_stream("g", STAGING_STREAM)), _health(store))
    assert STARTED not in procs.output("daemon")
