"""The staging buffer as a read model: the entry record, the fold that builds it from the validation
sweep's own events, and the ``staging`` projection.

The same fold feeds the sweep's memory (``oneiros.validation``) and this projection's rows, which is
why the two can never disagree.
"""

from __future__ import annotations

from typing import Final

import msgspec

from oneiros.events._content import StagedKind
from oneiros.events._quarantine import EntryQuarantined
from oneiros.events._staging import (
    ConfidenceChanged,
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    Lineage,
    StagingStatus,
    ValidationCriterion,
)
from oneiros.events._types import Event
from oneiros.projections._runner import Rows
from oneiros.store._store import Recorded

__all__ = ["ACTIVE", "STAGING_EVENTS", "StagedEntry", "StagingProjection", "apply_staging_event"]

ACTIVE: Final[frozenset[StagingStatus]] = frozenset({"proposed", "reinforced"})
"""Statuses still awaiting validation: they count against the cap and are matched by outcomes."""


class ReviewNote(msgspec.Struct, frozen=True, kw_only=True):
    decision: str
    who: str
    why: str
    position: int
    time: str = ""
    """When the staging process applied it (ISO 8601)."""


class StagedEntry(msgspec.Struct, kw_only=True):
    """One entry of the buffer as its events leave it."""

    entry_id: str
    golem_id: str
    kind: StagedKind
    text: str
    status: StagingStatus
    confidence_pct: int
    criterion: ValidationCriterion
    lineage: Lineage
    staged_tick: int
    staged_position: int
    confirmations: int = 0
    contradictions: int = 0
    resolved_by: str = ""
    reviews: list[ReviewNote] = msgspec.field(default_factory=list)
    updated_position: int = 0
    quarantine: EntryQuarantined | None = None
    """Why only a review may promote it (untrusted or instructing sources), or None."""

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def cycle_id(self) -> str:
        return self.lineage.cycle_id


STAGING_EVENTS: Final[tuple[type[Event], ...]] = (
    EntryStaged,
    ConfidenceChanged,
    EntryPromoted,
    EntryRefuted,
    EntryDisplaced,
    EntryExpired,
    EntryReviewed,
    EntryQuarantined,
)


def apply_staging_event(entry: StagedEntry | None, record: Recorded) -> StagedEntry | None:
    """``entry`` after one staging event (a new entry for :class:`EntryStaged`)."""
    event = record.event
    if isinstance(event, EntryStaged):
        return StagedEntry(
            entry_id=event.entry_id,
            golem_id=event.golem_id,
            kind=event.kind,
            text=event.text,
            status="proposed",
            confidence_pct=event.confidence_pct,
            criterion=event.criterion,
            lineage=event.lineage,
            staged_tick=event.tick,
            staged_position=record.position,
            updated_position=record.position,
        )
    if entry is None:
        return None
    entry.updated_position = record.position
    match event:
        case ConfidenceChanged(after_pct=after, verdict=verdict):
            entry.confidence_pct = after
            if verdict == "confirms":
                entry.confirmations += 1
            else:
                entry.contradictions += 1
        case EntryPromoted(by=by):
            entry.status = "promoted"
            entry.resolved_by = by
        case EntryRefuted():
            entry.status = "refuted"
            entry.resolved_by = "sweep"
        case EntryDisplaced(by_entry_id=by):
            entry.status = "displaced"
            entry.resolved_by = f"displaced by {by}"
        case EntryExpired(tick=tick):
            entry.status = "expired"
            entry.resolved_by = f"expired at tick {tick}"
        case EntryQuarantined():
            entry.quarantine = event
        case EntryReviewed(status=status, decision=decision, who=who, why=why, review_position=position):
            entry.status = status
            time = record.meta.time.isoformat()
            entry.reviews.append(ReviewNote(decision=decision, who=who, why=why, position=position, time=time))
    return entry


class StagingProjection:
    """Rows ``entry/<entry_id>``: every staged entry with its status, confidence and lineage."""

    name = "staging"
    types: tuple[type[Event], ...] = STAGING_EVENTS

    def apply(self, record: Recorded, rows: Rows) -> None:
        entry_id: str = record.event.entry_id  # type: ignore[attr-defined]
        if type(record.event) is EntryStaged:
            rows.put("entry", entry_id, apply_staging_event(None, record))  # type: ignore[arg-type]
        else:
            # Changed in place; an event for an entry never staged (None) writes nothing.
            apply_staging_event(rows.edit("entry", entry_id, StagedEntry), record)
