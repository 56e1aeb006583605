"""Dreaming health: the alarms raised and cleared through real cycles (a chat server that answers
garbage, overreports or answers honestly; the offline generator), exactly once across a crash."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, Observers, SequentialIds
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._health import HEALTH_STREAM, HealthAlarmRaised
from oneiros.events._staging import side_stream
from oneiros.fsm._observers import follow_log
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.health._health import HealthProcess
from oneiros.projections._runner import RunnerSettings
from oneiros.settings._generator import OpenAISettings
from oneiros.settings._health import HealthSettings
from oneiros.store._store import EventStore, open_store
from oneiros.validation._review import Feedback, OutcomeInput
from oneiros.validation._sweep import StagingProcess
from tests.chat_server import HARDENED, ChatServer, sample_golems
from tests.cli_runner import run_cli

SETTINGS = HealthSettings(empty_cycles=2, no_promotion_cycles=3, cost_without_yield_usd=0.0001)


def _alarms(store: EventStore, golem: str = "g") -> list[tuple[str, str, str, float]]:
    return [
        (type(r.event).__name__.removeprefix("HealthAlarm"), r.event.alarm, r.event.cycle_id, r.event.value)
        for r in store.read_stream(side_stream(golem, HEALTH_STREAM))
    ]


def _settle(store: EventStore, settings: HealthSettings = SETTINGS) -> None:
    StagingProcess(store).catch_up()
    HealthProcess(store, settings).catch_up()


def _generator(server: ChatServer) -> OpenAIGenerator:
    settings = OpenAISettings(base_url=server.url, models={"core": "m", "hardened": "m"}, timeout_s=2, retries=0)
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": "sk-test"})


def _promote_one(golems: Golems, cycle_id: str) -> str:
    """Confirm the first active hypothesis of ``cycle_id`` until the sweep promotes it."""
    StagingProcess(golems.store).catch_up()
    feedback = Feedback(golems.store, deps=golems.deps)
    active = [e for e in feedback.entries("g").values() if e.cycle_id == cycle_id and e.active]
    entry = min(active, key=lambda e: e.entry_id)
    for tick in range(100, 100 + (70 - entry.confidence_pct + 9) // 10):
        feedback.record_outcome("g", OutcomeInput(tick=tick, verdict="confirms", entry_id=entry.entry_id))
    return entry.entry_id


def test_alarms_are_raised_and_cleared_through_real_cycles(chat_server: ChatServer) -> None:
    """Two cycles of garbage answers stage nothing but cost money; an honest cycle stages and is the
    third without a promotion; an overreported answer is an overrun; a clean cycle and a promotion
    clear what they answer. Each alarm is raised once and cleared once, at the right cycle."""
    golems = sample_golems(3)
    executor = InProcessExecutor(golems, _generator(chat_server), settings=HARDENED)
    cycles = []
    for script in (["garbage"] * 400, ["garbage"] * 400, [], ["overreport"], []):
        chat_server.reset(script)
        cycles.append(executor.run_cycle("g").cycle_id)
        _settle(golems.store)
    c1, c2, c3, c4, c5 = cycles
    promoted = _promote_one(golems, c5)
    _settle(golems.store)
    alarms = _alarms(golems.store)
    cost = alarms[0][3]
    assert cost > 0.0001
    assert [
        ("Raised", "cost_without_yield", c1, cost),
        ("Raised", "empty_cycles", c2, 2.0),
        ("Cleared", "empty_cycles", c3, 0.0),
        ("Raised", "no_promotion", c3, 3.0),
        ("Raised", "budget_overrun", c4, 1.0),
        ("Cleared", "budget_overrun", c5, 0.0),
        ("Cleared", "no_promotion", c5, 0.0),
        ("Cleared", "cost_without_yield", c5, 0.0),
    ] == alarms
    last = golems.store.read_stream(side_stream("g", HEALTH_STREAM))[-1].event
    assert f"entry {promoted} promoted by sweep" == last.detail


def _offline_golem(store: EventStore, cycles: int = 1) -> tuple[Golems, list[str]]:
    golems = Golems(store, deps=Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=5))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    executor = InProcessExecutor(golems, OfflineGenerator(seed=5))
    return golems, [executor.run_cycle("g").cycle_id for _ in range(cycles)]


def _moves(golems: Golems, cycle_id: str, verdicts: list[tuple[int, str]]) -> None:
    """Record outcomes on the cycle's active entries: (which entry, verdict)."""
    StagingProcess(golems.store).catch_up()
    feedback = Feedback(golems.store, deps=golems.deps)
    active = sorted(e.entry_id for e in feedback.entries("g").values() if e.cycle_id == cycle_id and e.active)
    for tick, (which, verdict) in enumerate(verdicts, start=200):
        feedback.record_outcome("g", OutcomeInput(tick=tick, verdict=verdict, entry_id=active[which]))  # type: ignore[arg-type]


def test_a_falling_hit_rate_raises_and_a_recovery_clears() -> None:
    """Over a window of four confidence moves with a floor of 50%: four contradictions raise the
    alarm at the fourth move (0%); two confirmations bring the window to two of four (50%, not below
    the floor) and clear it."""
    settings = HealthSettings(hit_rate_window=4, hit_rate_floor_pct=50, no_promotion_cycles=None)
    golems, (cycle,) = _offline_golem(open_store("memory://"))
    _moves(golems, cycle, [(0, "contradicts"), (0, "contradicts"), (1, "contradicts")])
    _settle(golems.store, settings)
    assert [] == _alarms(golems.store)
    _moves(golems, cycle, [(1, "contradicts")])
    _settle(golems.store, settings)
    assert [("Raised", "hit_rate", cycle, 0.0)] == _alarms(golems.store)
    _moves(golems, cycle, [(2, "confirms")])
    _settle(golems.store, settings)
    assert [("Raised", "hit_rate", cycle, 0.0)] == _alarms(golems.store)
    _moves(golems, cycle, [(2, "confirms")])
    _settle(golems.store, settings)
    assert [("Raised", "hit_rate", cycle, 0.0), ("Cleared", "hit_rate", cycle, 50.0)] == _alarms(golems.store)


class _Crash(Exception):
    pass


def test_alarms_are_recorded_exactly_once_across_a_crash_and_restart(tmp_path: Path) -> None:
    """The health process dies between two writes (one decision a transaction); a new process on a
    new connection carries on from its checkpoint: every alarm is in the log once, and running
    again (or a second process) adds nothing."""
    url = f"sqlite:///{tmp_path}/events.db"
    settings = HealthSettings(empty_cycles=1, no_promotion_cycles=1, cost_without_yield_usd=None)
    store = open_store(url)
    _golems, cycles = _offline_golem(store, cycles=3)
    StagingProcess(store).catch_up()
    writes = 0
    original = store.append_streams

    def dies_on_second_write(*args: Any, **kwargs: Any) -> Any:
        nonlocal writes
        writes += 1
        if writes == 2:
            raise _Crash
        return original(*args, **kwargs)

    store.append_streams = dies_on_second_write  # type: ignore[method-assign]
    with pytest.raises(_Crash):
        HealthProcess(store, settings, runner=RunnerSettings(batch_events=1)).catch_up()
    store.close()
    assert 1 == len(_alarms(open_store(url)))
    for _ in range(2):
        restarted = open_store(url)
        HealthProcess(restarted, settings, runner=RunnerSettings(batch_events=1)).catch_up()
        restarted.close()
    final = open_store(url)
    # Every cycle stages entries and none is promoted: one no_promotion alarm, at the first cycle.
    assert [("Raised", "no_promotion", cycles[0], 1.0)] == _alarms(final)
    final.close()


def test_oneiros_health_reports_the_alarms_as_json_and_a_table(tmp_path: Path) -> None:
    """`oneiros health --json` in a directory with a store names each golem's raised alarms and
    metrics; the table names the alarm; the config's [health] thresholds apply; --check exits 1
    while an alarm is raised; a looser threshold clears it at the next cycle's end, not before."""
    (tmp_path / "oneiros.toml").write_text("[health]\nno_promotion_cycles = 2\n")
    run_cli(["dream", "--sample", "--json"], cwd=tmp_path, check=True)
    run_cli(["dream", "--json"], cwd=tmp_path, check=True)
    out = run_cli(["health", "--json"], cwd=tmp_path, check=True)
    (golem,) = json.loads(out.stdout)["golems"]
    assert "golem" == golem["golem_id"]
    assert ["no_promotion"] == [a["alarm"] for a in golem["alarms"]]
    assert "2 cycles in a row without a promotion" == golem["alarms"][0]["detail"]
    assert {"cycles": 2, "promotions": 0, "cycles_since_promotion": 2} == {
        k: golem["metrics"][k] for k in ("cycles", "promotions", "cycles_since_promotion")
    }
    again = run_cli(["health", "--json"], cwd=tmp_path, check=True)
    assert len(golem["history"]) == len(json.loads(again.stdout)["golems"][0]["history"])
    table = run_cli(["health"], cwd=tmp_path, check=True)
    assert "golem: no_promotion since cycle" in table.stdout
    checked = run_cli(["health", "--check", "--json"], cwd=tmp_path)
    assert 1 == checked.returncode
    (tmp_path / "oneiros.toml").write_text("[health]\nno_promotion_cycles = 5\n")
    # A looser threshold clears the alarm at the next judgement only; until a cycle ends it stays raised.
    still = run_cli(["health", "--check", "--golem", "golem"], cwd=tmp_path)
    assert 1 == still.returncode
    run_cli(["dream", "--json"], cwd=tmp_path, check=True)
    calm = run_cli(["health", "--check", "--json"], cwd=tmp_path)
    assert 0 == calm.returncode
    assert [] == json.loads(calm.stdout)["golems"][0]["alarms"]


def test_observers_in_another_process_see_each_alarm_once(tmp_path: Path) -> None:
    """An observer attached to HealthAlarmRaised, following the log on its own connection, is
    called once per alarm once the health process has committed it."""
    url = f"sqlite:///{tmp_path}/events.db"
    store = open_store(url)
    seen: list[tuple[str, str]] = []
    observers = Observers()
    observers.on_event(HealthAlarmRaised, lambda r: seen.append((r.event.alarm, r.meta.golem_id)))
    follower = open_store(url)
    stop = threading.Event()
    thread = threading.Thread(target=follow_log, args=(follower, observers, stop), kwargs={"after": 0})
    thread.start()
    try:
        _golems, _cycles = _offline_golem(store, cycles=1)
        _settle(store, HealthSettings(no_promotion_cycles=1))
        _settle(store, HealthSettings(no_promotion_cycles=1))
        deadline = time.monotonic() + 30
        while not seen and time.monotonic() < deadline:
            stop.wait(0.05)
        stop.wait(0.3)  # anything dispatched twice would arrive by now
    finally:
        stop.set()
        thread.join(timeout=10)
        follower.close()
        store.close()
    assert [("no_promotion", "g:health")] == seen
