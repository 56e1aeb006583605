"""Offline A/B: replay one recorded timeline of episodes and outcomes under two arms (dreaming on
and off, or two configurations), each in its own throwaway store, and compare what dreaming
brought: insights promoted, their precision, the sweep's hit rate, tokens and cost.

A timeline is JSON lines, in tick order, each one of::

    {"tick": 100, "episode": {...an Episode, its own tick 100...}}
    {"tick": 120, "outcome": {"verdict": "confirms", "tags": ["eth"], "regime": "ranging", "summary": "..."}}
    {"tick": 130, "dream": true}

Episodes are recorded, outcomes go to the validation sweep (matched against each staged entry's
criterion, as a live outcome would be), and at a ``dream`` line an arm that dreams runs one cycle.
Clock, ids and seed are fixed, so with the offline generator both arms give the same numbers on
every run. With a real model, each arm's generator calls are recorded to a file the first time and
answered from it afterwards (the recorded-generation machinery of ``oneiros rerun``), so the model
is called once per distinct request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import msgspec

from oneiros._deps import Deps, FixedClock, SequentialIds
from oneiros._errors import InputError
from oneiros.events._content import BudgetOverrun, GenerationFailed
from oneiros.events._staging import (
    ConfidenceChanged,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    OutcomeRecorded,
    Verdict,
)
from oneiros.events._types import Episode, GenerationRecorded, episode_out_of_bounds
from oneiros.generators._factory import make_generator
from oneiros.generators._protocol import Generator
from oneiros.lab._rerun import RecordedGenerator
from oneiros.projections._staging import StagedEntry
from oneiros.runtime._builds import Builder, Plain
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._staging import StagingSettings
from oneiros.store._history import export_history, import_history
from oneiros.store._store import EventStore, Recorded, open_store
from oneiros.validation._review import Feedback, OutcomeInput
from oneiros.validation._sweep import StagingProcess, matches

__all__ = ["ABReport", "Arm", "ArmReport", "TimelineStep", "load_timeline", "run_ab", "run_arm"]

GOLEM = "ab"
START = datetime(2026, 1, 1, tzinfo=UTC)


class TimelineOutcome(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    verdict: Verdict
    summary: str = ""
    tags: tuple[str, ...] = ()
    regime: str | None = None


class TimelineStep(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One line of a timeline: exactly one of ``episode``, ``outcome`` or ``dream``."""

    tick: Annotated[int, msgspec.Meta(ge=0)]
    episode: Episode | None = None
    outcome: TimelineOutcome | None = None
    dream: bool = False


def load_timeline(path: Path) -> list[TimelineStep]:
    """The steps of the timeline file at ``path``, checked whole before any is used."""
    if not path.is_file():
        raise InputError(f"no timeline file {str(path)!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"timeline {str(path)!r} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read timeline {str(path)!r}: {exc.strerror or type(exc).__name__}") from None
    decoder = msgspec.json.Decoder(TimelineStep)
    steps: list[TimelineStep] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            step = decoder.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise InputError(f"{where}: {exc}") from None
        kinds = (step.episode is not None) + (step.outcome is not None) + step.dream
        if kinds != 1:
            raise InputError(f"{where}: a step is exactly one of episode, outcome or dream")
        if step.episode is not None and (bad := episode_out_of_bounds(step.episode)) is not None:
            raise InputError(f"{where}: {bad[1]} - at `$.episode.{bad[0]}`")
        if step.episode is not None and step.episode.tick != step.tick:
            raise InputError(f"{where}: the episode's tick {step.episode.tick} is not the line's tick {step.tick}")
        if steps and step.tick < steps[-1].tick:
            raise InputError(f"{where}: tick {step.tick} comes after tick {steps[-1].tick}; lines go in tick order")
        steps.append(step)
    if not steps:
        raise InputError(f"timeline {path.name} has no steps")
    return steps


class Arm(msgspec.Struct, frozen=True, kw_only=True):
    """One side of the comparison: whether it dreams, and with what."""

    name: str
    label: str = ""
    """What the arm is, for the report ("dreaming, default config", "not dreaming")."""
    dreams: bool = True
    cycle: CycleSettings = CycleSettings()
    staging: StagingSettings = StagingSettings()
    recordings: Path | None = None
    """A history file of the arm's generator calls: written after a run with a live model, read
    back (and the model called only for what it lacks) on the next."""


class ArmReport(msgspec.Struct, frozen=True, kw_only=True):
    arm: str
    label: str
    dreams: bool
    cycles: int
    staged: int
    promoted: int
    refuted: int
    confirmed_after_promotion: int
    contradicted_after_promotion: int
    precision: float | None
    """Of the outcomes that bore on promoted entries after their promotion, the share that
    confirmed them; None when no outcome bore on one."""
    hit_rate: float | None
    """The sweep's confirming moves over all its confidence moves; None without a move."""
    tokens: int
    cost_usd: float
    model_calls: int
    recorded_calls: int


class ABReport(msgspec.Struct, frozen=True, kw_only=True):
    timeline: str
    steps: int
    episodes: int
    outcomes: int
    dream_points: int
    arms: tuple[ArmReport, ...]


def _generator(arm: Arm) -> Generator:
    return make_generator(arm.cycle.generator, seed=arm.cycle.seed or 0)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _after_promotion(store: EventStore, entries: dict[str, StagedEntry], settings: StagingSettings) -> tuple[int, int]:
    """Outcomes bearing on each promoted entry after the input that promoted it (the sweep's
    last outcome on it, or the review), each judged on the entry alone at the arm's
    ``staging.min_relevance``: (confirming, contradicting)."""
    promoted = {r.event.entry_id for r in store.read_all(types=[EntryPromoted])}  # type: ignore[attr-defined]
    decided_at: dict[str, int] = {}
    for record in store.read_all(types=[ConfidenceChanged, EntryReviewed]):
        match record.event:
            case (
                ConfidenceChanged(entry_id=entry_id, outcome_position=at)
                | EntryReviewed(entry_id=entry_id, review_position=at)
            ):
                decided_at[entry_id] = max(decided_at.get(entry_id, 0), at)
    confirmed = contradicted = 0
    outcomes = list(store.read_all(types=[OutcomeRecorded]))
    for entry_id in sorted(promoted):
        entry, position = entries[entry_id], decided_at.get(entry_id, 0)
        for record in outcomes:
            outcome = record.event
            assert isinstance(outcome, OutcomeRecorded)
            if record.position > position and matches(entry, outcome, settings):
                confirmed += outcome.verdict == "confirms"
                contradicted += outcome.verdict == "contradicts"
    return confirmed, contradicted


def run_arm(steps: Sequence[TimelineStep], arm: Arm, builds: Builder | None = None) -> ArmReport:
    """Replay ``steps`` under ``arm`` in a fresh in-memory store, with golems and executors of
    ``builds`` (the application's factory; this layer's default if None)."""
    builds = builds or Plain()
    store = open_store("memory://")
    deps = Deps(clock=FixedClock(START, timedelta(seconds=1)), ids=SequentialIds("ab-"), seed=arm.cycle.seed or 0)
    golems = builds.golems(store, deps=deps)
    golems.create(GOLEM)
    feedback = Feedback(store, deps=deps)
    live = _generator(arm) if arm.dreams else None
    recorded = _recorded(arm)
    pending: list[Episode] = []
    cycles = model_calls = recorded_calls = 0
    for step in steps:
        if step.episode is not None:
            pending.append(step.episode)
            continue
        if pending:
            golems.record_episodes(GOLEM, pending)
            pending = []
        if step.outcome is not None:
            feedback.record_outcome(GOLEM, OutcomeInput(tick=step.tick, **msgspec.structs.asdict(step.outcome)))
        elif live is not None:
            cycles += 1
            # The same ids in every arm: an arm differs from the other only by its settings.
            cycle_id = f"cycle-{cycles:03d}"
            generator: Generator = live
            if recorded is not None:
                generator = RecordedGenerator(recorded, cycle_id, shape_of=live, live=live)
            builds.in_process(golems, generator, arm.cycle).run_cycle(GOLEM, cycle_id=cycle_id)
            if isinstance(generator, RecordedGenerator):
                model_calls += generator.model_calls
                recorded_calls += generator.recorded_calls
    if pending:
        golems.record_episodes(GOLEM, pending)
    StagingProcess(store, arm.staging).catch_up()
    if arm.recordings is not None and live is not None and recorded is None:
        arm.recordings.parent.mkdir(parents=True, exist_ok=True)
        export_history(store, arm.recordings)
    return _report(store, arm, cycles, model_calls, recorded_calls)


def _recorded(arm: Arm) -> list[Recorded] | None:
    if arm.recordings is None or not arm.recordings.is_file():
        return None
    recordings = open_store("memory://")
    import_history(recordings, arm.recordings)
    return list(recordings.read_all(types=[GenerationRecorded, GenerationFailed, BudgetOverrun]))


def _report(store: EventStore, arm: Arm, cycles: int, model_calls: int, recorded_calls: int) -> ArmReport:
    entries = Feedback(store).entries(GOLEM)
    moves = [r.event for r in store.read_all(types=[ConfidenceChanged])]
    hits = sum(1 for m in moves if isinstance(m, ConfidenceChanged) and m.verdict == "confirms")
    confirmed, contradicted = _after_promotion(store, entries, arm.staging)
    generations = [r.event for r in store.read_all(types=[GenerationRecorded, GenerationFailed])]
    tokens = sum(
        g.tokens_in + g.tokens_out for g in generations if isinstance(g, GenerationRecorded | GenerationFailed)
    )
    cost = sum(g.cost_usd for g in generations if isinstance(g, GenerationRecorded | GenerationFailed))
    calls = len(generations) if not recorded_calls and not model_calls else model_calls
    return ArmReport(
        arm=arm.name,
        label=arm.label,
        dreams=arm.dreams,
        cycles=cycles,
        staged=sum(1 for _ in store.read_all(types=[EntryStaged])),
        promoted=sum(1 for _ in store.read_all(types=[EntryPromoted])),
        refuted=sum(1 for _ in store.read_all(types=[EntryRefuted])),
        confirmed_after_promotion=confirmed,
        contradicted_after_promotion=contradicted,
        precision=_ratio(confirmed, confirmed + contradicted),
        hit_rate=_ratio(hits, len(moves)),
        tokens=tokens,
        cost_usd=round(cost, 6),
        model_calls=calls,
        recorded_calls=recorded_calls,
    )


def run_ab(path: Path, arms: Sequence[Arm], builds: Builder | None = None) -> ABReport:
    """Replay the timeline at ``path`` under each arm, one after the other, each in its own store."""
    steps = load_timeline(path)
    return ABReport(
        timeline=path.name,
        steps=len(steps),
        episodes=sum(s.episode is not None for s in steps),
        outcomes=sum(s.outcome is not None for s in steps),
        dream_points=sum(s.dream for s in steps),
        arms=tuple(run_arm(steps, arm, builds) for arm in arms),
    )
