"""Events of the scheduler and the heartbeat daemon: what the golem did while awake, what it asked
for, what the scheduler decided and why, and the messages held while it dreamt.

None of these is a dream output: they are legal while waking (and, for held messages, while
dreaming), and the golem fold leaves them to the schedule fold (``oneiros.fsm.ScheduleState``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from oneiros.events._types import BehavioralPhase, DreamTrigger, Event, event_type

__all__ = [
    "ActivityKind",
    "ActivityRecorded",
    "BehavioralPhaseChanged",
    "DreamDecided",
    "DreamDirected",
    "FatigueWarned",
    "MessageHeld",
    "MessagesReleased",
    "SleepRequested",
]

ActivityKind = Literal["message", "action", "turn"]
_NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]


@event_type("ActivityRecorded")
class ActivityRecorded(Event, frozen=True, kw_only=True):
    """The golem was busy: a message in, a tool call (an OpenSeed "action"), or a turn.

    Silence (Bumblebee), idle time (Ethos) and fatigue (OpenSeed) are all measured from these."""

    kind: ActivityKind
    detail: str = ""


@event_type("MessageHeld")
class MessageHeld(Event, frozen=True, kw_only=True):
    """A message that arrived while the golem dreamt, held until it wakes (Bardo, Ethos)."""

    message_id: str
    text: str
    received_at: datetime | None = None
    """When it arrived; it is recorded at the cycle's next safe point (see ``oneiros.daemon``)."""


@event_type("MessagesReleased")
class MessagesReleased(Event, frozen=True, kw_only=True):
    """The held messages, handed over on waking, in arrival order."""

    message_ids: tuple[str, ...]


@event_type("DreamDirected")
class DreamDirected(Event, frozen=True, kw_only=True):
    """The owner said "dream now" (Bardo, trigger 3): pending until a cycle starts."""

    reason: str = ""


@event_type("SleepRequested")
class SleepRequested(Event, frozen=True, kw_only=True):
    """The golem asked to sleep for ``seconds`` (OpenSeed, ``set_sleep``); the next decision
    says whether it consolidates or only naps."""

    seconds: _NonNegative


@event_type("FatigueWarned")
class FatigueWarned(Event, frozen=True, kw_only=True):
    """The action counter reached the warning level (OpenSeed, FATIGUE_WARNING)."""

    actions: int
    message: str


@event_type("BehavioralPhaseChanged")
class BehavioralPhaseChanged(Event, frozen=True, kw_only=True):
    """The golem's survival phase moved (Bardo); thresholds, weights and preconditions follow it."""

    from_phase: BehavioralPhase
    to_phase: BehavioralPhase


@event_type("DreamDecided")
class DreamDecided(Event, frozen=True, kw_only=True):
    """A scheduler decision that changed something: to dream, a different blocking gate, a consumed
    request, or the urgency carried over while blocked (Bardo: it decays, it does not reset).

    ``reasons`` name each gate and trigger with the values compared, so the log shows why."""

    dream: bool
    trigger: DreamTrigger | None = None
    reasons: tuple[str, ...] = ()
    blocked_by: tuple[str, ...] = ()
    """Names of the gates and preconditions that failed."""
    urgency: float = 0.0
    carried_urgency: float = 0.0
    deep: bool = False
    """OpenSeed: every 10th dream is a deep sleep."""
    intensity: str = ""
