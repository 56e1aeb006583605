"""A whole cycle over the sample episodes with the deterministic generator: same seed, same events;
true counts; every output staged with a criterion; re-runs reuse recorded calls."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import msgspec
import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._codec import encode_event
from oneiros.events._content import (
    DreamFragments,
    DreamReport,
    DreamStaged,
    EpisodeDepotentiated,
    HypnagogicPrediction,
    StrategyHypothesis,
    ThreatSimulated,
    WakeUpSummary,
)
from oneiros.events._types import (
    DreamComplete,
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    GenerationRecorded,
    ReplayBatch,
)
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.phases._context import PhaseContext
from oneiros.phases._integration import Candidate, classify
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings
from oneiros.store._store import EventStore

START = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)
HARDENED = CycleSettings(budget=CycleBudget(tier="hardened"))


def _golems(url: str = "memory://", seed: int = 7) -> tuple[Golems, EventStore]:
    store = open_store(url)
    golems = Golems(store, deps=Deps(clock=FixedClock(START), ids=SequentialIds("e"), seed=seed))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    return golems, store


def _log(store: EventStore) -> list[tuple[str, bytes]]:
    """The stored log, each event's trace context left out: trace ids come from the tracer (they
    differ per run by design, for observability) and nothing folds them into state."""
    return [encode_event(msgspec.structs.replace(r.meta, trace={}), r.event) for r in store.read_all()]


@pytest.mark.parametrize("settings", [CycleSettings(), HARDENED], ids=["core", "hardened"])
def test_same_seed_gives_identical_events(settings: CycleSettings) -> None:
    """Two cycles over the sample episodes with the same seed append byte-identical events."""
    first_golems, first = _golems()
    second_golems, second = _golems()
    InProcessExecutor(first_golems, settings=settings).run_cycle("g")
    InProcessExecutor(second_golems, settings=settings).run_cycle("g")
    assert _log(first) == _log(second)
    third_golems, third = _golems(seed=8)
    InProcessExecutor(third_golems, settings=settings).run_cycle("g")
    assert _log(first) != _log(third)


@pytest.mark.parametrize("settings", [CycleSettings(), HARDENED], ids=["core", "hardened"])
def test_dream_complete_counts_match_the_events(settings: CycleSettings, sqlite_url: str) -> None:
    """DreamComplete's figures are exactly what the cycle's events add up to (on SQLite, the default store)."""
    golems, store = _golems(sqlite_url)
    result = InProcessExecutor(golems, settings=settings).run_cycle("g")
    events = [r.event for r in store.read_all()]
    kinds = Counter(type(e) for e in events)
    expected = DreamComplete(
        cycle_id=result.cycle_id,
        episodes_replayed=len({t for e in events if isinstance(e, ReplayBatch) for t in e.episode_ticks}),
        counterfactuals_generated=kinds[DreamCounterfactual],
        insights_crystallized=kinds[DreamInsight],
        heuristics_proposed=kinds[DreamHypothesis] + kinds[StrategyHypothesis],
        episodes_depotentiated=kinds[EpisodeDepotentiated],
        playbook_edits=sum(isinstance(e, DreamStaged) and e.kind == "playbook_revision" for e in events),
    )
    assert expected == result.complete
    assert result.complete.episodes_replayed > 0
    assert result.complete.counterfactuals_generated > 0
    store.close()


def test_hardened_cycle_runs_every_operation() -> None:
    """At [HARDENED] tier one cycle makes predictions, replays, counterfactuals, hypotheses in all three
    modes, threats, depotentiation, a dream with fragments and a thread, a report and a wake-up summary."""
    golems, store = _golems()
    InProcessExecutor(golems, settings=HARDENED).run_cycle("g")
    events = [r.event for r in store.read_all()]
    types = {type(e) for e in events}
    for cls in (
        HypnagogicPrediction,
        ReplayBatch,
        DreamCounterfactual,
        StrategyHypothesis,
        ThreatSimulated,
        EpisodeDepotentiated,
        DreamFragments,
        DreamReport,
        WakeUpSummary,
    ):
        assert cls in types, cls.__name__
    assert {"combinational", "exploratory", "transformational"} == {
        e.mode for e in events if isinstance(e, StrategyHypothesis)
    }
    assert {"forward", "reverse", "perturbed"} <= {e.direction for e in events if isinstance(e, ReplayBatch)}
    fragments = next(e for e in events if isinstance(e, DreamFragments))
    assert 3 <= len(fragments.fragments) <= 6
    assert fragments.thread
    assert 3 == len(fragments.pairs)
    for e in events:
        if isinstance(e, EpisodeDepotentiated):
            assert 0.3 - 1e-9 <= e.arousal_before - e.arousal_after <= 0.5 + 1e-9 or e.arousal_after == 0.0
        if isinstance(e, HypnagogicPrediction):
            assert 0.10 <= e.confidence <= 0.20


def test_core_tier_leaves_out_what_needs_hardened() -> None:
    """At the default [CORE] tier there is no creative recombination, threat simulation or depotentiation."""
    golems, store = _golems()
    InProcessExecutor(golems).run_cycle("g")
    types = {type(r.event) for r in store.read_all()}
    assert not types & {StrategyHypothesis, ThreatSimulated, EpisodeDepotentiated}
    assert DreamFragments in types


def test_every_output_is_staged_with_a_validation_criterion() -> None:
    """Each classified output enters staging with its kind, a confidence from the documents and a criterion."""
    golems, store = _golems()
    InProcessExecutor(golems, settings=HARDENED).run_cycle("g")
    staged = [r.event for r in store.read_all() if isinstance(r.event, DreamStaged)]
    kinds = Counter(s.kind for s in staged)
    assert {"novel_insight", "strategy_hypothesis", "threat", "playbook_revision", "creative_prediction"} <= set(kinds)
    assert all(s.validation_criterion for s in staged)
    assert {0.2} == {s.confidence for s in staged if s.kind in ("strategy_hypothesis", "playbook_revision", "threat")}
    assert {0.3, 0.35} == {s.confidence for s in staged if s.kind == "novel_insight"}
    report = next(r.event for r in store.read_all() if isinstance(r.event, DreamReport))
    assert tuple(s.entry_id for s in staged) == report.staging_writes


def test_second_cycle_confirms_patterns_and_flags_contradictions() -> None:
    """Against earlier entries, a matching pattern is a confirmed pattern and a negated one a
    flagged contradiction that names the entry it contradicts."""
    prior = [
        DreamStaged(
            cycle_id="old",
            entry_id="old:001",
            kind="novel_insight",
            content="ETH range floor bounces recover within the hour",
            confidence=0.3,
            validation_criterion="c",
        ),
    ]
    ctx = PhaseContext(
        cycle_id="new",
        phase="integration",
        episodes=[],
        cycle_outputs=[],
        settings=EngineSettings(),
        generate=lambda _r: None,
    )
    candidates = [
        Candidate(
            kind="novel_insight",
            content="ETH range floor bounces recover within the hour",
            confidence=0.3,
            source="ReplayBatch",
        ),
        Candidate(
            kind="novel_insight",
            content="ETH range floor bounces do not recover within the hour",
            confidence=0.3,
            source="ReplayBatch",
        ),
        Candidate(
            kind="novel_insight", content="Oracle lag precedes liquidations", confidence=0.3, source="ReplayBatch"
        ),
    ]
    out = classify(ctx, candidates, prior)
    assert [("confirmed_pattern", "old:001"), ("contradiction", "old:001"), ("novel_insight", None)] == [
        (c.kind, r) for c, r in out
    ]


class _Crash(Exception):
    pass


class _CountingGenerator(OfflineGenerator):
    def __init__(self, seed: int, crash_after: int | None = None) -> None:
        super().__init__(seed)
        self.calls = 0
        self.crash_after = crash_after

    def generate(self, request: GenerationRequest) -> Generation:
        if self.crash_after is not None and self.calls >= self.crash_after:
            raise _Crash(request.call_key)
        self.calls += 1
        return super().generate(request)


def test_a_rerun_after_a_crash_reuses_recorded_calls_and_ends_as_a_clean_run() -> None:
    """A phase killed mid-way keeps its recorded generations; running it again reuses them, calls the
    model only for the rest, and leaves the same outputs as a run that never crashed. (The crashed
    call's reservation stays counted at its worst case, by design, so the budget has room for it.)"""
    settings = CycleSettings(budget=CycleBudget(cycle_tokens=60_000))
    clean_golems, clean = _golems()
    crashed_golems, crashed = _golems()
    cycle = clean_golems.fall_asleep("g", "owner", budget_tokens=1_200, cycle_id="c1")
    crashed_golems.fall_asleep("g", "owner", budget_tokens=1_200, cycle_id="c1")
    for golems in (clean_golems, crashed_golems):
        run_phase(golems, "g", cycle, "hypnagogic_onset", _CountingGenerator(7), settings)
    run_phase(clean_golems, "g", cycle, "nrem", _CountingGenerator(7), settings)
    with pytest.raises(_Crash):
        run_phase(crashed_golems, "g", cycle, "nrem", _CountingGenerator(7, crash_after=2), settings)
    again = _CountingGenerator(7)
    outcome = run_phase(crashed_golems, "g", cycle, "nrem", again, settings)
    assert 2 == outcome.reused_generations
    assert again.calls == outcome.generator_calls

    def outputs(store: EventStore) -> list[object]:
        return [
            r.event for r in store.read_all() if isinstance(r.event, ReplayBatch | DreamStaged | GenerationRecorded)
        ]

    assert outputs(clean) == outputs(crashed)
    assert not run_phase(crashed_golems, "g", cycle, "nrem", again, settings).ran


def test_report_and_wake_up_summary_describe_the_cycle() -> None:
    """The DreamReport carries the journal's figures and the wake-up text names what was replayed."""
    golems, store = _golems()
    result = InProcessExecutor(golems, settings=HARDENED).run_cycle("g")
    events = [r.event for r in store.read_all()]
    report = next(e for e in events if isinstance(e, DreamReport))
    summary = next(e for e in events if isinstance(e, WakeUpSummary))
    assert result.complete is not None
    assert result.complete.episodes_replayed == report.journal.phase1_summary.episodes_replayed
    assert result.complete.counterfactuals_generated == report.journal.phase2_summary.counterfactuals_generated
    assert 0.0 <= report.journal.dream_quality_score <= 1.0
    assert summary.text.startswith(
        f"While dreaming I replayed {report.journal.phase1_summary.episodes_replayed} episodes"
    )
    assert any(h.startswith("[dream] ") for h in summary.highlights)
    assert msgspec.json.decode(msgspec.json.encode(report), type=DreamReport) == report


def test_every_backend_records_the_same_cycle(store: EventStore) -> None:
    """The same hardened cycle appends the same payloads on memory, SQLite and PostgreSQL."""
    reference_golems, reference = _golems()
    InProcessExecutor(reference_golems, settings=HARDENED).run_cycle("g")
    golems = Golems(store, deps=Deps(clock=FixedClock(START), ids=SequentialIds("e"), seed=7))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    InProcessExecutor(golems, settings=HARDENED).run_cycle("g")
    assert _log(reference) == _log(store)
