"""What the scheduler needs to know about one golem, as a fold of its events.

Like :class:`~oneiros.GolemState` it is only ever moved by ``apply``, the same way live and in
replay. It keeps running sums rather than lists so one scheduler evaluation stays cheap however
long the golem has lived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from oneiros.events._micro import MicroConsolidated
from oneiros.events._schedule import (
    ActivityRecorded,
    BehavioralPhaseChanged,
    DreamDecided,
    DreamDirected,
    FatigueWarned,
    MessageHeld,
    MessagesReleased,
    SleepRequested,
)
from oneiros.events._types import (
    BehavioralPhase,
    DreamComplete,
    DreamInterrupted,
    DreamStart,
    DreamTrigger,
    EpisodeRecorded,
    Event,
    GolemCreated,
    Mode,
    ModeChanged,
    registered_events,
)
from oneiros.store._store import Recorded, Tally

__all__ = ["RECENT_STARTS", "ScheduleState", "fold_schedule"]

RECENT_STARTS = 32
"""Cycle starts kept for the daily and per-window caps: far above any cap the documents set."""


class ScheduleState(msgspec.Struct, kw_only=True):
    golem_id: str
    mode: Mode | None = None
    behavioral_phase: BehavioralPhase = "stable"
    created_at: datetime | None = None
    last_activity: datetime | None = None
    episodes: int = 0
    # Since the last dream started: the raw material of Bardo's pressures.
    unreplayed: int = 0
    surprise_sum: float = 0.0
    arousal_sum: float = 0.0
    losses: int = 0
    prediction_error_sum: float = 0.0
    actions: int = 0
    """OpenSeed fatigue: actions since the last cycle ended."""
    fatigue_warned: bool = False
    cycles_started: int = 0
    cycle_id: str | None = None
    last_dream_start: datetime | None = None
    last_dream_end: datetime | None = None
    recent_starts: tuple[tuple[datetime, DreamTrigger], ...] = ()
    held: tuple[tuple[str, str], ...] = ()
    """(id, text) of messages held while dreaming and not yet released, in arrival order."""
    directive: str | None = None
    """A pending owner "dream now", with its reason."""
    sleep_request: float | None = None
    carried_urgency: float = 0.0
    micro_urgency: float = 0.0
    """What Bardo's micro-consolidation fiber added to urgency since the last dream started."""
    last_decision: tuple[bool, str | None, tuple[str, ...]] | None = None
    version: int = 0
    position: int = 0

    def apply(self, record: Recorded) -> None:
        handler = _HANDLERS.get(type(record.event))
        if handler is not None:
            handler(self, record.event, record.meta.time)
        self.version = record.version
        self.position = record.position

    @staticmethod
    def tallied() -> tuple[type[Event], ...]:
        """The event types that only move the version: :meth:`apply_tally` takes them as counts."""
        return tuple(cls for cls in registered_events().values() if cls not in _HANDLERS)

    def apply_tally(self, tally: Tally) -> None:
        """What :meth:`apply` of each of ``tally.count`` events of one :meth:`tallied` type does.
        A tally of a stretch comes after the stretch's other events, so positions only move forward."""
        self.version = max(self.version, tally.version)
        self.position = max(self.position, tally.position)

    # Derived pressures (Bardo): means over episodes since the last dream.

    def mean_surprise(self) -> float:
        return self.surprise_sum / self.unreplayed if self.unreplayed else 0.0

    def mean_arousal(self) -> float:
        return self.arousal_sum / self.unreplayed if self.unreplayed else 0.0

    def loss_rate(self) -> float:
        return self.losses / self.unreplayed if self.unreplayed else 0.0

    def prediction_accuracy(self) -> float:
        return max(0.0, 1.0 - self.prediction_error_sum / self.unreplayed) if self.unreplayed else 1.0


def _created(s: ScheduleState, e: Event, t: datetime) -> None:
    assert isinstance(e, GolemCreated)
    s.mode = "Waking"
    s.behavioral_phase = e.behavioral_phase
    s.created_at = t


def _mode(s: ScheduleState, e: Event, t: datetime) -> None:
    assert isinstance(e, ModeChanged)
    s.mode = e.to_mode
    if e.from_mode == "Dreaming":
        s.last_dream_end = t
        s.cycle_id = None


def _episode(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, EpisodeRecorded)
    ep = e.episode
    s.episodes += 1
    s.unreplayed += 1
    s.surprise_sum += min(1.0, abs(ep.outcome.surprise))
    s.arousal_sum += ep.arousal
    s.losses += ep.outcome.pnl < 0
    s.prediction_error_sum += min(1.0, abs(ep.prediction_error))


def _activity(s: ScheduleState, e: Event, t: datetime) -> None:
    assert isinstance(e, ActivityRecorded)
    s.last_activity = t
    if e.kind == "action":
        s.actions += 1


def _start(s: ScheduleState, e: Event, t: datetime) -> None:
    assert isinstance(e, DreamStart)
    s.cycles_started += 1
    s.cycle_id = e.cycle_id
    s.last_dream_start = t
    s.recent_starts = (*s.recent_starts[-(RECENT_STARTS - 1) :], (t, e.trigger))
    s.unreplayed = 0
    s.surprise_sum = s.arousal_sum = s.prediction_error_sum = 0.0
    s.losses = 0
    s.micro_urgency = 0.0
    s.directive = None
    s.sleep_request = None
    s.carried_urgency = 0.0


def _cycle_end(s: ScheduleState, _e: Event, _t: datetime) -> None:
    # OpenSeed: "The counter resets after consolidation"; an interrupted cycle ends the
    # same way, or a woken golem would be forced straight back to sleep.
    s.actions = 0
    s.fatigue_warned = False


def _held(s: ScheduleState, e: Event, t: datetime) -> None:
    assert isinstance(e, MessageHeld)
    s.held = (*s.held, (e.message_id, e.text))
    s.last_activity = t


def _released(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, MessagesReleased)
    gone = set(e.message_ids)
    s.held = tuple(m for m in s.held if m[0] not in gone)


def _directed(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, DreamDirected)
    s.directive = e.reason or "dream now"


def _sleep(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, SleepRequested)
    s.sleep_request = e.seconds


def _warned(s: ScheduleState, _e: Event, _t: datetime) -> None:
    s.fatigue_warned = True


def _phase(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, BehavioralPhaseChanged)
    s.behavioral_phase = e.to_phase


def _decided(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, DreamDecided)
    s.carried_urgency = e.carried_urgency
    s.last_decision = (e.dream, e.trigger, e.blocked_by)
    if not e.dream:
        s.sleep_request = None  # a request the decision did not act on was only a nap


def _micro(s: ScheduleState, e: Event, _t: datetime) -> None:
    assert isinstance(e, MicroConsolidated)
    s.micro_urgency = min(1.0, s.micro_urgency + e.urgency_delta)


# Like the golem fold's (oneiros/fsm/_golem.py): a dict from exact type to handler rather than a
# match, since ``tallied`` reads its keys and every event of a stream passes through it.
_HANDLERS: dict[type[Event], Callable[[ScheduleState, Event, datetime], None]] = {
    GolemCreated: _created,
    ModeChanged: _mode,
    EpisodeRecorded: _episode,
    ActivityRecorded: _activity,
    DreamStart: _start,
    DreamComplete: _cycle_end,
    DreamInterrupted: _cycle_end,
    MessageHeld: _held,
    MessagesReleased: _released,
    DreamDirected: _directed,
    SleepRequested: _sleep,
    FatigueWarned: _warned,
    BehavioralPhaseChanged: _phase,
    DreamDecided: _decided,
    MicroConsolidated: _micro,
}


def fold_schedule(golem_id: str, records: Sequence[Recorded]) -> ScheduleState:
    """The schedule state ``records`` (one golem's, in order) add up to."""
    state = ScheduleState(golem_id=golem_id)
    for record in records:
        state.apply(record)
    return state
