"""Facts a dream distilled from the episodes: OpenSeed's observations, threads and summaries, the
profile (core memory): the user's standing instructions, preferences and facts about themselves, and
timelines: per subject the user keeps coming back to, what they brought up about it in order.

An observation says what happened in plain words, attributed to whoever did it, with an absolute
date where the episode said "yesterday" or "last week"; a thread joins what one subject did across
episodes; a summary covers a stretch of them. Each names the episodes it stands for, so recall can
rank it beside them and a reader can go back to the turns. Like every dream output it is a
hypothesis about the record, not a fact the golem acts on, until validated.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from oneiros.events._types import DreamOutput, event_type

__all__ = ["DreamObservation", "ObservationKind", "Priority"]

ObservationKind = Literal["observation", "thread", "summary", "profile", "timeline", "contradiction"]
Priority = Literal["RED", "YLW", "GRN"]
"""OpenSeed's levels: RED for what matters most, YLW for what matters, GRN for the rest."""
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=16_384)]
Subject = Annotated[str, msgspec.Meta(max_length=128)]


@event_type("DreamObservation")
class DreamObservation(DreamOutput, frozen=True, kw_only=True):
    """One fact, thread or summary drawn from the episodes in ``source_episode_ticks``."""

    kind: ObservationKind = "observation"
    text: Text
    subject: Subject | None = None
    """Whom it is about (a speaker's name, a service); None when the episodes name no one."""
    about: datetime | None = None
    """When what it says happened, where that differs from when it was said."""
    source_episode_ticks: tuple[int, ...] = ()
    priority: Priority = "GRN"
    """How much it matters, as the dream judged it from its episodes (added without a new version:
    an observation recorded before has the lowest level)."""
    key: Subject | None = None
    """A profile entry's what-it-is-about ("instruction:use tabs", "identity"), a fact's thing that
    took a new value, or a timeline's subject ("timeline:budget tracker"): a later output of the
    golem with the same key supersedes it (the earlier stays in the log, with when it held). None
    for the other kinds (added without a new version: no earlier event is a profile entry). The
    kind ``timeline`` was added without a new version too: no earlier event is one."""
