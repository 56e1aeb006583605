"""The heartbeat daemon: a simulated day, held messages, wake interrupts, death, clean shutdown.

Time is a FixedClock that only moves when the test advances it; cycles run on the daemon's thread
with a generator the test can hold mid-dream, so "while dreaming" is a real, observable moment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import (
    Deps,
    FixedClock,
    Golems,
    IllegalCommand,
    InProcessExecutor,
    SequentialIds,
    load_episodes,
    open_store,
)
from oneiros.config._load import load_config
from oneiros.daemon._daemon import Daemon, Lifecycle, Message, interactive_history, session_key
from oneiros.episodes._episodes import sample_episodes_path
from oneiros.events._liveness import PhaseResumed
from oneiros.events._schedule import ActivityRecorded, DreamDecided, FatigueWarned, MessageHeld, MessagesReleased
from oneiros.events._types import DreamComplete, DreamInterrupted, DreamStart, ModeChanged
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.store._store import EventStore, Recorded

PARIS = ZoneInfo("Europe/Paris")


class HeldGenerator:
    """The offline generator, except that each cycle's first NREM call waits until the test lets go."""

    def __init__(self, seed: int = 0) -> None:
        self.inner = OfflineGenerator(seed=seed)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.hold = True

    def generate(self, request: GenerationRequest) -> Generation:
        if self.hold and request.phase == "nrem" and not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(10), "test never released the dream"
        return self.inner.generate(request)

    def next_cycle(self) -> None:
        self.entered.clear()
        self.release.clear()


class Rig:
    """A golem with the sample episodes, a daemon on a frozen clock, and what it handed over."""

    def __init__(self, preset: str, start: datetime, url: str = "memory://", **env: str) -> None:
        self.clock = FixedClock(start, step=timedelta(0))
        self.store: EventStore = open_store(url)
        self.golems = Golems(self.store, deps=Deps(clock=self.clock, ids=SequentialIds("m")))
        self.golems.create("g")
        self.golems.record_episodes("g", load_episodes(sample_episodes_path()))
        self.config = load_config(preset=preset, environ=env, path="/dev/null")
        self.generator = HeldGenerator()
        self.delivered: list[Message] = []
        self.daemon = Daemon(
            self.golems,
            "g",
            InProcessExecutor(self.golems, generator=self.generator, settings=self.config.cycle),
            schedule=self.config.schedule,
            daemon=self.config.daemon,
            on_message=self.delivered.append,
        )

    def now(self) -> datetime:
        return self.clock()

    def advance(self, delta: timedelta) -> None:
        self.clock.advance(delta)

    def history(self) -> list[Recorded]:
        return self.golems.history("g")

    def of(self, cls: type[Any]) -> list[Recorded]:
        return [r for r in self.history() if isinstance(r.event, cls)]


def test_simulated_day_dreams_exactly_when_the_config_says() -> None:
    """Bumblebee in Paris from 08:00 to 08:00: busy until 23:00, then the first dream at 00:00
    sharp (one hour of silence, hour 0), a message held mid-dream and delivered on waking, the
    second dream at 04:00 (four hours of cooldown and silence) cut short by the owner, and no
    third (cap 2, then the hours). The decisions in the log say why at each step."""
    rig = Rig("bumblebee", datetime(2026, 3, 2, 8, 0, tzinfo=PARIS), ONEIROS_SCHEDULE__TIMEZONE="Europe/Paris")
    minute = timedelta(minutes=1)
    outcomes: dict[str, Any] = {}
    for _ in range(24 * 60 + 1):
        local = rig.now().astimezone(PARIS)
        if local.hour < 23 and local.minute % 30 == 0 and local.day == 2 and local.hour >= 8:
            assert "delivered" == rig.daemon.receive(f"msg {local:%H:%M}")
            rig.daemon.activity("action")
        if local.hour == 23 and local.minute == 0:
            rig.daemon.receive("good night")
        decision = rig.daemon.tick()
        if decision is not None and decision.dream:
            assert rig.generator.entered.wait(10)
            if "first" not in outcomes:
                outcomes["first"] = local
                outcomes["held"] = rig.daemon.receive("are you there?")
                outcomes["delivered_mid_dream"] = [m.text for m in rig.delivered[-1:]]
            else:
                outcomes["second"] = local
                outcomes["woke"] = rig.daemon.interrupt("owner", "market opens")
            rig.generator.release.set()
            assert rig.daemon.wait(10)
            rig.generator.next_cycle()
        rig.advance(minute)

    starts = [r.meta.time.astimezone(PARIS) for r in rig.of(DreamStart)]
    assert [datetime(2026, 3, 3, 0, 0, tzinfo=PARIS), datetime(2026, 3, 3, 4, 0, tzinfo=PARIS)] == starts
    assert ("held", ["good night"], True) == (outcomes["held"], outcomes["delivered_mid_dream"], outcomes["woke"])
    assert "are you there?" == rig.delivered[-1].text
    assert 1 == len(rig.of(DreamComplete))
    interrupted = rig.of(DreamInterrupted)
    assert [("owner", "market opens")] == [(r.event.source, r.event.reason) for r in interrupted]
    decisions = [r for r in rig.of(DreamDecided)]
    first = next(r.event for r in decisions if r.event.dream)
    assert "idle" == first.trigger
    assert "pass silence: 1h00m00s >= 1h00m00s idle" in first.reasons
    assert "pass circadian: local hour 00 (Europe/Paris) in 0-5" in first.reasons
    before_first = [r.event for r in decisions if r.meta.time < starts[0]]
    assert ("silence", "circadian") == before_first[-1].blocked_by  # 23:00-23:59
    last = decisions[-1].event
    assert (False, ("circadian", "daily_cap")) == (last.dream, last.blocked_by)
    assert "FAIL daily_cap: 2 cycles today >= 2" in last.reasons
    assert "Waking" == rig.golems.state("g").mode


def test_decisions_are_recorded_only_when_they_change() -> None:
    """An hour of identical blocked ticks leaves one decision in the log, not sixty."""
    rig = Rig("bumblebee", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    for _ in range(60):
        rig.daemon.tick()
        rig.advance(timedelta(minutes=1))
    assert 1 == len(rig.of(DreamDecided))


def test_cycle_ids_are_ethos_session_keys_kept_out_of_the_interactive_history() -> None:
    """A dream runs under dream:<golem>:<time>, and the interactive history holds no event of it."""
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    rig.generator.hold = False
    rig.daemon.receive("hello")
    rig.daemon.tick()
    assert rig.daemon.wait(10)
    start = rig.of(DreamStart)[0]
    assert "dream:g:20260302T120000Z" == start.event.cycle_id == session_key("g", rig.now())
    visible = interactive_history(rig.history())
    assert [] == [r for r in visible if r.meta.cycle_id is not None]
    assert 1 == sum(isinstance(r.event, ActivityRecorded) for r in visible)


def test_wake_interrupt_mid_dream_keeps_outputs_and_hands_over_messages() -> None:
    """Woken in NREM by a Clade alert: the log shows the interrupt in that phase, no completion,
    the golem waking, and the two held messages delivered in arrival order."""
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    decision = rig.daemon.tick()
    assert decision is not None
    assert decision.dream
    assert rig.generator.entered.wait(10)
    assert ["held", "held"] == [rig.daemon.receive("one"), rig.daemon.receive("two")]
    assert [] == rig.delivered
    assert rig.daemon.interrupt("clade_alert", "liquidation cascade")
    assert ["one", "two"] == [m.text for m in rig.delivered]
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    interrupted = rig.of(DreamInterrupted)[0].event
    assert ("clade_alert", "nrem") == (interrupted.source, interrupted.phase)
    assert [] == rig.of(DreamComplete)
    assert "Waking" == rig.golems.state("g").mode
    released = rig.of(MessagesReleased)[0].event
    assert 2 == len(released.message_ids)
    assert "delivered" == rig.daemon.receive("three")


def test_market_threshold_wakes_only_past_ten_percent_in_five_minutes() -> None:
    """Bardo's market alert: 9.9% or a 10-minute window does not wake; 10% in 5 minutes does."""
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    assert not rig.daemon.market_move("ETH", 9.9, 300)
    assert not rig.daemon.market_move("ETH", -12, 600)
    assert rig.daemon.market_move("ETH", -10, 300)
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    assert "ETH moved -10% in 300s" == rig.of(DreamInterrupted)[0].event.reason


def test_disabled_interrupt_source_does_not_wake() -> None:
    """With Clade alerts turned off in the config, the dream goes on to completion."""
    rig = Rig(
        "ethos",
        datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
        ONEIROS_SCHEDULE__SILENCE_SECONDS="0",
        ONEIROS_DAEMON__WAKE_INTERRUPTS__CLADE_ALERT="false",
    )
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    assert not rig.daemon.interrupt("clade_alert")
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    assert (1, []) == (len(rig.of(DreamComplete)), rig.of(DreamInterrupted))


def test_death_while_dreaming_interrupts_and_ends_the_heartbeat() -> None:
    """Death mid-dream: DreamInterrupted(death), then Dying; later ticks do nothing and activity is refused."""
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    death = threading.Thread(target=rig.daemon.die, args=("credit exhausted",))
    death.start()
    deadline = time.monotonic() + 10
    while rig.golems.state("g").mode != "Dying" and time.monotonic() < deadline:
        time.sleep(0.01)  # the death is in the log before the dream may go on
    rig.generator.release.set()
    death.join(10)
    assert "death" == rig.of(DreamInterrupted)[0].event.source
    assert "Dying" == rig.golems.state("g").mode
    assert None is rig.daemon.tick()
    with pytest.raises(IllegalCommand) as info:
        rig.daemon.activity()
    assert "golem 'g' cannot 'record' in state 'Dying'" == str(info.value)


def test_death_while_waking_runs_one_emergency_dream_first() -> None:
    """Bardo: a waking golem with episodes dreams one emergency cycle, then dies."""
    rig = Rig("bardo", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    rig.generator.hold = False
    result = rig.daemon.die("hayflick limit")
    assert result is not None
    assert result.complete is not None
    assert "emergency" == rig.of(DreamStart)[0].event.trigger
    modes = [r.event.to_mode for r in rig.of(ModeChanged)]
    assert ["Dreaming", "Waking", "Dying"] == modes


def test_fatigue_warns_at_sixty_and_forces_a_dream_at_eighty() -> None:
    """OpenSeed: the 60th action returns the warning (once), the 80th makes the next tick dream,
    and the counter starts over after it."""
    rig = Rig("openseed", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    rig.generator.hold = False
    warnings = [rig.daemon.activity("action") for _ in range(80)]
    assert [59] == [i for i, w in enumerate(warnings) if w is not None]
    assert "You've been active for a while. Start wrapping up." == warnings[59]
    assert 1 == len(rig.of(FatigueWarned))
    decision = rig.daemon.tick()
    assert decision is not None
    assert "fatigue" == decision.trigger
    assert rig.daemon.wait(10)
    assert 0 == rig.daemon.state.actions
    rig.advance(timedelta(minutes=1))
    assert rig.daemon.tick() is not None
    assert 1 == len(rig.of(DreamStart))


def test_voluntary_sleep_naps_then_consolidates() -> None:
    """OpenSeed set_sleep: 20 s is a nap; 60 s ten minutes after the last dream consolidates."""
    rig = Rig("openseed", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    rig.generator.hold = False
    rig.daemon.request_sleep(20)
    nap = rig.daemon.tick()
    assert nap is not None
    assert not nap.dream
    assert None is rig.daemon.state.sleep_request
    rig.daemon.request_sleep(60)
    sleep = rig.daemon.tick()
    assert sleep is not None
    assert "voluntary" == sleep.trigger


def test_deep_sleep_pauses_and_holds_messages_for_three_hundred_seconds() -> None:
    """OpenSeed: after the 10th dream the golem stays down 300 s; messages wait until then."""
    rig = Rig("openseed", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    rig.generator.hold = False
    for _ in range(10):
        rig.daemon.direct()
        decision = rig.daemon.tick()
        assert decision is not None
        assert decision.dream
        assert rig.daemon.wait(10)
        rig.advance(timedelta(seconds=1))
    assert [False] * 9 + [True] == [r.event.deep for r in rig.of(DreamDecided) if r.event.dream]
    assert "held" == rig.daemon.receive("wake up")
    rig.advance(timedelta(seconds=298))
    assert None is rig.daemon.tick()
    assert [] == rig.delivered
    rig.advance(timedelta(seconds=2))
    rig.daemon.tick()
    assert ["wake up"] == [m.text for m in rig.delivered]


def test_the_lifecycle_moves_only_through_its_declared_states() -> None:
    """The daemon's part of a dream is one declared state: a started cycle is STARTING, a wake
    interrupt while its thread still returns makes it WOKEN, the thread's end makes it AWAKE; a deep
    cycle's end is PAUSED until the pause is over; after shutdown it is STOPPED and ticks decide nothing."""
    rig = Rig("openseed", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))

    def lifecycle() -> Lifecycle:  # read afresh each time: the daemon moves it between two reads
        return rig.daemon.lifecycle

    rig.daemon.direct()
    assert rig.daemon.tick() is not None
    assert rig.generator.entered.wait(10)
    assert Lifecycle.STARTING == lifecycle()
    assert rig.daemon.interrupt("owner", "needed now")
    assert Lifecycle.WOKEN == lifecycle()
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    assert Lifecycle.AWAKE == lifecycle()
    rig.generator.hold = False
    seen = []
    while not any(r.event.deep for r in rig.of(DreamDecided) if r.event.dream):
        rig.advance(timedelta(seconds=1))
        rig.daemon.direct()
        rig.daemon.tick()
        assert rig.daemon.wait(10)
        seen.append(lifecycle())
    assert Lifecycle.PAUSED == seen[-1]
    assert {Lifecycle.AWAKE} == set(seen[:-1])
    rig.advance(timedelta(seconds=300))
    rig.daemon.tick()
    assert Lifecycle.AWAKE == lifecycle()
    rig.daemon.shutdown()
    assert Lifecycle.STOPPED == lifecycle()
    started = len(rig.of(DreamStart))
    rig.daemon.direct()
    assert None is rig.daemon.tick()
    assert started == len(rig.of(DreamStart))


def test_shutdown_past_the_grace_period_records_the_interrupt() -> None:
    """A cycle that will not finish within the grace period is closed as interrupted, so the log
    never ends in the middle of a dream."""
    rig = Rig(
        "ethos",
        datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
        ONEIROS_SCHEDULE__SILENCE_SECONDS="0",
        ONEIROS_DAEMON__SHUTDOWN_GRACE_SECONDS="0.1",
    )
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    rig.daemon.shutdown()
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    assert [("owner", "daemon stopped")] == [(r.event.source, r.event.reason) for r in rig.of(DreamInterrupted)]
    assert "Waking" == rig.golems.state("g").mode


def test_daemon_state_survives_a_restart(tmp_path: Path) -> None:
    """A new daemon on the same SQLite log knows the cycles, held messages and carried urgency."""
    url = f"sqlite:///{tmp_path}/events.db"
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), url=url, ONEIROS_SCHEDULE__SILENCE_SECONDS="0")
    rig.daemon.tick()
    assert rig.generator.entered.wait(10)
    rig.daemon.receive("kept")
    rig.generator.release.set()
    assert rig.daemon.wait(10)
    before = msgspec.structs.asdict(rig.daemon.state)
    again = Daemon(rig.golems, "g", rig.daemon.executor, schedule=rig.config.schedule)
    assert before == msgspec.structs.asdict(again.state)


def test_oneiros_run_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    """``oneiros run`` under SIGTERM exits 0 and every cycle it started is closed in the log."""
    url = f"sqlite:///{tmp_path}/events.db"
    env = {**os.environ, "ONEIROS_SCHEDULE__SILENCE_SECONDS": "0", "ONEIROS_SCHEDULE__MAX_PER_DAY": "0"}
    made = [sys.executable, "-m", "oneiros", "golem", "create", "golem", "--store", url]
    subprocess.run(made, env=env, cwd=tmp_path, capture_output=True, check=True)
    cmd = [
        sys.executable,
        "-m",
        "oneiros",
        "run",
        "--store",
        url,
        "--preset",
        "ethos",
        "--tick-seconds",
        "0.02",
        "--json",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 30
    store = None
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if Path(f"{tmp_path}/events.db").exists():
            store = open_store(url)
            if any(isinstance(r.event, DreamComplete) for r in store.read_stream("golem")):
                break
            store.close()
            store = None
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert 0 == proc.returncode, err.decode()
    summary = msgspec.json.decode(out.decode().strip().splitlines()[-1])
    store = open_store(url)
    records = store.read_stream("golem")
    started = {r.event.cycle_id for r in records if isinstance(r.event, DreamStart)}
    closed = {r.event.cycle_id for r in records if isinstance(r.event, DreamComplete | DreamInterrupted)}
    assert started
    assert started == closed
    assert "Waking" == summary["mode"]
    assert [] == [r for r in records if isinstance(r.event, MessageHeld)]
    store.close()


def test_entering_terminal_dreams_once_then_death_does_not_repeat_it() -> None:
    """Bardo: the terminal transition fires the emergency dream; the death that follows goes
    straight to Dying, and the heartbeat stops."""
    rig = Rig("bardo", datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    rig.generator.hold = False
    result = rig.daemon.set_phase("terminal")
    assert result is not None
    assert result.complete is not None
    assert rig.daemon.die("credit exhausted") is None
    assert ["emergency"] == [r.event.trigger for r in rig.of(DreamStart)]
    assert (True, None) == (rig.daemon.stopped, rig.daemon.tick())


def test_bardo_intensity_sets_the_cycle_batch_and_temperature() -> None:
    """A confused golem (accuracy, hence fitness, 0.4) dreams at high intensity, batches of 15 at
    temperature 0.9, and its epistemic clock (1.0) raises the rate to 1 + 0.3."""
    from oneiros.scheduling._urgency import Signals

    rig = Rig(
        "bardo",
        datetime(2026, 3, 2, 3, 0, tzinfo=UTC),
        ONEIROS_SCHEDULE__PRECONDITIONS__FIRST_DREAM_EPISODES__STABLE="0",
    )
    rig.generator.hold = False
    rig.daemon.signals = lambda: Signals(prediction_accuracy=0.4)
    decision = rig.daemon.tick()
    assert decision is not None
    assert ("window", "high/normal x1.30") == (
        decision.trigger,
        decision.intensity.label() if decision.intensity else "",
    )
    assert rig.daemon.wait(10)
    engines = rig.daemon.executor.settings.engines
    assert (15, 0.9) == (engines.batch_size, engines.exploration_temperature)
    assert "high/normal x1.30" == [r.event for r in rig.of(DreamDecided)][-1].intensity


def test_the_heartbeat_leaves_its_own_cycle_alone_before_the_thread_takes_the_lease(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cycle the daemon's own thread runs is not stranded while that thread lives, even before it
    holds the golem's lease (as on a loaded machine): a heartbeat then does not resume the cycle a
    second time, and a message held meanwhile is handed over when the one cycle ends."""
    import oneiros.runtime._executor as executor_module

    real = executor_module.holding
    go = threading.Event()

    def late(*args: Any, **kwargs: Any) -> Any:
        assert go.wait(10), "the test never let the cycle take its lease"
        return real(*args, **kwargs)

    monkeypatch.setattr(executor_module, "holding", late)
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="600")
    rig.generator.hold = False
    rig.daemon.direct()
    rig.advance(timedelta(seconds=147))
    rig.daemon.tick()
    deadline = time.monotonic() + 10
    while not rig.of(DreamStart) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "held" == rig.daemon.receive("while it dreams")
    rig.advance(timedelta(seconds=105))  # past the reconciler's grace, on the daemon's clock
    rig.daemon.tick()
    go.set()
    assert rig.daemon.wait(10)
    assert ([], ["while it dreams"]) == (rig.of(PhaseResumed), [m.text for m in rig.delivered])


_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("message"), st.integers(0, 10**6)),
        st.tuples(st.just("action"), st.just(0)),
        st.tuples(st.just("tick"), st.integers(1, 7200)),
        st.tuples(st.just("direct"), st.just(0)),
        st.tuples(st.just("interrupt"), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=25, deadline=None)
@given(steps=_STEPS)
def test_every_message_is_delivered_once_in_order_and_every_cycle_closes(steps: list[tuple[str, int]]) -> None:
    """Whatever the host does and whenever the cycles run, each message reaches the golem exactly
    once and in arrival order, and every cycle the daemon starts ends completed or interrupted."""
    rig = Rig("ethos", datetime(2026, 3, 2, 12, 0, tzinfo=UTC), ONEIROS_SCHEDULE__SILENCE_SECONDS="600")
    rig.generator.hold = False
    sent: list[str] = []
    for kind, value in steps:
        if kind == "message":
            sent.append(f"m{len(sent)}-{value}")
            rig.daemon.receive(sent[-1])
        elif kind == "action":
            rig.daemon.activity("action")
        elif kind == "tick":
            rig.advance(timedelta(seconds=value))
            rig.daemon.tick()
        elif kind == "direct":
            rig.daemon.direct()
        else:
            rig.daemon.interrupt("owner")
    assert rig.daemon.wait(10)
    rig.daemon.tick()
    assert rig.daemon.wait(10)
    assert sent == [m.text for m in rig.delivered]
    started = {r.event.cycle_id for r in rig.of(DreamStart)}
    closed = {r.event.cycle_id for r in rig.of(DreamComplete) + rig.of(DreamInterrupted)}
    assert started == closed
    assert () == rig.daemon.state.held
