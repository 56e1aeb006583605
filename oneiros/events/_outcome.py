"""How a cycle ended when it ended with nothing to show for it."""

from __future__ import annotations

from typing import Literal

from oneiros.events._types import Count, CycleEvent, NonEmpty, event_type

__all__ = ["DreamEmpty", "EmptyReason"]

EmptyReason = Literal["all_calls_failed", "nothing_staged"]
"""``all_calls_failed``: the cycle called its generator and every call failed (no key, a server
down, every body refused); ``nothing_staged``: no output of the cycle entered the staging buffer."""


@event_type("DreamEmpty")
class DreamEmpty(CycleEvent, frozen=True, kw_only=True):
    """A cycle that produced nothing: never a success. Appended with the append that wakes the
    golem, before its ModeChanged; the cycle's DreamComplete (if integration closed) stays, and
    readers that report an outcome (``CycleResult``, the CLI, the server, the journal) say it ended
    empty, and why."""

    reason: EmptyReason
    detail: NonEmpty
    """One line a person reads: what failed, how often, the last failure's reason."""
    generator_calls: Count = 0
    failed_calls: Count = 0
    staged: Count = 0
