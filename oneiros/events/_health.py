"""A golem's dreaming health: alarms raised and cleared by the health process
(:mod:`oneiros.validation`) after each cycle and each validation decision.

They live in the ``<golem>:health`` side stream, written by that one process together with its
tracking position, so an alarm is raised once however often the process restarts. An alarm stays
raised until a later cycle or decision clears it; at most one of each kind is raised at a time.
"""

from __future__ import annotations

from typing import Literal

from oneiros.events._types import Event, NonEmpty, event_type

__all__ = ["ALARM_KINDS", "HEALTH_STREAM", "AlarmKind", "HealthAlarmCleared", "HealthAlarmRaised"]

HEALTH_STREAM = "health"

AlarmKind = Literal["empty_cycles", "no_promotion", "hit_rate", "cost_without_yield", "budget_overrun"]
"""``empty_cycles``: cycles in a row that staged nothing; ``no_promotion``: cycles in a row with no
entry promoted; ``hit_rate``: the share of confirming outcomes among the latest confidence moves
fell below its floor; ``cost_without_yield``: dollars spent since the last promotion;
``budget_overrun``: the cycle just ended had a response claim more than it reserved."""

ALARM_KINDS: tuple[AlarmKind, ...] = (
    "empty_cycles",
    "no_promotion",
    "hit_rate",
    "cost_without_yield",
    "budget_overrun",
)


@event_type("HealthAlarmRaised")
class HealthAlarmRaised(Event, frozen=True, kw_only=True):
    """``alarm`` went off for ``golem_id``: ``value`` reached ``threshold`` at the end of cycle
    ``cycle_id`` (or at a validation decision on one of its entries)."""

    golem_id: NonEmpty
    alarm: AlarmKind
    cycle_id: str
    value: float
    threshold: float
    detail: str = ""


@event_type("HealthAlarmCleared")
class HealthAlarmCleared(Event, frozen=True, kw_only=True):
    """``alarm`` is no longer true for ``golem_id``: ``value`` is back on the healthy side."""

    golem_id: NonEmpty
    alarm: AlarmKind
    cycle_id: str
    value: float
    detail: str = ""
