"""The health process: a golem's dreaming health, judged after each cycle and each validation
decision, recorded as alarms raised and cleared (``HealthAlarmRaised`` / ``HealthAlarmCleared``).

It follows the log like the staging process and writes its alarms to each golem's
``<golem>:health`` side stream together with its tracking position, so an alarm is raised exactly
once whatever process runs it and however often it crashes. What it judges:

* at the end of a cycle (``DreamComplete`` or ``DreamInterrupted``): cycles in a row that staged
  nothing, cycles in a row without a promotion, dollars spent since the last promotion, and whether
  the cycle had a budget overrun;
* at a confidence move of the validation sweep: the share of confirming outcomes among the latest
  moves;
* at a promotion: the promotion clears ``no_promotion`` and ``cost_without_yield``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from oneiros._text import counted
from oneiros.events._content import BudgetOverrun, DreamStaged, GenerationFailed
from oneiros.events._health import ALARM_KINDS, HEALTH_STREAM, AlarmKind, HealthAlarmCleared, HealthAlarmRaised
from oneiros.events._staging import ConfidenceChanged, EntryPromoted, side_stream
from oneiros.events._types import DreamComplete, DreamInterrupted, DreamStart, Event, GenerationRecorded
from oneiros.projections._runner import RunnerSettings
from oneiros.settings._health import HealthSettings
from oneiros.store._store import EventStore, Recorded, record_row
from oneiros.validation._process import DecidingProcess

__all__ = ["HEALTH_EVENTS", "GolemHealth", "HealthProcess", "HealthReport", "health_metrics", "health_report"]

PROCESS_NAME = "oneiros.health"
HEALTH_EVENTS: tuple[type[Event], ...] = (HealthAlarmRaised, HealthAlarmCleared)


@dataclass
class GolemHealth:
    """What the health process knows of one golem's dreaming."""

    golem_id: str
    version: int = 0
    """The version of the golem's health stream."""
    active: dict[AlarmKind, HealthAlarmRaised] = field(default_factory=dict)
    """The alarms raised and not yet cleared."""
    cycle_id: str = ""
    """The cycle running or last ended."""
    cycles: int = 0
    """Cycles ended."""
    staged: int = 0
    """Entries the current (or last ended) cycle staged."""
    cycle_usd: float = 0.0
    overruns: int = 0
    """Budget overruns in the current (or last ended) cycle."""
    empty_run: int = 0
    """Cycles in a row, up to the last ended, that staged nothing."""
    cycles_since_promotion: int = 0
    usd_since_promotion: float = 0.0
    promotions: int = 0
    moves: deque[bool] = field(default_factory=deque)
    """The latest confidence moves, True for a confirmation (at most the hit-rate window)."""

    def hit_rate_pct(self) -> float | None:
        return 100 * sum(self.moves) / len(self.moves) if self.moves else None


@dataclass(frozen=True)
class Reading:
    """One alarm's reading: bad once ``value`` reached ``threshold`` (None: the alarm is off),
    unless ``bad`` says otherwise."""

    alarm: AlarmKind
    cycle_id: str
    value: float
    threshold: float | None
    detail: str
    bad: bool | None = None

    def is_bad(self) -> bool:
        if self.bad is not None:
            return self.bad
        return self.threshold is not None and self.value >= self.threshold


class HealthProcess(DecidingProcess):
    """Raises and clears the dreaming-health alarms. Run one per store beside the staging process."""

    name = PROCESS_NAME
    topic = HEALTH_STREAM
    decision_types = HEALTH_EVENTS

    def __init__(
        self, store: EventStore, settings: HealthSettings | None = None, *, runner: RunnerSettings | None = None
    ) -> None:
        super().__init__(store, runner)
        self.settings = settings or HealthSettings()
        self.golems: dict[str, GolemHealth] = {}

    def input_types(self) -> tuple[type[Event], ...]:
        return (
            DreamStart,
            DreamStaged,
            GenerationRecorded,
            GenerationFailed,
            BudgetOverrun,
            DreamComplete,
            DreamInterrupted,
            ConfidenceChanged,
            EntryPromoted,
        )

    def golem(self, golem_id: str) -> GolemHealth:
        health = self.golems.get(golem_id)
        if health is None:
            health = self.golems[golem_id] = GolemHealth(golem_id, moves=deque(maxlen=self.settings.hit_rate_window))
        return health

    # -- memory -----------------------------------------------------------------------------------

    def forget(self) -> None:
        # No snapshots (memory_type None): its inputs are a cycle's few events, not the episodes.
        self.golems = {}

    def next_version(self, golem_id: str) -> int:
        health = self.golem(golem_id)
        health.version += 1
        return health.version

    def remember(self, golem_id: str, record: Recorded) -> None:
        health = self.golem(golem_id)
        _move_alarms(health.active, record.event)
        health.version = max(health.version, record.version)

    def observe(self, record: Recorded) -> None:
        event = record.event
        health = self.golem(getattr(event, "golem_id", None) or record.meta.golem_id)
        match event:
            case GenerationRecorded(cost_usd=usd) | GenerationFailed(cost_usd=usd):
                health.cycle_usd += usd
            case DreamStaged():
                health.staged += 1
            case DreamStart(cycle_id=cycle_id):
                health.cycle_id, health.staged, health.cycle_usd, health.overruns = cycle_id, 0, 0.0, 0
            case BudgetOverrun():
                health.overruns += 1
            case DreamComplete() | DreamInterrupted():
                health.cycles += 1
                health.empty_run = 0 if health.staged else health.empty_run + 1
                health.cycles_since_promotion += 1
                health.usd_since_promotion += health.cycle_usd
            case ConfidenceChanged(verdict=verdict):
                health.moves.append(verdict == "confirms")
            case EntryPromoted():
                health.promotions += 1
                health.cycles_since_promotion, health.usd_since_promotion = 0, 0.0

    # -- judging ----------------------------------------------------------------------------------

    def decide(self, record: Recorded) -> list[Event]:
        event = record.event
        health = self.golem(getattr(event, "golem_id", None) or record.meta.golem_id)
        match event:
            case DreamComplete() | DreamInterrupted():
                return self._cycle_ended(health)
            case ConfidenceChanged(cycle_id=cycle_id):
                return self._hit_rate(health, cycle_id)
            case EntryPromoted(entry_id=entry_id, by=by, cycle_id=cycle_id):
                why = f"entry {entry_id} promoted by {by}"
                return [
                    *self._judge(health, Reading("no_promotion", cycle_id, 0, None, why)),
                    *self._judge(health, Reading("cost_without_yield", cycle_id, 0.0, None, why)),
                ]
        return []

    def _cycle_ended(self, health: GolemHealth) -> list[Event]:
        s, h, cycle = self.settings, health, health.cycle_id
        usd = round(h.usd_since_promotion, 6)
        empty = (
            f"{counted(h.empty_run, 'cycle')} in a row staged nothing"
            if h.empty_run
            else f"cycle {cycle} staged {counted(h.staged, 'entry')}"
        )
        overrun = (
            f"{counted(h.overruns, 'response')} in cycle {cycle} claimed more than reserved"
            if h.overruns
            else f"cycle {cycle} ran without an overrun"
        )
        readings = (
            Reading("empty_cycles", cycle, h.empty_run, s.empty_cycles, empty),
            Reading(
                "no_promotion",
                cycle,
                h.cycles_since_promotion,
                s.no_promotion_cycles,
                f"{counted(h.cycles_since_promotion, 'cycle')} in a row without a promotion",
            ),
            Reading(
                "cost_without_yield",
                cycle,
                usd,
                s.cost_without_yield_usd,
                f"${usd:.6f} spent on generations since the last promotion",
            ),
            Reading("budget_overrun", cycle, h.overruns, 1 if s.budget_overrun else None, overrun),
        )
        return [event for reading in readings for event in self._judge(h, reading)]

    def _hit_rate(self, health: GolemHealth, cycle_id: str) -> list[Event]:
        floor = self.settings.hit_rate_floor_pct
        rate = health.hit_rate_pct()
        if rate is None or len(health.moves) < self.settings.hit_rate_window:
            return []
        confirms, moves = sum(health.moves), len(health.moves)
        detail = f"{confirms} of the last {moves} confidence moves confirmed"
        # Raised strictly below the floor; the judge's "at or past" is for the other alarms.
        bad = floor is not None and rate < floor
        return self._judge(health, Reading("hit_rate", cycle_id, round(rate, 2), floor, detail, bad=bad))

    def _judge(self, health: GolemHealth, reading: Reading) -> list[Event]:
        """Raise the reading's alarm when it is bad and not raised; clear it when it is raised
        and no longer bad."""
        alarm, cycle_id, value, threshold, detail = (
            reading.alarm,
            reading.cycle_id,
            reading.value,
            reading.threshold,
            reading.detail,
        )
        bad = reading.is_bad()
        raised = alarm in health.active
        if bad and not raised:
            assert threshold is not None
            return [
                HealthAlarmRaised(
                    golem_id=health.golem_id,
                    alarm=alarm,
                    cycle_id=cycle_id,
                    value=float(value),
                    threshold=float(threshold),
                    detail=detail,
                )
            ]
        if raised and not bad:
            return [
                HealthAlarmCleared(
                    golem_id=health.golem_id, alarm=alarm, cycle_id=cycle_id, value=float(value), detail=detail
                )
            ]
        return []


class HealthReport(msgspec.Struct, frozen=True, kw_only=True):
    """A golem's dreaming health as its health stream records it: the alarms raised now, and every
    alarm raised and cleared, oldest first."""

    golem_id: str
    alarms: tuple[HealthAlarmRaised, ...]
    history: tuple[dict[str, Any], ...]


def _move_alarms(active: dict[AlarmKind, HealthAlarmRaised], event: Event) -> None:
    """The alarms active after one event of a health stream."""
    match event:
        case HealthAlarmRaised(alarm=alarm):
            active[alarm] = event
        case HealthAlarmCleared(alarm=alarm):
            active.pop(alarm, None)


def health_report(store: EventStore, golem_id: str) -> HealthReport:
    """Read ``golem_id``'s health stream (one short side stream, not the log)."""
    active: dict[AlarmKind, HealthAlarmRaised] = {}
    history: list[dict[str, Any]] = []
    for record in store.read_stream(side_stream(golem_id, HEALTH_STREAM)):
        _move_alarms(active, record.event)
        history.append(record_row(record))
    alarms = tuple(active[k] for k in ALARM_KINDS if k in active)
    return HealthReport(golem_id=golem_id, alarms=alarms, history=tuple(history))


def health_metrics(health: GolemHealth) -> dict[str, Any]:
    """What the health process holds of a golem, as the alarms judge it."""
    rate = health.hit_rate_pct()
    return {
        "cycles": health.cycles,
        "promotions": health.promotions,
        "empty_cycles_in_a_row": health.empty_run,
        "cycles_since_promotion": health.cycles_since_promotion,
        "usd_since_promotion": round(health.usd_since_promotion, 6),
        "hit_rate_pct": None if rate is None else round(rate, 2),
        "confidence_moves": len(health.moves),
    }
