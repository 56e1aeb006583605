"""A golem's state as a fold of its events, and the decisions that turn commands into events.

``GolemState.apply`` is the only code that moves state, and it runs the same way live and in
replay, which is why replay rebuilds exactly the live state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from oneiros.events._content import (
    DreamStaged,
    DreamSuppressed,
    EpisodeDepotentiated,
    GenerationFailed,
    StrategyHypothesis,
)
from oneiros.events._outcome import DreamEmpty, EmptyReason
from oneiros.events._types import (
    BehavioralPhase,
    DreamComplete,
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    DreamInterrupted,
    DreamOutput,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    EpisodeRecorded,
    Event,
    GenerationRecorded,
    GolemCreated,
    Mode,
    ModeChanged,
    ReplayBatch,
    registered_events,
)
from oneiros.fsm._machine import SEPARATOR
from oneiros.settings._phases import PHASES
from oneiros.settings._vocabulary import BardoPhase
from oneiros.store._store import Recorded, Tally

__all__ = ["CycleCounts", "GolemState", "fold"]


class CycleCounts(msgspec.Struct, kw_only=True):
    """What the current cycle has produced so far; DreamComplete reports these."""

    replayed_ticks: frozenset[int] = frozenset()
    counterfactuals_generated: int = 0
    insights_crystallized: int = 0
    heuristics_proposed: int = 0
    episodes_depotentiated: int = 0
    playbook_edits: int = 0
    generation_calls: int = 0
    """Generator calls settled (GenerationRecorded or GenerationFailed), reused ones once."""
    failed_calls: int = 0
    last_failure: str = ""
    staged: int = 0
    suppressed: bool = False

    def add(self, event: DreamOutput) -> None:
        """Count one dream output; outputs no figure of DreamComplete counts leave these as they are."""
        cls = type(event)
        count = _COUNTERS.get(cls)
        if count is None:
            count = _COUNTERS[cls] = _counter_for(cls)
        count(self, event)

    def complete_event(self, cycle_id: str) -> DreamComplete:
        return DreamComplete(
            cycle_id=cycle_id,
            episodes_replayed=len(self.replayed_ticks),
            counterfactuals_generated=self.counterfactuals_generated,
            insights_crystallized=self.insights_crystallized,
            heuristics_proposed=self.heuristics_proposed,
            episodes_depotentiated=self.episodes_depotentiated,
            playbook_edits=self.playbook_edits,
        )

    def empty_event(self, cycle_id: str) -> DreamEmpty | None:
        """The flag a cycle ending with these counts carries when it produced nothing: every
        generator call failed, or nothing was staged. None for a cycle that produced something, and
        for one suppressed on purpose (DreamSuppressed says why that one made nothing)."""
        calls, failed = self.generation_calls, self.failed_calls
        if self.suppressed:
            return None
        if calls and failed == calls:
            last = f" (last: {self.last_failure})" if self.last_failure else ""
            detail = f"every generator call failed: {failed} of {calls}{last}"
            reason: EmptyReason = "all_calls_failed"
        elif not self.staged:
            detail = f"nothing was staged ({calls} generator calls, {failed} failed)"
            reason = "nothing_staged"
        else:
            return None
        return DreamEmpty(
            cycle_id=cycle_id, reason=reason, detail=detail, generator_calls=calls, failed_calls=failed, staged=0
        )


class GolemState(msgspec.Struct, kw_only=True):
    """Everything the log says about one golem, as of ``position``."""

    golem_id: str
    name: str = ""
    behavioral_phase: BehavioralPhase = "stable"
    mode: Mode | None = None
    phase: DreamPhaseName | None = None
    bardo_phase: BardoPhase | None = None
    """The phase as its DreamPhase named it in Bardo's terms, which is its state in the machine."""
    cycle_id: str | None = None
    version: int = 0
    position: int = 0
    episodes: int = 0
    cycles_started: int = 0
    cycles_completed: int = 0
    cycles_interrupted: int = 0
    last_cycle_id: str | None = None
    last_complete: DreamComplete | None = None
    last_empty: DreamEmpty | None = None
    """The flag of the last cycle that ended having produced nothing."""
    counts: CycleCounts = msgspec.field(default_factory=CycleCounts)

    def __post_init__(self) -> None:
        # A state stored before it kept ``bardo_phase`` (a golems projection row): a canonical phase's.
        if self.phase is not None and self.bardo_phase is None and (spec := PHASES.get(self.phase)) is not None:
            self.bardo_phase = spec.state

    @property
    def exists(self) -> bool:
        return self.mode is not None

    @property
    def machine_state(self) -> str:
        """The machine's state name: ``Waking``, ``Dying`` or ``Dreaming_<Phase>``."""
        if self.mode == "Dreaming" and self.bardo_phase is not None:
            return f"Dreaming{SEPARATOR}{self.bardo_phase}"
        return self.mode or "Uncreated"

    def apply(self, record: Recorded) -> None:
        """Move this state by one event. Unknown event types only advance the version."""
        event = record.event
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)
        elif isinstance(event, DreamOutput):
            self.counts.add(event)
        self.version = record.version
        self.position = record.position

    @staticmethod
    def tallied() -> tuple[type[Event], ...]:
        """The event types whose whole effect :meth:`apply_tally` makes from their count: episodes,
        and every type that only moves the version."""
        return tuple(
            cls
            for cls in registered_events().values()
            if cls is EpisodeRecorded or (cls not in _HANDLERS and not issubclass(cls, DreamOutput))
        )

    def apply_tally(self, tally: Tally) -> None:
        """What :meth:`apply` of each of ``tally.count`` events of one :meth:`tallied` type does.
        A tally of a stretch comes after the stretch's other events, so positions only move forward."""
        if tally.event_type is EpisodeRecorded:
            self.episodes += tally.count
        self.version = max(self.version, tally.version)
        self.position = max(self.position, tally.position)

    def apply_episodes(self, count: int, last: Recorded) -> None:
        """What :meth:`apply` does for ``count`` EpisodeRecorded events in a row, ``last`` the last
        of them: a long stream is mostly episodes, and a fold need not visit each."""
        self.episodes += count
        self.version = last.version
        self.position = last.position

    def summary(self) -> dict[str, Any]:
        """The fields a person or an API client reads, as plain JSON values."""
        return {
            "golem_id": self.golem_id,
            "mode": self.mode,
            "phase": self.phase,
            "machine_state": self.machine_state,
            "cycle_id": self.cycle_id,
            "version": self.version,
            "position": self.position,
            "episodes": self.episodes,
            "cycles_completed": self.cycles_completed,
            "cycles_interrupted": self.cycles_interrupted,
        }

    def snapshot(self) -> GolemState:
        """An independent copy (the fields it shares are immutable)."""
        return msgspec.structs.replace(self, counts=msgspec.structs.replace(self.counts))


def _created(state: GolemState, event: Event) -> None:
    assert isinstance(event, GolemCreated)
    state.name = event.name
    state.behavioral_phase = event.behavioral_phase
    state.mode = "Waking"


def _mode_changed(state: GolemState, event: Event) -> None:
    assert isinstance(event, ModeChanged)
    state.mode = event.to_mode
    if event.to_mode != "Dreaming":
        state.phase = None
        state.bardo_phase = None
        state.cycle_id = None


def _episode(state: GolemState, _event: Event) -> None:
    state.episodes += 1


def _dream_start(state: GolemState, event: Event) -> None:
    assert isinstance(event, DreamStart)
    state.cycle_id = event.cycle_id
    state.last_cycle_id = event.cycle_id
    state.cycles_started += 1
    state.counts = CycleCounts()


def _dream_phase(state: GolemState, event: Event) -> None:
    assert isinstance(event, DreamPhase)
    state.phase = event.phase
    state.bardo_phase = event.bardo_phase


def _dream_complete(state: GolemState, event: Event) -> None:
    assert isinstance(event, DreamComplete)
    state.cycles_completed += 1
    state.last_complete = event


def _dream_empty(state: GolemState, event: Event) -> None:
    assert isinstance(event, DreamEmpty)
    state.last_empty = event


def _dream_interrupted(state: GolemState, _event: Event) -> None:
    state.cycles_interrupted += 1


# What each kind of dream output adds to the counts, decided once per class (a fold meets tens of
# thousands of outputs; matching each against every pattern was most of a golem fold's time).
_Counter = Callable[[CycleCounts, Any], None]
_COUNTERS: dict[type[Event], _Counter] = {}


def _generation(counts: CycleCounts, _event: GenerationRecorded) -> None:
    counts.generation_calls += 1


def _failed(counts: CycleCounts, event: GenerationFailed) -> None:
    counts.generation_calls += 1
    counts.failed_calls += 1
    counts.last_failure = event.reason


def _suppressed(counts: CycleCounts, _event: DreamSuppressed) -> None:
    counts.suppressed = True


def _staged(counts: CycleCounts, event: DreamStaged) -> None:
    counts.staged += 1
    if event.kind == "playbook_revision":
        counts.playbook_edits += 1


def _replayed(counts: CycleCounts, event: ReplayBatch) -> None:
    counts.replayed_ticks = counts.replayed_ticks | frozenset(event.episode_ticks)


def _heuristic(counts: CycleCounts, _event: DreamOutput) -> None:
    counts.heuristics_proposed += 1


def _counterfactual(counts: CycleCounts, _event: DreamCounterfactual) -> None:
    counts.counterfactuals_generated += 1


def _insight(counts: CycleCounts, _event: DreamInsight) -> None:
    counts.insights_crystallized += 1


def _depotentiated(counts: CycleCounts, _event: EpisodeDepotentiated) -> None:
    counts.episodes_depotentiated += 1


def _uncounted(_counts: CycleCounts, _event: DreamOutput) -> None:
    pass


def _counter_for(cls: type[Event]) -> _Counter:
    rules: list[tuple[type[Event] | tuple[type[Event], ...], _Counter]] = [
        (GenerationRecorded, _generation),
        (GenerationFailed, _failed),
        (DreamSuppressed, _suppressed),
        (DreamStaged, _staged),
        (ReplayBatch, _replayed),
        ((DreamHypothesis, StrategyHypothesis), _heuristic),
        (DreamCounterfactual, _counterfactual),
        (DreamInsight, _insight),
        (EpisodeDepotentiated, _depotentiated),
    ]
    steps = [count for base, count in rules if issubclass(cls, base)]
    if len(steps) <= 1:
        return steps[0] if steps else _uncounted

    def every(counts: CycleCounts, event: Any) -> None:
        for count in steps:
            count(counts, event)

    return every


# Per event type is a ``match`` everywhere else (docs/contributing.md). This fold keeps a dict from
# exact type to handler: ``tallied`` reads its keys (the types it takes, beside episodes and dream
# outputs), and it is the inner loop of every golem fold and of the golems projection, where class
# patterns made a fold of a cycle's events 1.6-2x slower per event (a pattern that misses a msgspec
# Struct goes through ``type.__instancecheck__``, about 100 ns on these machines).
_HANDLERS: dict[type[Event], Callable[[GolemState, Event], None]] = {
    GolemCreated: _created,
    ModeChanged: _mode_changed,
    EpisodeRecorded: _episode,
    DreamStart: _dream_start,
    DreamPhase: _dream_phase,
    DreamComplete: _dream_complete,
    DreamEmpty: _dream_empty,
    DreamInterrupted: _dream_interrupted,
}


def fold(golem_id: str, records: Sequence[Recorded]) -> GolemState:
    """The state ``records`` (one golem's, in order) add up to."""
    state = GolemState(golem_id=golem_id)
    for record in records:
        state.apply(record)
    return state
