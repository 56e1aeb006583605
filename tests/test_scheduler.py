"""``should_dream``: every gate and trigger of the source documents, at and around each boundary.

Each test builds a ScheduleState from real events (the fold the daemon uses) at fake times, then
asks the scheduler about one instant. Nothing here reads the wall clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros.config._load import OneirosConfig, load_config
from oneiros.events._schedule import ActivityRecorded, DreamDecided, DreamDirected, SleepRequested
from oneiros.events._types import (
    BehavioralPhase,
    DreamComplete,
    DreamStart,
    DreamTrigger,
    Episode,
    EpisodeRecorded,
    Event,
    EventMeta,
    GolemCreated,
    ModeChanged,
    Outcome,
)
from oneiros.scheduling._schedule_state import ScheduleState, fold_schedule
from oneiros.scheduling._scheduler import should_dream
from oneiros.scheduling._urgency import Pressures, Signals, dream_intensity, dream_urgency
from oneiros.settings._scheduling import ScheduleSettings
from oneiros.store._store import Recorded

T0 = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)


class Log:
    """A golem's stream built by hand at chosen times."""

    def __init__(self, phase: BehavioralPhase = "stable", at: datetime = T0) -> None:
        self.records: list[Recorded] = []
        self.add(GolemCreated(behavioral_phase=phase), at)

    def add(self, event: Event, at: datetime) -> Log:
        version = len(self.records) + 1
        meta = EventMeta(time=at, event_id=f"e{version}", golem_id="g")
        self.records.append(Recorded(version, version, meta, event))
        return self

    def cycle(self, start: datetime, trigger: DreamTrigger = "idle", minutes: int = 10) -> Log:
        cycle = f"c{len(self.records)}"
        self.add(DreamStart(cycle_id=cycle, trigger=trigger), start)
        self.add(ModeChanged(from_mode="Waking", to_mode="Dreaming"), start)
        end = start + timedelta(minutes=minutes)
        self.add(DreamComplete(cycle_id=cycle), end)
        return self.add(ModeChanged(from_mode="Dreaming", to_mode="Waking"), end)

    def episodes(self, n: int, at: datetime, **fields: Any) -> Log:
        for i in range(n):
            self.add(EpisodeRecorded(episode=Episode(tick=i, summary=f"e{i}", **fields)), at)
        return self

    def state(self) -> ScheduleState:
        return fold_schedule("g", self.records)


def settings(preset: str = "", **schedule: Any) -> ScheduleSettings:
    env = {f"ONEIROS_SCHEDULE__{k.upper()}": _toml(v) for k, v in schedule.items()}
    return load_config(preset=preset or None, environ=env, path="/dev/null").schedule


def _toml(value: Any) -> str:
    """A TOML value, as an ``ONEIROS_*`` variable would carry it."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# -- Bumblebee: enabled, silence 3600 s, cooldown 14400 s, hours 0-5, 2 a day -------------


@pytest.mark.parametrize(
    ("idle", "dreams", "detail"),
    [
        (timedelta(minutes=59, seconds=59), False, "59m59s < 1h00m00s idle"),
        (timedelta(minutes=60), True, "1h00m00s >= 1h00m00s idle"),
        (timedelta(minutes=61), True, "1h01m00s >= 1h00m00s idle"),
    ],
)
def test_silence_gate_opens_at_exactly_one_hour(idle: timedelta, dreams: bool, detail: str) -> None:
    """Bumblebee's silence gate: 59:59 of quiet is not enough, 60:00 is."""
    active = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
    state = Log().add(ActivityRecorded(kind="message"), active).state()
    decision = should_dream(settings("bumblebee"), state, active + idle)
    assert (dreams, () if dreams else ("silence",)) == (decision.dream, decision.blocked_by)
    check = decision.check("silence")
    assert check is not None
    assert detail == check.detail


@pytest.mark.parametrize(
    ("since_end", "dreams"),
    [(timedelta(hours=3, minutes=59, seconds=59), False), (timedelta(hours=4), True)],
)
def test_cooldown_gate_needs_four_hours_since_the_last_cycle(since_end: timedelta, dreams: bool) -> None:
    """Bumblebee's cooldown: a cycle ending at 00:10 keeps the next one off until 04:10:00."""
    log = Log(at=T0 - timedelta(days=1)).cycle(datetime(2026, 3, 2, 0, 0, tzinfo=UTC))
    now = datetime(2026, 3, 2, 0, 10, tzinfo=UTC) + since_end
    decision = should_dream(settings("bumblebee"), log.state(), now)
    assert dreams == decision.dream
    assert (() if dreams else ("cooldown",)) == decision.blocked_by


@pytest.mark.parametrize(
    ("hour", "minute", "dreams"),
    [(23, 59, False), (0, 0, True), (5, 59, True), (6, 0, False)],
)
def test_circadian_gate_is_local_hours_zero_to_five(hour: int, minute: int, dreams: bool) -> None:
    """Bumblebee's circadian window: 00:00-05:59 local passes, 23:59 and 06:00 do not."""
    now = datetime(2026, 3, 2, hour, minute, tzinfo=UTC)
    decision = should_dream(settings("bumblebee"), Log().state(), now)
    assert dreams == decision.dream
    assert (() if dreams else ("circadian",)) == decision.blocked_by


def test_circadian_gate_reads_the_configured_zone_not_utc() -> None:
    """01:30 UTC is 02:30 in Paris in winter (inside 0-5) but 20:30 in New York (outside)."""
    now = datetime(2026, 1, 15, 1, 30, tzinfo=UTC)
    state = Log(at=now - timedelta(days=2)).state()
    paris = should_dream(settings("bumblebee", timezone="Europe/Paris"), state, now)
    new_york = should_dream(settings("bumblebee", timezone="America/New_York"), state, now)
    assert (True, False) == (paris.dream, new_york.dream)
    check = new_york.check("circadian")
    assert check is not None
    assert "local hour 20 (America/New_York) not in 0-5" == check.detail


@pytest.mark.parametrize(("done", "dreams"), [(1, True), (2, False)])
def test_daily_cap_allows_the_second_cycle_not_the_third(done: int, dreams: bool) -> None:
    """Bumblebee's cap of 2 a calendar day: after one cycle a second may run, after two no third."""
    log = Log(at=T0 - timedelta(days=1))
    for i in range(done):
        log.cycle(datetime(2026, 3, 2, 0, 0, tzinfo=UTC) + timedelta(hours=i))
    now = datetime(2026, 3, 2, 5, 0, tzinfo=UTC)
    decision = should_dream(settings("bumblebee", cooldown_seconds=0), log.state(), now)
    assert dreams == decision.dream
    check = decision.check("daily_cap")
    assert check is not None
    below = f"{done} {'cycle' if done == 1 else 'cycles'} today < 2"
    assert (below if dreams else "2 cycles today >= 2") == check.detail


@pytest.mark.parametrize(
    ("local_now", "dreams"),
    [
        (datetime(2026, 3, 2, 23, 59, 59), False),  # still the day of the two cycles
        (datetime(2026, 3, 3, 0, 0, 0), True),  # local midnight: a new calendar day
    ],
)
def test_daily_cap_resets_at_local_midnight_in_a_non_utc_zone(local_now: datetime, dreams: bool) -> None:
    """The calendar day is Tokyo's: two cycles on 2 March (Tokyo) block until Tokyo's midnight,
    which is 15:00 UTC, not 00:00 UTC."""
    tokyo = "Asia/Tokyo"
    from zoneinfo import ZoneInfo

    zone = ZoneInfo(tokyo)
    log = Log(at=T0 - timedelta(days=3))
    log.cycle(datetime(2026, 3, 2, 1, 0, tzinfo=zone)).cycle(datetime(2026, 3, 2, 2, 0, tzinfo=zone))
    config = settings("bumblebee", timezone=tokyo, cooldown_seconds=0, dream_hours=list(range(24)))
    decision = should_dream(config, log.state(), local_now.replace(tzinfo=zone))
    assert dreams == decision.dream
    assert (() if dreams else ("daily_cap",)) == decision.blocked_by


def test_disabled_schedule_never_dreams_but_names_the_switch() -> None:
    """Dreaming is opt-in (all five documents): the defaults do not dream and say why."""
    decision = should_dream(settings(), Log().state(), datetime(2026, 3, 2, 3, 0, tzinfo=UTC))
    assert (False, None) == (decision.dream, decision.trigger)
    assert "enabled" in decision.blocked_by
    check = decision.check("enabled")
    assert check is not None
    assert "schedule.enabled = false" == check.detail


# -- Ethos: idle minutes with no pending messages, max per day ------------------------------


@pytest.mark.parametrize(
    ("idle", "held", "dreams", "blocked"),
    [
        (timedelta(minutes=119, seconds=59), 0, False, ("silence",)),
        (timedelta(minutes=120), 0, True, ()),
        (timedelta(minutes=120), 1, False, ("no_pending_messages",)),
    ],
)
def test_ethos_idle_two_hours_with_no_pending_messages(
    idle: timedelta, held: int, dreams: bool, blocked: tuple[str, ...]
) -> None:
    """Ethos: idleMinutes 120 and no pending messages; any hour of the day."""
    from oneiros.events._schedule import MessageHeld

    active = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    log = Log().add(ActivityRecorded(kind="message"), active)
    if held:
        # A held message is also activity; hold it at the start so only the pending gate fails.
        log = Log().add(MessageHeld(message_id="m1", text="hi"), active)
    decision = should_dream(settings("ethos"), log.state(), active + idle)
    assert (dreams, blocked) == (decision.dream, decision.blocked_by)


@pytest.mark.parametrize(("done", "dreams"), [(2, True), (3, False)])
def test_ethos_max_per_day_is_three(done: int, dreams: bool) -> None:
    """Ethos: maxPerDay 3 — the third run of the day goes, the fourth does not."""
    log = Log(at=T0 - timedelta(days=1))
    for i in range(done):
        log.cycle(datetime(2026, 3, 2, 1 + 3 * i, 0, tzinfo=UTC))
    now = datetime(2026, 3, 2, 22, 0, tzinfo=UTC)
    assert dreams == should_dream(settings("ethos"), log.state(), now).dream


# -- Bardo: windows, urgency, modes, directive, preconditions, decay, interval, intensity -----


def bardo_state(episodes: int = 150, phase: BehavioralPhase = "stable", at: datetime = T0) -> ScheduleState:
    return Log(phase=phase, at=at).episodes(episodes, at).state()


@pytest.mark.parametrize(
    ("now", "dreams"),
    [
        (datetime(2026, 3, 2, 1, 59, tzinfo=UTC), False),
        (datetime(2026, 3, 2, 2, 0, tzinfo=UTC), True),
        (datetime(2026, 3, 2, 5, 59, tzinfo=UTC), True),
        (datetime(2026, 3, 2, 6, 0, tzinfo=UTC), False),
    ],
)
def test_owner_window_is_the_permission(now: datetime, dreams: bool) -> None:
    """Inside 02:00-06:00 UTC the window fires with no urgency at all; outside it, nothing does."""
    config = settings("bardo", mode="owner", interval={"enabled": False})
    decision = should_dream(config, bardo_state(), now)
    assert (dreams, "window" if dreams else None) == (decision.dream, decision.trigger)


def test_window_across_midnight_in_its_own_zone() -> None:
    """A 22:00-02:00 Europe/Berlin window holds 00:30 Berlin (23:30 UTC the day before)."""
    window = [{"start": "22:00", "end": "02:00", "timezone": "Europe/Berlin"}]
    config = settings("bardo", mode="owner", windows=window, interval={"enabled": False})
    inside = should_dream(config, bardo_state(), datetime(2026, 3, 1, 23, 30, tzinfo=UTC))
    outside = should_dream(config, bardo_state(), datetime(2026, 3, 2, 1, 30, tzinfo=UTC))
    assert (True, False) == (inside.dream, outside.dream)


@pytest.mark.parametrize(("phase", "cap"), [("thriving", 4), ("stable", 3), ("conservation", 2), ("declining", 1)])
def test_cycles_per_window_follow_the_behavioral_phase(phase: BehavioralPhase, cap: int) -> None:
    """Bardo's max cycles per window: 4 thriving, 3 stable, 2 conservation, 1 declining."""
    log = Log(phase=phase, at=T0).episodes(200, T0)
    start = datetime(2026, 3, 2, 2, 0, tzinfo=UTC)
    config = settings("bardo", mode="owner", interval={"enabled": False})
    for i in range(cap):
        assert should_dream(config, log.state(), start + timedelta(minutes=30 * i)).dream
        log.cycle(start + timedelta(minutes=30 * i))
    assert not should_dream(config, log.state(), start + timedelta(minutes=30 * cap)).dream


@pytest.mark.parametrize(
    ("mode", "in_window", "urgent", "trigger"),
    [
        ("owner", True, False, "window"),
        ("owner", False, True, None),
        ("autonomous", True, False, None),
        ("autonomous", False, True, "urgency"),
        ("hybrid", True, False, "window"),
        ("hybrid", False, True, "urgency"),
        ("hybrid", False, False, None),
    ],
)
def test_schedule_modes(mode: str, in_window: bool, urgent: bool, trigger: str | None) -> None:
    """owner listens to windows only, autonomous to urgency only, hybrid to both."""
    config = settings("bardo", mode=mode, interval={"enabled": False})
    now = datetime(2026, 3, 2, 3 if in_window else 12, 0, tzinfo=UTC)
    signals = Signals(recent_surprise=1.0, unresolved_arousal=1.0, recent_losses=1.0, prediction_accuracy=0.0)
    decision = should_dream(config, bardo_state(), now, signals=signals if urgent else None)
    assert trigger == decision.trigger


def test_urgency_thresholds_thriving_and_adapting() -> None:
    """The same 0.7 urgency is below a thriving golem's 0.8 and above an adapting one's 0.6."""
    config = settings("bardo", mode="autonomous", interval={"enabled": False})
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    state = bardo_state(phase="thriving", episodes=200)
    state.carried_urgency = 0.7
    settled = should_dream(config, state, now)
    adapting = should_dream(config, state, now, signals=Signals(adapting=True))
    assert (False, 0.8) == (settled.dream, settled.threshold)
    assert (True, 0.6, "urgency") == (adapting.dream, adapting.threshold, adapting.trigger)


def test_urgency_score_follows_the_phase_weights() -> None:
    """Bardo's weighted sum: full pressure on every term but time scores the non-temporal weights
    plus the temporal weight times sigmoid(0) = 0.5."""
    config = settings("bardo")
    score = dream_urgency(
        config.urgency,
        "declining",
        Pressures(
            novelty=1.0,
            unreplayed_episodes=200,
            emotional=1.0,
            threat=1.0,
            prediction_accuracy=0.0,
            ticks_since_last_dream=0,
        ),
    )
    assert 0.8 + 0.2 * 0.5 == pytest.approx(score)


def test_urgency_decays_by_a_tenth_per_blocked_tick_instead_of_resetting() -> None:
    """Bardo: urgency 1.0 blocked by a pending permit carries 0.9, 0.8, 0.7 across blocked ticks
    even after the pressure is gone (fresh score 0.3); unblocked at 0.7, a declining golem
    (threshold 0.6) dreams on the carried urgency instead of starting over."""
    config = settings("bardo", mode="autonomous", interval={"enabled": False})
    log = Log(phase="declining", at=T0).episodes(200, T0)
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    hot = Signals(
        recent_surprise=1.0, unresolved_arousal=1.0, recent_losses=1.0, prediction_accuracy=0.0, permit_pending=True
    )
    cold = Signals(recent_surprise=0.0, unresolved_arousal=0.0, recent_losses=0.0, prediction_accuracy=1.0)
    carried: list[float] = []
    dreamt: list[bool] = []
    for tick, sig in enumerate(
        [
            hot,
            msgspec.structs.replace(cold, permit_pending=True),
            msgspec.structs.replace(cold, permit_pending=True),
            cold,
        ]
    ):
        decision = should_dream(config, log.state(), now + timedelta(minutes=tick), tick=tick, signals=sig)
        dreamt.append(decision.dream)
        carried.append(decision.carried_urgency)
        log.add(
            DreamDecided(
                dream=decision.dream, carried_urgency=decision.carried_urgency, blocked_by=decision.blocked_by
            ),
            now + timedelta(minutes=tick),
        )
    assert [False, False, False, True] == dreamt
    assert pytest.approx([0.9, 0.8, 0.7, 0.0]) == carried


def test_urgency_below_threshold_while_blocked_is_not_carried() -> None:
    """Only urgency over the threshold carries; a low score under a block leaves nothing behind."""
    config = settings("bardo", mode="autonomous", interval={"enabled": False})
    decision = should_dream(
        config, bardo_state(), datetime(2026, 3, 2, 12, 0, tzinfo=UTC), signals=Signals(permit_pending=True)
    )
    assert 0.0 == decision.carried_urgency


def test_owner_directive_bypasses_gates_and_urgency_but_not_preconditions() -> None:
    """ "dream now" runs with the schedule off at a forbidden hour, yet waits for enough episodes."""
    config = settings("bumblebee", enabled=False)
    now = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    ready = Log().add(DreamDirected(reason="dream now"), now).state()
    directed = should_dream(config, ready, now)
    assert ("owner", 1.0) == (directed.trigger, directed.urgency)
    bardo = settings("bardo", enabled=False)
    early = Log().episodes(10, now).add(DreamDirected(), now).state()
    decision = should_dream(bardo, early, now)
    assert (False, None) == (decision.dream, decision.trigger)
    assert "episodes" in decision.blocked_by
    check = decision.check("episodes")
    assert check is not None
    assert "10 < 150 for a stable golem" == check.detail


@pytest.mark.parametrize(
    ("name", "state_kw", "signals", "detail"),
    [
        ("episodes", {"episodes": 149}, Signals(), "149 < 150 for a stable golem"),
        ("credit", {}, Signals(credit_remaining=0.14), "14% < 15% of LLM credit left"),
        ("not_terminal", {"phase": "terminal", "episodes": 200}, Signals(), "behavioral phase terminal"),
        ("no_permit", {}, Signals(permit_pending=True), "an ActionPermit is pending"),
        ("economic_clock", {}, Signals(projected_life_hours=5.5), "5.5 h < 6 h of projected life"),
    ],
)
def test_each_hard_precondition_blocks_even_inside_a_window(
    name: str, state_kw: dict[str, Any], signals: Signals, detail: str
) -> None:
    """Bardo's four hard preconditions (and the economic clock's last 6 h) hold back every trigger."""
    config = settings("bardo", mode="owner", interval={"enabled": False})
    decision = should_dream(config, bardo_state(**state_kw), datetime(2026, 3, 2, 3, 0, tzinfo=UTC), signals=signals)
    assert (False, None) == (decision.dream, decision.trigger)
    assert name == decision.blocked_by[0]
    check = decision.check(name)
    assert check is not None
    assert detail == check.detail


def test_credit_at_exactly_fifteen_percent_passes() -> None:
    """ ">= 15% remaining": 15% is enough."""
    config = settings("bardo", mode="owner", interval={"enabled": False})
    decision = should_dream(
        config, bardo_state(), datetime(2026, 3, 2, 3, 0, tzinfo=UTC), signals=Signals(credit_remaining=0.15)
    )
    assert decision.dream


@pytest.mark.parametrize(("tick", "dreams"), [(49, False), (50, True), (51, False), (100, True)])
def test_interval_trigger_every_fifty_ticks(tick: int, dreams: bool) -> None:
    """Bardo [CORE]: tick % 50 == 0 fires (outside any window)."""
    config = settings("bardo", mode="owner")
    decision = should_dream(config, bardo_state(), datetime(2026, 3, 2, 12, 0, tzinfo=UTC), tick=tick)
    assert (dreams, "interval" if dreams else None) == (decision.dream, decision.trigger)


def test_interval_halves_under_seventy_two_hours_of_life() -> None:
    """Economic clock: under 72 h the interval trigger fires twice as often (every 25 ticks)."""
    config = settings("bardo", mode="owner")
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert not should_dream(config, bardo_state(), now, tick=25, signals=Signals(projected_life_hours=72)).dream
    assert should_dream(config, bardo_state(), now, tick=25, signals=Signals(projected_life_hours=71.9)).dream


def test_interval_never_fires_for_a_terminal_golem() -> None:
    """ "AND phase != terminal": tick 50 of a terminal golem does nothing."""
    config = settings("bardo", mode="owner")
    decision = should_dream(
        config, bardo_state(phase="terminal", episodes=60), datetime(2026, 3, 2, 12, 0, tzinfo=UTC), tick=50
    )
    assert (False, ("not_terminal", "window")) == (decision.dream, decision.blocked_by)


@pytest.mark.parametrize(
    ("fitness", "expected"),
    [
        (0.49, ("high", 15, 3, 3, 5, "T2", 0.9)),
        (0.5, ("medium", 10, 2, 2, 3, "T1", 0.7)),
        (0.69, ("medium", 10, 2, 2, 3, "T1", 0.7)),
        (0.7, ("low", 5, 1, 1, 1, "T1", 0.5)),
    ],
)
def test_dream_intensity_from_epistemic_fitness(fitness: float, expected: tuple[Any, ...]) -> None:
    """Bardo's dream_intensity: < 0.5 high, < 0.7 medium, else low, with its batch sizes and τ."""
    i = dream_intensity(settings().intensity, fitness=fitness, accuracy=1.0, life_hours=1e9, hayflick=0.0)
    assert expected == (
        i.uncertainty,
        i.replay_batch_size,
        i.counterfactual_depth,
        i.creative_sessions,
        i.threat_scenarios,
        i.inference_grade,
        i.exploration_temperature,
    )


@pytest.mark.parametrize(
    ("life", "accuracy", "hayflick", "rate", "mode"),
    [
        (1e9, 1.0, 0.0, 1.0, "normal"),
        (6.0, 0.5, 0.85, 2.0, "consolidation_only"),
        (39.0, 1.0, 0.0, 1.25, "normal"),
        (100.0, 1.0, 0.8, 1.0 + 0.2 * 0.8 / 0.85, "legacy_bias"),
        (100.0, 1.0, 0.9, 1.2, "legacy"),
    ],
)
def test_three_clock_intensity(life: float, accuracy: float, hayflick: float, rate: float, mode: str) -> None:
    """dreamIntensity = 1 + econ*0.5 + epistemic*0.3 + stochastic*0.2, and the modes the clocks impose."""
    i = dream_intensity(settings().intensity, fitness=1.0, accuracy=accuracy, life_hours=life, hayflick=hayflick)
    assert mode == i.mode
    assert pytest.approx(rate) == i.rate


# -- OpenSeed: fatigue, voluntary sleep, deep sleep --------------------------------------------


@pytest.mark.parametrize(("actions", "dreams"), [(79, False), (80, True)])
def test_fatigue_forces_consolidation_at_eighty_actions(actions: int, dreams: bool) -> None:
    """OpenSeed FATIGUE_LIMIT 80: the 80th action forces a dream; the 79th does not."""
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    log = Log()
    for _ in range(actions):
        log.add(ActivityRecorded(kind="action"), now)
    decision = should_dream(settings("openseed"), log.state(), now)
    assert (dreams, "fatigue" if dreams else None) == (decision.dream, decision.trigger)


def test_fatigue_resets_after_consolidation() -> None:
    """The counter resets once the forced cycle completes."""
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    log = Log()
    for _ in range(80):
        log.add(ActivityRecorded(kind="action"), now)
    log.cycle(now, trigger="fatigue")
    assert (0, False) == (
        log.state().actions,
        should_dream(settings("openseed"), log.state(), now + timedelta(hours=1)).dream,
    )


@pytest.mark.parametrize(
    ("sleep", "since_dream", "dreams"),
    [
        (29.9, timedelta(minutes=30), False),
        (30.0, timedelta(minutes=30), True),
        (30.0, timedelta(minutes=9, seconds=59), False),
        (30.0, timedelta(minutes=10), True),
    ],
)
def test_voluntary_sleep_needs_thirty_seconds_and_ten_minutes(
    sleep: float, since_dream: timedelta, dreams: bool
) -> None:
    """OpenSeed set_sleep: >= 30 s and >= 10 min since the last dream consolidate; else a nap."""
    start = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    now = start + timedelta(minutes=10) + since_dream
    log = Log().cycle(start).add(SleepRequested(seconds=sleep), now)
    decision = should_dream(settings("openseed"), log.state(), now)
    assert (dreams, "voluntary" if dreams else None) == (decision.dream, decision.trigger)


def test_a_nap_consumes_the_request() -> None:
    """A request the decision turns down is only a nap: the next decision does not see it."""
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    log = Log().add(SleepRequested(seconds=5), now).add(DreamDecided(dream=False), now)
    assert None is log.state().sleep_request


@pytest.mark.parametrize(("started", "deep"), [(8, False), (9, True), (10, False), (19, True)])
def test_every_tenth_dream_is_deep(started: int, deep: bool) -> None:
    """OpenSeed DEEP_SLEEP_EVERY 10: the 10th and 20th dreams are deep."""
    state = Log().add(DreamDirected(), T0).state()
    state.cycles_started = started
    decision = should_dream(settings("openseed"), state, T0)
    assert (True, deep) == (decision.dream, decision.deep)


# -- Dense-Mem: one scheduled cycle per local day from the start time -------------------------


@pytest.mark.parametrize(
    ("local_time", "done_today", "dreams"),
    [("02:59", False, False), ("03:00", False, True), ("23:59", False, True), ("03:01", True, False)],
)
def test_daily_cycle_from_local_start_time_once_a_day(local_time: str, done_today: bool, dreams: bool) -> None:
    """Dense-Mem: from 03:00 America/New_York, one daily cycle per local day."""
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("America/New_York")
    hour, minute = map(int, local_time.split(":"))
    now = datetime(2026, 7, 4, hour, minute, tzinfo=zone)
    log = Log(at=now - timedelta(days=2))
    if done_today:
        log.cycle(datetime(2026, 7, 4, 3, 0, tzinfo=zone), trigger="daily")
    config = settings("dense-mem", timezone="America/New_York")
    decision = should_dream(config, log.state(), now)
    assert (dreams, "daily" if dreams else None) == (decision.dream, decision.trigger)


def test_daily_cycle_yesterday_does_not_count_today() -> None:
    """Yesterday's daily cycle in Tokyo leaves today's 03:00 free, though it is under 24 h ago."""
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("Asia/Tokyo")
    log = Log(at=T0 - timedelta(days=3)).cycle(datetime(2026, 3, 1, 23, 0, tzinfo=zone), trigger="daily")
    decision = should_dream(
        settings("dense-mem", timezone="Asia/Tokyo"), log.state(), datetime(2026, 3, 2, 3, 0, tzinfo=zone)
    )
    assert "daily" == decision.trigger


# -- properties ------------------------------------------------------------------------------------


@given(
    hours=st.integers(0, 24 * 14),
    phase=st.sampled_from(["thriving", "stable", "conservation", "declining", "terminal"]),
    preset=st.sampled_from(["", "bumblebee", "bardo", "dense-mem", "ethos", "openseed"]),
    credit=st.floats(0, 1),
    permit=st.booleans(),
)
def test_no_trigger_passes_a_failed_precondition(
    hours: int, phase: BehavioralPhase, preset: str, credit: float, permit: bool
) -> None:
    """Whatever the preset and time, a decision to dream never has a failed hard precondition."""
    config = PRESET_SETTINGS[preset]
    state = Log(phase=phase).episodes(60, T0).add(DreamDirected(), T0).state()
    decision = should_dream(
        config,
        state,
        T0 + timedelta(hours=hours),
        tick=hours,
        signals=Signals(credit_remaining=credit, permit_pending=permit),
    )
    pre = {"episodes", "credit", "not_terminal", "no_permit", "economic_clock"}
    if decision.dream:
        assert set() == pre & set(decision.blocked_by)
    assert 0.0 <= decision.carried_urgency <= 1.0


PRESET_SETTINGS = {p: settings(p) for p in ["", "bumblebee", "bardo", "dense-mem", "ethos", "openseed"]}


def test_decision_is_pure() -> None:
    """The same inputs give the same decision and leave the state untouched."""
    state = bardo_state()
    before = msgspec.structs.asdict(state)
    config = OneirosConfig().schedule
    now = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)
    assert should_dream(config, state, now) == should_dream(config, state, now)
    assert before == msgspec.structs.asdict(state)


def test_reasons_read_as_pass_or_fail_with_values() -> None:
    """Every check is rendered with its verdict, name and the values it compared."""
    decision = should_dream(settings("bumblebee"), Log().state(), datetime(2026, 3, 1, 0, 30, tzinfo=UTC))
    assert "FAIL silence: 30m00s < 1h00m00s idle" in decision.reasons()
    assert "pass circadian: local hour 00 (UTC) in 0-5" in decision.reasons()
    assert "pass cooldown: no cycle yet >= 4h00m00s" in decision.reasons()


def test_a_dreaming_golem_is_not_asked() -> None:
    """A golem already dreaming (or dying) never gets a second cycle."""
    log = (
        Log()
        .add(DreamStart(cycle_id="c", trigger="idle"), T0)
        .add(ModeChanged(from_mode="Waking", to_mode="Dreaming"), T0)
    )
    decision = should_dream(settings("bumblebee"), log.state(), T0 + timedelta(hours=3))
    assert (False, ("awake",)) == (decision.dream, decision.blocked_by)


def test_losses_and_surprise_from_the_log_feed_urgency() -> None:
    """Without host signals, the pressures come from the episodes since the last dream."""
    config = settings("bardo", mode="autonomous", interval={"enabled": False})
    calm = Log(phase="conservation").episodes(150, T0).state()
    stormy = (
        Log(phase="conservation")
        .episodes(150, T0, arousal=1.0, outcome=Outcome(surprise=1.0, pnl=-1.0), prediction_error=1.0)
        .state()
    )
    now = T0 + timedelta(hours=1)
    assert (False, True) == (should_dream(config, calm, now).dream, should_dream(config, stormy, now).dream)


@pytest.mark.parametrize(("after", "dreams"), [(timedelta(minutes=119), False), (timedelta(minutes=120), True)])
def test_a_dream_restarts_the_idle_clock(after: timedelta, dreams: bool) -> None:
    """Ethos has no cooldown: after an idle dream the golem needs another 120 idle minutes, not
    one more tick, before the next (and the day's cap of 3 still stands)."""
    log = Log().cycle(datetime(2026, 3, 2, 12, 0, tzinfo=UTC), minutes=0)
    decision = should_dream(settings("ethos"), log.state(), datetime(2026, 3, 2, 12, 0, tzinfo=UTC) + after)
    assert (dreams, () if dreams else ("silence",)) == (decision.dream, decision.blocked_by)


@pytest.mark.parametrize("ticks", [-(10**9), -1.0, 0.0, 10**9, float(10**300)])
def test_urgency_is_defined_for_any_elapsed_time(ticks: float) -> None:
    """Time before the last dream (a clock set back) or absurdly long ago gives an urgency in [0, 1],
    never an OverflowError."""
    from oneiros.scheduling._urgency import Pressures, dream_urgency
    from oneiros.settings._scheduling import UrgencySettings

    still = Pressures(
        novelty=0.0,
        unreplayed_episodes=0,
        emotional=0.0,
        threat=0.0,
        prediction_accuracy=1.0,
        ticks_since_last_dream=ticks,
    )
    value = dream_urgency(UrgencySettings(), "stable", still)
    assert 0.0 <= value <= 1.0
