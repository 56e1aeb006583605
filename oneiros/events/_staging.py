"""Events of the staging buffer's life: what enters it, what the waking world reports, what the
validation sweep and reviewers decide, and what the sinks are told to undo.

They live in side streams, never in a golem's own stream, so a sweep or a reviewer never races a
dream cycle for the golem's next version:

* ``<golem>:feedback`` holds what people and the waking agent say (outcomes, review decisions,
  MEMORY.md rollbacks), appended with optimistic concurrency;
* ``<golem>:staging`` holds the staging process's decisions, written by that one process together
  with its tracking position.

Golem ids cannot contain ``:`` so a side stream never collides with a golem. Every event also names
its ``golem_id`` in the payload. Confidence is in integer percent so that +10 / -5 steps add up
exactly (0.2 + 5 x 0.1 is 0.7000000000000001 in floats, and must promote).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from oneiros.events._content import StagedKind
from oneiros.events._types import DreamPhaseName, Event, event_type

__all__ = [
    "FEEDBACK_STREAM",
    "STAGING_STREAM",
    "ConfidenceChanged",
    "EntryDisplaced",
    "EntryExpired",
    "EntryPromoted",
    "EntryRefuted",
    "EntryReviewed",
    "EntryStaged",
    "Lineage",
    "MemoryRolledBack",
    "OutcomeRecorded",
    "ReviewDecided",
    "ReviewDecision",
    "StagingStatus",
    "ValidationCriterion",
    "Verdict",
    "golem_of_stream",
    "side_stream",
]

FEEDBACK_STREAM = "feedback"
STAGING_STREAM = "staging"

Percent = Annotated[int, msgspec.Meta(ge=0, le=100)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Verdict = Literal["confirms", "contradicts"]
ReviewDecision = Literal["reinforce", "stale", "reject", "promote_candidate", "revoke"]
"""Dense-Mem's four decisions, and ``revoke``: withdraw a promoted entry from memory, with a reason."""
# Dense-Mem's five statuses, Bardo's "refuted", the two ways the buffer itself lets go, and a
# promotion withdrawn by review.
StagingStatus = Literal[
    "proposed", "reinforced", "stale", "rejected", "promoted", "refuted", "displaced", "expired", "revoked"
]


def side_stream(golem_id: str, topic: str) -> str:
    """``"g1:staging"``: the side stream of ``golem_id`` for ``topic``."""
    return f"{golem_id}:{topic}"


def golem_of_stream(stream_id: str) -> str:
    """The golem a stream belongs to (itself for a golem's own stream)."""
    return stream_id.partition(":")[0]


class ValidationCriterion(msgspec.Struct, frozen=True, kw_only=True):
    """When a waking outcome bears on a staged entry: every term in ``all_of`` appears among the
    outcome's tags or words, and the regime matches when one is named (Bardo,
    ``validationCriterion``)."""

    all_of: tuple[str, ...] = ()
    regime: str | None = None
    description: str = ""


class Lineage(msgspec.Struct, frozen=True, kw_only=True):
    """Where a staged entry came from."""

    cycle_id: str
    phase: DreamPhaseName | None = None
    source_event_id: str = ""
    source_position: int = 0
    source_episode_ticks: tuple[int, ...] = ()
    prompt: str = ""
    model: str = ""
    call_key: str = ""
    """The generator call the entry's text came from (``GenerationRecorded.call_key``); "" when no
    call made it, or in a v1 record."""
    request_hash: str = ""
    """That call's ``GenerationRecorded.request_hash``."""


@event_type("OutcomeRecorded")
class OutcomeRecorded(Event, frozen=True, kw_only=True):
    """A waking outcome: what happened at ``tick``, and whether it bears out or contradicts.

    ``entry_id`` names one staged entry; without it the outcome is matched against every active
    entry's criterion."""

    golem_id: NonEmpty
    tick: int
    verdict: Verdict
    summary: str = ""
    tags: tuple[str, ...] = ()
    regime: str | None = None
    entry_id: str | None = None


@event_type("ReviewDecided")
class ReviewDecided(Event, frozen=True, kw_only=True):
    """A person's or assistant's decision on a staged entry (Dense-Mem feedback; ``revoke``
    withdraws a promoted one)."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    decision: ReviewDecision
    who: NonEmpty
    why: NonEmpty


@event_type("MemoryRolledBack")
class MemoryRolledBack(Event, frozen=True, kw_only=True):
    """Restore MEMORY.md to an earlier version; the restored text becomes a new version."""

    golem_id: NonEmpty
    to_version: Annotated[int, msgspec.Meta(ge=1)]
    who: NonEmpty
    why: str = ""


@event_type("EntryStaged", version=2)
class EntryStaged(Event, frozen=True, kw_only=True):
    """A dream output entered the staging buffer (the staging process's acceptance of a
    ``DreamStaged`` output, with its criterion made matchable and its lineage resolved).

    v2's lineage names the generator call exactly (``call_key``, ``request_hash``)."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    kind: StagedKind
    text: NonEmpty
    confidence_pct: Percent
    criterion: ValidationCriterion
    lineage: Lineage
    tick: int
    """The golem's waking tick when the entry was staged; expiry counts from here."""


@event_type("ConfidenceChanged")
class ConfidenceChanged(Event, frozen=True, kw_only=True):
    """The validation sweep moved an entry's confidence on a matching outcome."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    before_pct: Percent
    after_pct: Percent
    verdict: Verdict
    outcome_position: int
    relevance: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None = None
    """How far the outcome bore on the entry (0-1) when the sweep moved it by relevance; None for an
    outcome that named the entry, and in steps recorded before relevance."""


@event_type("EntryPromoted")
class EntryPromoted(Event, frozen=True, kw_only=True):
    """An entry became active knowledge: by the sweep at the promotion threshold, by recall evidence,
    or by review."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    confidence_pct: Percent
    by: Literal["sweep", "review", "recall"]
    """``recall``: the recall-driven policy (OpenClaw's deep phase), since the ``openclaw`` preset."""
    reason: str = ""


@event_type("EntryRefuted")
class EntryRefuted(Event, frozen=True, kw_only=True):
    """An entry's confidence fell below the refutation threshold."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    confidence_pct: Percent


@event_type("EntryDisplaced")
class EntryDisplaced(Event, frozen=True, kw_only=True):
    """The buffer was full; the lowest-utility entry made room for a new one."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    by_entry_id: NonEmpty
    utility_pct: int


@event_type("EntryExpired")
class EntryExpired(Event, frozen=True, kw_only=True):
    """An entry stayed unresolved for the configured number of ticks."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    tick: int


@event_type("EntryReviewed")
class EntryReviewed(Event, frozen=True, kw_only=True):
    """The staging process applied a review decision: the entry's status is now ``status``."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    decision: ReviewDecision
    status: StagingStatus
    who: str
    why: str
    review_position: int
