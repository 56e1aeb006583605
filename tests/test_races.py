"""Races end in a retry, not a stranding; host facts are durable at once while a golem dreams.

Another writer is made to win a race on purpose: the store's ``append`` is wrapped so that, right
before a chosen append, a second ``Golems`` on the same store appends first (as another process
would). The first append then loses its version race, exactly as under real concurrency.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, IllegalCommand, InProcessExecutor, SequentialIds, StreamConflict
from oneiros._errors import InvalidSetting
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._schedule import ActivityRecorded, MessageHeld
from oneiros.events._types import (
    CycleEvent,
    DreamInterrupted,
    DreamPhase,
    DreamStart,
    Episode,
    EpisodeRecorded,
    Event,
    ModeChanged,
)
from oneiros.fsm._golem import GolemState, fold
from oneiros.fsm._races import is_host_fact, retry_race
from oneiros.fsm._service import replay
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.runtime._golem_log import GolemLogs
from oneiros.settings._races import RaceSettings
from oneiros.store._snapshots import Snapshot, seal_parts
from oneiros.store._store import Checkpoint, EventStore, Recorded, StreamAppend, open_store
from oneiros.telemetry._spans import TracedStore
from tests.test_daemon import Rig

START = datetime(2026, 11, 3, tzinfo=UTC)


def _golems(store: EventStore, prefix: str, sleeps: list[float] | None = None) -> Golems:
    waits = sleeps if sleeps is not None else []
    deps = Deps(clock=FixedClock(START), ids=SequentialIds(prefix), jitter=lambda: 0.5, sleep=waits.append)
    return Golems(store, deps=deps, snapshots=None)


class Rival(TracedStore):
    """A store whose appends to ``g`` lose their race on demand: before each append ``when``
    picks, the rival (another Golems, on the same log through a plain store) records one host fact
    first. A TracedStore, so executors keep it as it is instead of wrapping it again."""

    def __init__(self, inner: EventStore, when: Callable[[int, Sequence[Event]], Event | None]) -> None:
        super().__init__(inner)
        self.when = when
        self.rival = _golems(inner, "rival")
        self.appends = 0
        self.written: list[Event] = []

    def append_streams(
        self, appends: Sequence[StreamAppend], *, checkpoint: Checkpoint | None = None
    ) -> list[Recorded]:
        for append in appends:
            if append.golem_id != "g":
                continue
            fact = self.when(self.appends, [event for _, event in append.items])
            self.appends += 1
            if fact is None:
                continue
            if isinstance(fact, EpisodeRecorded):
                self.rival.record_episodes("g", [fact.episode])
            else:
                self.rival.record("g", [fact])
            self.written.append(fact)
        return super().append_streams(appends, checkpoint=checkpoint)


def _raced(when: Callable[[int, Sequence[Event]], Event | None]) -> Rival:
    return Rival(open_store("memory://"), when)


def _sample(store: EventStore) -> Golems:
    golems = _golems(store, "id")
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    return golems


def _fact(kind: str, n: int) -> Event:
    if kind == "episode":
        return EpisodeRecorded(episode=Episode(tick=10_000 + n, summary=f"late tick {n}"))
    if kind == "activity":
        return ActivityRecorded(kind="turn", detail=f"turn {n}")
    return MessageHeld(message_id=f"msg-{n}", text=f"hello {n}", received_at=START)


def test_retry_race_is_bounded_and_waits_jittered_growing_pauses() -> None:
    """Always losing: exactly ``attempts`` tries, then the StreamConflict; between tries the waits
    are the injected draw times min(max, base * 2**n)."""
    waits: list[float] = []
    tries: list[int] = []

    def lose() -> None:
        tries.append(1)
        raise StreamConflict("g", 3)

    race = RaceSettings(attempts=5, base_seconds=0.1, max_seconds=0.3)
    with pytest.raises(StreamConflict):
        retry_race(lose, race, Deps(jitter=lambda: 0.5, sleep=waits.append))
    assert 5 == len(tries)
    assert [0.05, 0.1, 0.15, 0.15] == pytest.approx(waits)


def test_retry_race_stops_at_other_errors_and_returns_what_lands() -> None:
    """A command no longer legal is not retried; attempts=0 retries until the attempt lands."""
    calls: list[int] = []

    def illegal() -> None:
        calls.append(1)
        raise IllegalCommand("g", "Waking", "advance")

    with pytest.raises(IllegalCommand):
        retry_race(illegal, RaceSettings(), Deps(sleep=lambda _s: None))
    assert 1 == len(calls)
    outcomes = iter([StreamConflict("g", 1)] * 30 + [None])

    def lands_at_last() -> str:
        failure = next(outcomes)
        if failure is not None:
            raise failure
        return "landed"

    assert "landed" == retry_race(lands_at_last, RaceSettings(attempts=2), Deps(sleep=lambda _s: None), attempts=0)


def test_race_settings_refuse_what_cannot_bound_a_retry() -> None:
    """Zero attempts, a negative or NaN wait, or an unreadable variable: InvalidSetting naming the key."""
    with pytest.raises(InvalidSetting) as zero:
        RaceSettings(attempts=0)
    assert "invalid setting races.attempts = 0: expected a positive number of tries" == str(zero.value)
    with pytest.raises(InvalidSetting) as nan:
        RaceSettings(max_seconds=float("nan"))
    assert "invalid setting races.max_seconds = nan: expected a finite number of seconds, 0 or more" == str(nan.value)
    with pytest.raises(InvalidSetting) as env:
        RaceSettings.from_env({"ONEIROS_RACES__ATTEMPTS": "many"})
    expected = "invalid setting races.attempts = 'many' (from env ONEIROS_RACES__ATTEMPTS): expected int"
    assert expected == str(env.value)
    assert RaceSettings(attempts=3, base_seconds=0.5) == RaceSettings.from_env(
        {"ONEIROS_RACES__ATTEMPTS": "3", "ONEIROS_RACES__BASE_SECONDS": "0.5"}
    )


def test_host_facts_are_what_a_host_records_and_nothing_that_moves_the_machine() -> None:
    """Episodes, activity and held messages are host facts; cycle events and mode changes are not."""
    assert [True, True, True, False, False] == [
        is_host_fact(_fact("episode", 1)),
        is_host_fact(_fact("activity", 1)),
        is_host_fact(_fact("message", 1)),
        is_host_fact(DreamStart(cycle_id="c", trigger="owner")),
        is_host_fact(ModeChanged(from_mode="Waking", to_mode="Dreaming", reason="x")),
    ]


def test_a_command_that_lost_its_race_retries_while_legal() -> None:
    """An episode batch that loses to another writer lands on the new head; a fall_asleep that
    loses to another fall_asleep is refused as illegal (one cycle, not two, not a conflict)."""
    store = _raced(lambda n, _events: _fact("activity", 0) if n == 2 else None)
    golems = _sample(store)
    golems.record_episodes("g", [Episode(tick=500, summary="mine")])
    kinds = [type(r.event).__name__ for r in golems.history("g")[-2:]]
    assert ["ActivityRecorded", "EpisodeRecorded"] == kinds

    def theirs(n: int, _events: Sequence[Event]) -> Event | None:
        if n == 2:
            store.rival.fall_asleep("g", "owner", budget_tokens=10, cycle_id="theirs")
        return None

    store = _raced(theirs)
    golems = _sample(store)
    with pytest.raises(IllegalCommand):
        golems.fall_asleep("g", "owner", budget_tokens=10, cycle_id="mine")
    assert ["theirs"] == [r.event.cycle_id for r in golems.history("g") if isinstance(r.event, DreamStart)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    points=st.dictionaries(
        st.integers(0, 43), st.sampled_from(["episode", "activity", "message"]), min_size=1, max_size=8
    )
)
def test_a_phase_is_rebased_over_host_facts_and_replay_stays_exact(points: dict[int, str]) -> None:
    """Host facts written right before any of a cycle's appends (another process winning the race)
    never fail the phase: the cycle completes, each fact is in the log exactly once, and the live
    state equals a replay of the log, a fold from scratch and a snapshot-backed read."""
    cycle_appends = itertools.count()

    def when(_n: int, events: Sequence[Event]) -> Event | None:
        if not any(isinstance(e, CycleEvent) for e in events):
            return None
        k = next(cycle_appends)
        return _fact(points[k], k) if k in points else None

    store = _raced(when)
    golems = _sample(store)
    result = InProcessExecutor(golems).run_cycle("g", cycle_id="c1")
    assert (None, "Waking") == (result.interrupted, golems.state("g").mode)
    assert result.complete is not None
    history = golems.history("g")
    assert store.written
    for fact in store.written:
        assert 1 == sum(1 for r in history if r.event == fact)
    live = golems.state("g")
    assert live == replay(store)["g"]
    assert live == fold("g", history)
    snapshots = GolemLogs(store, golems.snapshots, msgspec.structs.replace(golems.snapshot_settings, every=7))
    assert live == snapshots.read("g").state
    middle = history[len(history) // 2].position
    assert fold("g", [r for r in history if r.position <= middle]) == replay(store, until=middle)["g"]


def test_a_phase_is_not_rebased_over_another_writers_cycle_events() -> None:
    """An owner interrupt landing mid-phase ends the cycle once: the phase's append is refused, and
    the executor's failure interrupt finds the cycle already ended and appends nothing."""
    done: list[bool] = []

    def owner(_n: int, events: Sequence[Event]) -> Event | None:
        if not done and any(isinstance(e, DreamPhase) and e.phase == "rem" for e in events):
            done.append(True)
            store.rival.interrupt("g", "owner", "stop")
        return None

    store = _raced(owner)
    golems = _sample(store)
    result = InProcessExecutor(golems).run_cycle("g", cycle_id="c1")
    interrupts = [r.event for r in golems.history("g") if isinstance(r.event, DreamInterrupted)]
    assert [("owner", "stop")] == [(e.source, e.reason) for e in interrupts]
    assert "Waking" == golems.state("g").mode
    assert "interrupted by owner: stop" == result.interrupted


class Failing:
    """The offline generator, raising in REM: a phase bug."""

    def __init__(self) -> None:
        self.inner = OfflineGenerator(seed=0)

    def generate(self, request: GenerationRequest) -> Generation:
        if request.phase == "rem":
            raise RuntimeError("model exploded")
        return self.inner.generate(request)


def test_the_failure_interrupt_always_lands_whatever_it_races() -> None:
    """A phase raises and each of the interrupt's first appends loses its race, more times than
    races.attempts: the interrupt lands anyway, once, with the failure's reason."""
    waits: list[float] = []
    losing = RaceSettings().attempts + 5
    losses = iter(range(losing))

    def before(_n: int, events: Sequence[Event]) -> Event | None:
        if any(isinstance(e, DreamInterrupted) for e in events):
            index = next(losses, None)
            return None if index is None else _fact("activity", index)
        return None

    store = _raced(before)
    golems = _sample(store)
    golems = Golems(store, deps=msgspec.structs.replace(golems.deps, sleep=waits.append), races=RaceSettings())
    result = InProcessExecutor(golems, Failing()).run_cycle("g", cycle_id="c1")
    interrupts = [r.event for r in golems.history("g") if isinstance(r.event, DreamInterrupted)]
    assert [("failure", "rem failed: RuntimeError: model exploded")] == [(e.source, e.reason) for e in interrupts]
    assert ("Waking", "rem failed: RuntimeError: model exploded") == (golems.state("g").mode, result.interrupted)
    assert losing == len(waits)
    assert all(0 <= w <= RaceSettings().max_seconds for w in waits)


def test_daemon_host_facts_are_in_the_log_at_once_while_dreaming(tmp_path: Path) -> None:
    """Mid-dream, a message, activity and a sleep request are in the log before the cycle ends
    (another reader of the SQLite file sees them), the dream completes, and the held message is
    still handed to the agent only on waking."""
    url = f"sqlite:///{tmp_path}/events.db"
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), url=url, ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    assert "held" == rig.daemon.receive("while you sleep")
    rig.daemon.activity("action", "traded")
    other = open_store(url)
    seen = [type(r.event).__name__ for r in other.read_stream("g")]
    assert "Dreaming" == fold("g", other.read_stream("g")).mode
    assert {"MessageHeld", "ActivityRecorded"} <= set(seen)
    assert [] == rig.delivered
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    assert ["while you sleep"] == [m.text for m in rig.delivered]
    state = rig.golems.state("g")
    assert ("Waking", 1, 0) == (state.mode, state.cycles_completed, state.cycles_interrupted)
    assert fold("g", other.read_stream("g")) == replay(other)["g"]
    other.close()


def test_a_killed_daemon_loses_no_host_fact(tmp_path: Path) -> None:
    """A daemon process SIGKILLed mid-dream, right after it took a message: the message is in the log."""
    url = f"sqlite:///{tmp_path}/events.db"
    script = f"""
import os, signal, sys
from datetime import UTC, datetime
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from tests.test_daemon import Rig
rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), url={url!r}, ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
rig.daemon.tick()
assert rig.generator.entered.wait(10)
print(rig.daemon.receive("last words"), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert (-9, "held") == (done.returncode, done.stdout.strip())
    store = open_store(url)
    held = [r.event for r in store.read_stream("g") if isinstance(r.event, MessageHeld)]
    assert ["last words"] == [e.text for e in held]
    store.close()


def test_golem_state_snapshot_of_old_format_is_not_trusted() -> None:
    """Snapshots of the golem state from before cycle counts carried calls (format 1) are ignored:
    the state is folded from the log and equals a replay."""
    store = open_store("memory://")
    golems = _sample(store)
    last = golems.history("g")[-1]
    stale = GolemState(golem_id="g", mode="Dying", version=last.version, position=last.position)
    golems.snapshots.put("g", "state", seal_parts(Snapshot.of("state", 1, last, msgspec.msgpack.encode(stale))))
    fresh = Golems(store, deps=golems.deps)
    assert replay(store)["g"] == fresh.state("g")
    assert "Waking" == fresh.state("g").mode


def test_a_phase_command_that_lost_to_another_phase_run_is_refused_not_repeated() -> None:
    """Two runs of one phase: the one that lost its race to the other's ``advance`` gets
    StreamConflict; it is not retried on the fresh state, so the cycle advances once."""

    def duplicate(_n: int, events: Sequence[Event]) -> Event | None:
        if any(isinstance(e, DreamPhase) and e.phase == "nrem" for e in events) and not ran:
            ran.append(True)
            store.rival.advance("g", budget_tokens=10)
        return None

    ran: list[bool] = []
    store = _raced(duplicate)
    golems = _sample(store)
    golems.fall_asleep("g", "owner", budget_tokens=10, cycle_id="c1")
    with pytest.raises(StreamConflict):
        golems.advance("g", budget_tokens=10)
    phases = [r.event.phase for r in golems.history("g") if isinstance(r.event, DreamPhase)]
    assert ["hypnagogic_onset", "nrem"] == phases


def test_an_interrupt_that_lost_to_the_end_of_its_cycle_does_not_hit_the_next() -> None:
    """An interrupt read cycle c1; before it landed c1 ended and c2 began: it is refused, c2 runs on."""

    def next_cycle(_n: int, events: Sequence[Event]) -> Event | None:
        if any(isinstance(e, DreamInterrupted) for e in events) and not ran:
            ran.append(True)
            store.rival.interrupt("g", "owner", "first")
            store.rival.fall_asleep("g", "owner", budget_tokens=10, cycle_id="c2")
        return None

    ran: list[bool] = []
    store = _raced(next_cycle)
    golems = _sample(store)
    golems.fall_asleep("g", "owner", budget_tokens=10, cycle_id="c1")
    with pytest.raises(IllegalCommand) as refused:
        golems.interrupt("g", "owner", "late")
    expected = "golem 'g' cannot 'interrupt' in state 'Dreaming_HypnagogicOnset': cycle 'c1' ended"
    assert expected == str(refused.value)
    state = golems.state("g")
    assert ("Dreaming", "c2") == (state.mode, state.cycle_id)
