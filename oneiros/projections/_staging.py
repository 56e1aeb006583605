"""The staging buffer: what each dream output type stages as, the entry record, and its read model.

Which outputs are staged, at what confidence and with what validation criterion is a registry
(:func:`register_staged_output`), so a new dream output type joins the buffer with one call and no
change here. The dream cycle's integration phase classifies every output (hypotheses, insights,
threats, hypnagogic predictions...) into one ``DreamStaged`` event with its initial confidence, so
that is the one type registered by default. The entry record is a fold of the staging process's own events (see
``_validation.py``); the same fold feeds that process's memory and the ``staging`` projection's
rows, which is why the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import msgspec

from oneiros._text import content_words, keywords, rank
from oneiros.engines import utility
from oneiros.events import (
    ConfidenceChanged,
    DreamStaged,
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    Episode,
    Event,
    Lineage,
    Recorded,
    StagedKind,
    StagingStatus,
    ValidationCriterion,
)
from oneiros.projections._runner import Rows
from oneiros.settings import DisplaceBy, StagingSettings

__all__ = [
    "ACTIVE",
    "STAGING_EVENTS",
    "StagedEntry",
    "StagedOutput",
    "StagingProjection",
    "StagingSettings",
    "apply_staging_event",
    "displacement_order",
    "entry_utility",
    "register_staged_output",
    "staged_outputs",
]

ACTIVE: Final[frozenset[StagingStatus]] = frozenset({"proposed", "reinforced"})
"""Statuses still awaiting validation: they count against the cap and are matched by outcomes."""


# (event, the golem's episodes by tick) -> criterion
CriterionFn = Callable[[Event, Mapping[int, Episode]], ValidationCriterion]


class StagedOutput(msgspec.Struct, frozen=True, kw_only=True):
    """How one dream output type enters the buffer. ``entry_id`` returns None to have the staging
    process derive one from the output's event id."""

    kind: Callable[[Event], StagedKind]
    confidence_pct: Callable[[Event, StagingSettings], int]
    text: Callable[[Event], str]
    criterion: CriterionFn
    source_ticks: Callable[[Event], tuple[int, ...]] = lambda _e: ()
    entry_id: Callable[[Event], str | None] = lambda _e: None


_STAGED: dict[type[Event], StagedOutput] = {}


def register_staged_output(cls: type[Event], spec: StagedOutput) -> None:
    """Stage every ``cls`` dream output as ``spec`` says."""
    _STAGED[cls] = spec


def staged_outputs() -> dict[type[Event], StagedOutput]:
    return dict(_STAGED)


def entry_utility(entry: StagedEntry, episodes: Mapping[int, Episode]) -> float:
    """Bardo 001_*'s utility score of a staged entry: the mean replay utility (gain x need) of the
    episodes it was drawn from, 0 for an entry drawn from none."""
    sources = [episodes[t] for t in entry.lineage.source_episode_ticks if t in episodes]
    return sum(utility(e, 1.0) for e in sources) / len(sources) if sources else 0.0


def displacement_order(entry: StagedEntry, episodes: Mapping[int, Episode], by: DisplaceBy) -> tuple[float, ...]:
    """Sort key of the entry that makes room first: lowest utility (or confidence), then lowest
    confidence, then the longest staged."""
    first = entry_utility(entry, episodes) if by == "utility" else float(entry.confidence_pct)
    return (first, float(entry.confidence_pct), float(entry.lineage.source_position))


def terms(text: str) -> set[str]:
    """The lower-case words an outcome or criterion is matched on."""
    return set(content_words(text))


def _keywords(text: str, limit: int = 2) -> tuple[str, ...]:
    return tuple(sorted(keywords(text, limit)))


def episode_criterion(
    ticks: tuple[int, ...], text: str, description: str, episodes: Mapping[int, Episode]
) -> ValidationCriterion:
    """What a live outcome must show to bear on an output drawn from episodes ``ticks``: their
    most shared tags (or, without tags, the text's keywords), in their regime when they share one."""
    sources = [episodes[t] for t in ticks if t in episodes]
    tags = rank((tag.lower() for e in sources for tag in e.tags), 3)
    regimes = {e.regime for e in sources} - {"unknown"}
    return ValidationCriterion(
        all_of=tuple(tags) or _keywords(text),
        regime=regimes.pop() if len(regimes) == 1 else None,
        description=description,
    )


def _staged_criterion(event: Event, episodes: Mapping[int, Episode]) -> ValidationCriterion:
    assert isinstance(event, DreamStaged)
    return episode_criterion(event.source_episode_ticks, event.content, event.validation_criterion, episodes)


register_staged_output(
    DreamStaged,
    StagedOutput(
        kind=lambda e: e.kind,  # type: ignore[attr-defined]
        confidence_pct=lambda e, _s: round(e.confidence * 100),  # type: ignore[attr-defined]
        text=lambda e: e.content,  # type: ignore[attr-defined]
        criterion=_staged_criterion,
        source_ticks=lambda e: tuple(e.source_episode_ticks),  # type: ignore[attr-defined]
        entry_id=lambda e: e.entry_id,  # type: ignore[attr-defined]
    ),
)


class ReviewNote(msgspec.Struct, frozen=True, kw_only=True):
    decision: str
    who: str
    why: str
    position: int


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
    if isinstance(event, ConfidenceChanged):
        entry.confidence_pct = event.after_pct
        if event.verdict == "confirms":
            entry.confirmations += 1
        else:
            entry.contradictions += 1
    elif isinstance(event, EntryPromoted):
        entry.status = "promoted"
        entry.resolved_by = event.by
    elif isinstance(event, EntryRefuted):
        entry.status = "refuted"
        entry.resolved_by = "sweep"
    elif isinstance(event, EntryDisplaced):
        entry.status = "displaced"
        entry.resolved_by = f"displaced by {event.by_entry_id}"
    elif isinstance(event, EntryExpired):
        entry.status = "expired"
        entry.resolved_by = f"expired at tick {event.tick}"
    elif isinstance(event, EntryReviewed):
        entry.status = event.status
        entry.reviews.append(
            ReviewNote(decision=event.decision, who=event.who, why=event.why, position=event.review_position)
        )
    return entry


class StagingProjection:
    """Rows ``entry/<entry_id>``: every staged entry with its status, confidence and lineage."""

    name = "staging"
    types: tuple[type[Event], ...] = STAGING_EVENTS

    def apply(self, record: Recorded, rows: Rows) -> None:
        entry_id: str = record.event.entry_id  # type: ignore[attr-defined]
        entry = apply_staging_event(rows.get("entry", entry_id, StagedEntry), record)
        if entry is not None:
            rows.put("entry", entry_id, entry)
