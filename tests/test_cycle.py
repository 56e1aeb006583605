"""A real dream cycle over the sample episodes: counts, determinism, observers, idempotence, failure."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime

import msgspec
import pytest

from oneiros import (
    Deps,
    FixedClock,
    Golems,
    InProcessExecutor,
    Observers,
    SequentialIds,
    load_episodes,
    open_store,
    replay,
)
from oneiros.episodes._episodes import sample_episodes_path
from oneiros.events._types import (
    DreamComplete,
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    DreamInterrupted,
    DreamPhase,
    ReplayBatch,
)
from oneiros.fsm._observers import Transition, follow_log
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleSettings
from oneiros.store._store import Recorded


def make(url: str = "memory://", seed: int = 7, observers: Observers | None = None) -> Golems:
    deps = Deps(clock=FixedClock(datetime(2026, 2, 1, 2, 0, tzinfo=UTC)), ids=SequentialIds("c"), seed=seed)
    golems = Golems(open_store(url), deps=deps, observers=observers)
    golems.create("g1")
    golems.record_episodes("g1", load_episodes(sample_episodes_path()))
    return golems


def test_dream_complete_counts_match_the_events_emitted() -> None:
    """DreamComplete's counts equal a count of the cycle's own output events in the log."""
    golems = make()
    result = InProcessExecutor(golems).run_cycle("g1")
    events = [r.event for r in golems.history("g1") if r.meta.cycle_id == result.cycle_id]
    kinds = Counter(type(e) for e in events)
    replayed = {t for e in events if isinstance(e, ReplayBatch) for t in e.episode_ticks}
    complete = [e for e in events if isinstance(e, DreamComplete)]
    assert 1 == len(complete)
    assert complete[0] == result.complete
    assert (len(replayed), kinds[DreamCounterfactual], kinds[DreamHypothesis], kinds[DreamInsight]) == (
        complete[0].episodes_replayed,
        complete[0].counterfactuals_generated,
        complete[0].heuristics_proposed,
        complete[0].insights_crystallized,
    )
    assert complete[0].episodes_replayed > 0
    assert complete[0].heuristics_proposed > 0
    assert ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"] == [
        e.phase for e in events if isinstance(e, DreamPhase)
    ]
    assert "Waking" == golems.state("g1").mode


def test_the_cycle_works_on_the_episodes_themselves() -> None:
    """Hypotheses are seeded by replayed episodes and quote their words: no canned text."""
    golems = make()
    InProcessExecutor(golems).run_cycle("g1")
    history = golems.history("g1")
    summaries = {
        r.event.episode.tick: r.event.episode.summary for r in history if r.event.type_name == "EpisodeRecorded"
    }
    replayed = {t for r in history if isinstance(r.event, ReplayBatch) for t in r.event.episode_ticks}
    for record in history:
        if isinstance(record.event, DreamHypothesis):
            assert record.event.seed_episode_tick in replayed
            assert any(s in record.event.hypothesis for s in summaries.values())


def _stripped(records: list[Recorded]) -> list[tuple[str, int, bytes]]:
    return [(r.event.type_name, r.version, msgspec.json.encode(r.event)) for r in records]


def test_same_seed_same_events_and_a_different_seed_differs() -> None:
    """Two runs with the same seed, clock and ids give identical logs; another seed gives other text.

    The trace context in each event's metadata is left out: trace ids are drawn by the tracer,
    for observability, and nothing folds them into state."""
    first, second, other = make(seed=7), make(seed=7), make(seed=8)
    for golems in (first, second, other):
        InProcessExecutor(golems).run_cycle("g1", cycle_id="cycle-1")

    def untraced(golems: Golems) -> list[Recorded]:
        history = golems.history("g1")
        return [msgspec.structs.replace(r, meta=msgspec.structs.replace(r.meta, trace={})) for r in history]

    assert untraced(first) == untraced(second)
    assert _stripped(first.history("g1")) != _stripped(other.history("g1"))


def test_observers_run_after_commit_and_never_during_replay(tmp_path: object) -> None:
    """Phase observers see each transition once, with the event already readable from the store;
    replaying the log calls none of them."""
    seen: list[tuple[str, str, bool]] = []
    observers = Observers()
    golems_ref: list[Golems] = []

    def note(kind: str) -> object:
        def fn(t: Transition) -> None:
            committed = golems_ref[0].store.read_stream(t.golem_id)[-1].position >= t.record.position
            seen.append((kind, t.state, committed))

        return fn

    observers.on_enter("rem", note("enter"))  # type: ignore[arg-type]
    observers.on_exit("Dreaming", note("exit"))  # type: ignore[arg-type]
    completes: list[int] = []
    observers.on_event(DreamComplete, lambda r: completes.append(r.position))
    golems = make(f"sqlite:///{tmp_path}/e.db", observers=observers)
    golems_ref.append(golems)
    InProcessExecutor(golems).run_cycle("g1")
    assert [("enter", "Dreaming_REM", True), ("exit", "Dreaming", True)] == seen
    assert 1 == len(completes)
    replay(golems.store)
    assert 2 == len(seen)
    assert 1 == len(completes)


def test_a_failing_observer_does_not_undo_the_commit() -> None:
    """An observer that raises is logged; the events stay and the cycle completes."""
    observers = Observers()

    def boom(_t: Transition) -> None:
        raise RuntimeError("observer bug")

    observers.on_enter("nrem", boom)
    golems = make(observers=observers)
    result = InProcessExecutor(golems).run_cycle("g1")
    assert result.complete is not None
    assert result.interrupted is None


def test_running_a_phase_twice_appends_its_events_once() -> None:
    """A second run of a phase finds it done and appends nothing; generator responses are reused."""
    golems = make()
    calls: list[str] = []

    class Counting(OfflineGenerator):
        def generate(self, request: GenerationRequest) -> Generation:
            calls.append(request.call_key)
            return super().generate(request)

    generator = Counting(seed=1)
    cycle = golems.fall_asleep("g1", "owner", budget_tokens=800)
    settings = CycleSettings()
    assert run_phase(golems, "g1", cycle, "hypnagogic_onset", generator, settings).ran
    calls.clear()
    first = run_phase(golems, "g1", cycle, "nrem", generator, settings)
    head = golems.store.head()
    again = run_phase(golems, "g1", cycle, "nrem", generator, settings)
    assert (True, False) == (first.ran, again.ran)
    assert head == golems.store.head()
    assert len(calls) == len(set(calls)) == first.generator_calls > 0


def test_a_phase_never_spends_past_its_budget() -> None:
    """With a tiny cycle budget, phases stop calling the generator instead of overspending."""
    from oneiros.settings._cycle import CycleBudget

    golems = make()
    settings = CycleSettings(budget=CycleBudget(cycle_tokens=1_200))
    result = InProcessExecutor(golems, settings=settings).run_cycle("g1")
    budgets = {e.phase: e.budget_tokens for r in golems.history("g1") if isinstance(e := r.event, DreamPhase)}
    for outcome in result.phases:
        assert outcome.tokens_spent <= budgets[outcome.phase]
    assert result.complete is not None


def test_a_phase_that_fails_ends_the_cycle_interrupted_with_the_reason() -> None:
    """A generator that raises interrupts the cycle (source failure) and the golem is awake again."""
    golems = make()

    class Broken:
        def generate(self, request: GenerationRequest) -> Generation:
            raise ConnectionError("model unreachable")

    result = InProcessExecutor(golems, generator=Broken()).run_cycle("g1")
    assert result.complete is None
    assert "hypnagogic_onset failed: ConnectionError: model unreachable" == result.interrupted
    last = [r.event for r in golems.history("g1") if isinstance(r.event, DreamInterrupted)][-1]
    assert ("failure", "hypnagogic_onset failed: ConnectionError: model unreachable") == (last.source, last.reason)
    assert "Waking" == golems.state("g1").mode


@pytest.mark.parametrize("phase", ["thriving", "stable", "conservation", "declining", "terminal"])
def test_phase_budgets_follow_the_bardo_table(phase: str) -> None:
    """Each behavioral phase's shares sum to 100% with onset 10% and return 5%."""
    from oneiros.settings._phases import PHASES

    shares = {p.name: p.shares.of(phase) for p in PHASES}  # type: ignore[arg-type]
    assert 1.0 == pytest.approx(sum(shares.values()))
    assert (0.10, 0.05) == (shares["hypnagogic_onset"], shares["hypnopompic_return"])


def test_observers_follow_events_written_by_another_process(tmp_path: object) -> None:
    """A follower in this process sees the phase transitions of a cycle dreamt by another process."""
    url = f"sqlite:///{tmp_path}/shared.db"
    store = open_store(url)
    entered: list[str] = []
    observers = Observers()
    for phase in ("hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return", "Waking"):
        observers.on_enter(phase, lambda t: entered.append(t.state))
    stop = threading.Event()
    follower = threading.Thread(target=follow_log, args=(store, observers, stop), kwargs={"after": 0})
    follower.start()
    try:
        subprocess.run(
            [sys.executable, "-m", "oneiros", "dream", "--json", "--sample", "--store", url],
            capture_output=True,
            check=True,
        )
        deadline = time.monotonic() + 10
        while len(entered) < 7 and time.monotonic() < deadline:
            stop.wait(0.02)
    finally:
        stop.set()
        follower.join()
    assert [
        "Waking",
        "Dreaming_HypnagogicOnset",
        "Dreaming_NREM",
        "Dreaming_REM",
        "Dreaming_Integration",
        "Dreaming_HypnopompicReturn",
        "Waking",
    ] == entered
