"""Bardo's event contract and scheduling rules, with the document's numbers: DreamStart's
trigger in Bardo's terms beside the scheduler's, DreamPhase in Bardo's phase names, and a sleep
window that is itself the permission."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._codec import decode_event, encode_event
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._types import DreamPhase, DreamStart
from oneiros.scheduling._scheduler import should_dream
from oneiros.scheduling._urgency import Signals
from oneiros.store._history import import_history
from tests.test_history import HISTORIES
from tests.test_scheduler import Log, bardo_state, settings

START = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)


def test_a_cycle_writes_both_triggers_and_bardos_phase_names() -> None:
    """An owner's cycle stores DreamStart v4 with the scheduler's ``owner`` and Bardo's ``time``,
    and one DreamPhase per phase named HypnagogicOnset, NREM, REM, Integration, HypnopompicReturn."""
    golems = Golems(open_store("memory://"), deps=Deps(clock=FixedClock(START), ids=SequentialIds("e")))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    InProcessExecutor(golems).run_cycle("g")
    records = golems.store.read_all()
    start = next(r for r in records if isinstance(r.event, DreamStart))
    assert ("DreamStart.v4", "owner", "time") == (
        encode_event(start.meta, start.event)[0],
        start.event.trigger,
        start.event.bardo_trigger,
    )
    phases = [r.event for r in records if isinstance(r.event, DreamPhase)]
    assert [
        ("hypnagogic_onset", "HypnagogicOnset"),
        ("nrem", "NREM"),
        ("rem", "REM"),
        ("integration", "Integration"),
        ("hypnopompic_return", "HypnopompicReturn"),
    ] == [(p.phase, p.bardo_phase) for p in phases]


def test_the_v1_golden_log_reads_in_bardos_terms() -> None:
    """golem_v1.jsonl's DreamStart v1 said ``trigger: "time"`` (Bardo's word); v2 reads it as a
    window cycle whose Bardo trigger is ``time``, and its five DreamPhase v1 gain Bardo's names."""
    store = open_store("memory://")
    import_history(store, HISTORIES / "golem_v1.jsonl")
    records = store.read_all()
    start = next(r.event for r in records if isinstance(r.event, DreamStart))
    assert ("window", "time") == (start.trigger, start.bardo_trigger)
    assert ["HypnagogicOnset", "NREM", "REM", "Integration", "HypnopompicReturn"] == [
        r.event.bardo_phase for r in records if isinstance(r.event, DreamPhase)
    ]


@pytest.mark.parametrize(
    ("v1", "expected"),
    [
        ({"trigger": "emotional_load"}, ("urgency", "emotional_load")),
        ({"trigger": "novelty_streak"}, ("urgency", "novelty_streak")),
        ({"trigger": "fatigue"}, ("fatigue", "novelty_streak")),
        ({"trigger": "emergency"}, ("emergency", "emotional_load")),
        ({"trigger": "idle"}, ("idle", "time")),
    ],
)
def test_dream_start_v1_upcasts_each_trigger(v1: dict[str, str], expected: tuple[str, str]) -> None:
    """Every v1 trigger lifts to a v2 pair (scheduler trigger, Bardo trigger)."""
    meta = '{"time":"2026-01-05T03:00:13Z","event_id":"x","golem_id":"g","cycle_id":"c","trace":{}}'
    state = f'{{"meta":{meta},"data":{{"cycle_id":"c","trigger":"{v1["trigger"]}"}}}}'.encode()
    _meta, event = decode_event("DreamStart.v1", state)
    assert isinstance(event, DreamStart)
    assert expected == (event.trigger, event.bardo_trigger)


def _urgent(**signals: Any) -> Signals:
    base: dict[str, Any] = {
        "recent_surprise": 0.0,
        "unresolved_arousal": 0.0,
        "recent_losses": 0.0,
        "prediction_accuracy": 1.0,
    }
    return Signals(**{**base, **signals})


@pytest.mark.parametrize(
    ("signals", "bardo"),
    [
        (_urgent(recent_surprise=1.0, prediction_accuracy=0.0), "novelty_streak"),
        (_urgent(unresolved_arousal=1.0, recent_losses=1.0), "emotional_load"),
    ],
)
def test_an_urgency_cycle_takes_the_bardo_trigger_its_terms_weigh_most_for(signals: Signals, bardo: str) -> None:
    """An adapting golem (threshold 0.6, 100 episodes) dreams on urgency; surprise and drift read as Bardo's
    ``novelty_streak``, arousal and losses as ``emotional_load``."""
    config = settings("bardo", mode="autonomous", interval={"enabled": False})
    state = bardo_state(phase="conservation", episodes=100)
    state.carried_urgency = 0.7
    decision = should_dream(config, state, datetime(2026, 3, 2, 12, 0, tzinfo=UTC), signals=signals)
    assert ("urgency", bardo) == (decision.trigger, decision.bardo_trigger)


def test_the_mapping_is_a_setting() -> None:
    """``schedule.bardo_triggers`` moves a trigger to another Bardo name, from the config path."""
    config = settings(
        "bardo", mode="owner", interval={"enabled": False}, bardo_triggers={"by_trigger": {"window": "emotional_load"}}
    )
    decision = should_dream(config, bardo_state(), START)
    assert ("window", "emotional_load") == (decision.trigger, decision.bardo_trigger)


def _busy_log(minutes_idle: int, hours_since_dream: float) -> Log:
    """150 episodes, a cycle that ended ``hours_since_dream`` before 03:00 and activity
    ``minutes_idle`` before it: well inside Bumblebee's 1 h silence and 4 h cooldown."""
    log = Log(at=START - timedelta(days=2)).episodes(150, START - timedelta(days=2))
    log.cycle(START - timedelta(hours=hours_since_dream, minutes=10))
    return log.add(ActivityRecorded(kind="message"), START - timedelta(minutes=minutes_idle))


@pytest.mark.parametrize(("permission", "dreams"), [(True, True), (False, False)])
def test_a_sleep_window_is_itself_the_permission(permission: bool, dreams: bool) -> None:
    """Bardo's window 02:00-06:00 UTC under Bumblebee's gates (silence 3600 s, cooldown 14400 s):
    at 03:00, 10 minutes after activity and 1 h after the last dream, the window fires anyway;
    with ``window_is_permission = false`` silence and cooldown hold it back."""
    config = settings(
        "bardo",
        mode="owner",
        interval={"enabled": False},
        silence_seconds=3600,
        cooldown_seconds=14400,
        window_is_permission=permission,
    )
    decision = should_dream(config, _busy_log(10, 1).state(), START)
    assert (dreams, "window" if dreams else None) == (decision.dream, decision.trigger)
    if not dreams:
        assert ("silence", "cooldown") == decision.blocked_by


def test_the_window_permission_still_obeys_its_caps() -> None:
    """The permission skips silence and cooldown only: the window's own cap (3 cycles for a stable
    golem) and the hard preconditions still hold."""
    config = settings("bardo", mode="owner", interval={"enabled": False}, silence_seconds=3600, cooldown_seconds=14400)
    log = _busy_log(10, 1)
    for minutes in (0, 20, 40):
        log.cycle(datetime(2026, 3, 2, 2, minutes, tzinfo=UTC), trigger="window", minutes=5)
    capped = should_dream(config, log.state(), START)
    window = capped.check("window")
    assert window is not None
    assert (False, "inside 02:00-06:00 UTC, 3 of 3 cycles run") == (capped.dream, window.detail)
    assert not should_dream(config, _busy_log(10, 1).state(), START, signals=Signals(credit_remaining=0.1)).dream
