"""Events of Bardo's micro-consolidation fiber: what a waking pass changed, and nothing else.

The fiber updates insight metadata (strength) and episode tags (dream priority) and adds to dream
urgency; it never stages, reviews or promotes anything, so none of these is a staging or playbook
event. All three are host facts, legal while waking.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from oneiros.events._types import Event, event_type

__all__ = ["EpisodePrioritized", "InsightStrengthened", "MicroConsolidated"]

_Unit = Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)]
_NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]


@event_type("InsightStrengthened")
class InsightStrengthened(Event, frozen=True, kw_only=True):
    """A new episode matched a staged insight's pattern: the insight's strength grew."""

    entry_id: str
    episode_tick: int
    similarity: _Unit
    delta: _NonNegative
    strength: _NonNegative
    """The insight's strength after this event."""


@event_type("EpisodePrioritized")
class EpisodePrioritized(Event, frozen=True, kw_only=True):
    """A new episode looks like an insight's pattern but its outcome went the other way: it is
    tagged for the next full dream cycle."""

    episode_tick: int
    entry_id: str
    similarity: _Unit
    priority: Literal["high"] = "high"
    reason: str = ""


@event_type("MicroConsolidated")
class MicroConsolidated(Event, frozen=True, kw_only=True):
    """One pass of the fiber that found unresolved patterns, and the urgency it added."""

    episode_ticks: tuple[int, ...]
    insights: int
    strengthened: int
    prioritized: int
    unresolved: int
    """Episodes tagged for the next dream and not yet dreamt about."""
    urgency_delta: _NonNegative
