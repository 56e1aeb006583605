"""Why an outcome moved the entries it moved, and why the nearest others stayed where they were.

A read, never a decision: the entries active when the sweep came to the outcome are folded from
the staging stream, their relevance computed as the sweep computed it, and what the sweep decided
because of the outcome read from the log (the relevance it recorded included).
"""

from __future__ import annotations

import itertools

import msgspec

from oneiros.events._recall import RECALL_STREAM
from oneiros.events._staging import (
    STAGING_STREAM,
    ConfidenceChanged,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    OutcomeRecorded,
    side_stream,
)
from oneiros.projections._staging import StagedEntry, apply_staging_event
from oneiros.settings._staging import StagingSettings
from oneiros.store._store import EventStore, Recorded
from oneiros.validation._match import Match, relevance

__all__ = ["ExplainedEntry", "OutcomeExplanation", "explain_outcome", "staged_entries"]


class ExplainedEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One entry the outcome was weighed against."""

    entry_id: str
    kind: str
    text: str
    relevance: float
    shared: tuple[str, ...]
    """The outcome's words the entry has (stems), its criterion's first."""
    missing: tuple[str, ...]
    """Its criterion's words (and regime) the outcome lacks."""
    moved: bool
    why: str
    """One line: what relevance decided, and what the sweep then did (or why it did nothing)."""
    before_pct: int
    after_pct: int
    status: str
    """Its status once the sweep decided on the outcome."""


class OutcomeExplanation(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    min_relevance: float
    active: int
    """Entries active when the outcome came: what it was weighed against."""
    moved: tuple[ExplainedEntry, ...]
    nearest: tuple[ExplainedEntry, ...]
    """The most relevant of those it did not move, most relevant first."""


def _input_position(record: Recorded) -> int | None:
    """The position of the input the staging process decided ``record`` on, where the event says."""
    match record.event:
        case EntryStaged(lineage=lineage):
            return lineage.source_position
        case ConfidenceChanged(outcome_position=position):
            return position
        case EntryReviewed(review_position=position):
            return position
        case _:
            return None


def staged_entries(store: EventStore, golem_id: str, outcome: Recorded | None = None) -> dict[str, StagedEntry]:
    """The golem's entries as the staging process left them just before it decided on ``outcome``
    (after every decision, with None). Its decisions come in the order of the inputs it decided on,
    and may be written long after them: they are cut at the first decided on ``outcome`` or on an
    input after it (a decision that names no input position goes with the one before it)."""
    recalls = store.read_stream(side_stream(golem_id, RECALL_STREAM)) if outcome is not None else []
    recalled = {r.meta.event_id: r.position for r in recalls}
    # One input's decisions are written together, under its id (a displacement before the entry
    # that made it, which names the input's position).
    groups = itertools.groupby(
        store.read_stream(side_stream(golem_id, STAGING_STREAM)), key=lambda r: r.meta.causation_id
    )
    entries: dict[str, StagedEntry] = {}
    input_at = 0
    for cause, grouped in groups:
        records = list(grouped)
        known = [p for p in map(_input_position, records) if p is not None]
        input_at = max(known) if known else recalled.get(cause or "", input_at)
        if outcome is not None and (cause == outcome.meta.event_id or input_at > outcome.position):
            break
        for record in records:
            entry_id: str = record.event.entry_id  # type: ignore[attr-defined]
            entry = apply_staging_event(entries.get(entry_id), record)
            if entry is not None:
                entries[entry_id] = entry
    return entries


def _words(label: str, words: tuple[str, ...]) -> str:
    return f"{label} {', '.join(words)}" if words else ""


def _moved(
    entry: StagedEntry,
    change: ConfidenceChanged,
    decided: list[object],
    settings: StagingSettings,
) -> str:
    then = f"{change.before_pct}% -> {change.after_pct}%"
    if any(isinstance(d, EntryPromoted) for d in decided):
        then += ", promoted"
    elif any(isinstance(d, EntryRefuted) for d in decided):
        then += ", refuted"
    elif entry.quarantine is not None and change.after_pct >= settings.promote_at_pct:
        then += ", quarantined: only a review promotes it"
    return then


def _why(
    entry: StagedEntry, match: Match, decided: list[object], outcome: OutcomeRecorded, settings: StagingSettings
) -> str:
    at = f"relevance {match.relevance:.2f}"
    words = "; ".join(w for w in (_words("shares", match.shared), _words("lacks", match.missing)) if w)
    seen = f" ({words})" if words else ""
    change = next((d for d in decided if isinstance(d, ConfidenceChanged)), None)
    if change is not None:
        then = _moved(entry, change, decided, settings)
        if outcome.entry_id is not None:
            return f"named by the outcome: {then}"
        return f"{at} >= staging.min_relevance {settings.min_relevance:.2f}{seen}: {then}"
    if outcome.entry_id is not None:
        return "the outcome names another entry"
    if any(isinstance(d, EntryExpired) for d in decided):
        reason = "it expired at this outcome (staging.expire_after_ticks)"
    elif entry.kind in settings.review_only_kinds:
        reason = f"a {entry.kind} moves only by review (staging.review_only_kinds)"
    elif match.relevance < settings.min_relevance:
        return f"{at} < staging.min_relevance {settings.min_relevance:.2f}{seen}"
    else:
        reason = "the sweep that decided it ran with other staging settings"
    return f"{at}{seen}, but {reason}"


def explain_outcome(
    store: EventStore, outcome: Recorded, settings: StagingSettings, *, nearest: int = 3
) -> OutcomeExplanation:
    """Why ``outcome`` (a recorded ``OutcomeRecorded`` the sweep has decided on) moved what it moved,
    and the ``nearest`` most relevant entries it did not move, with why."""
    event = outcome.event
    assert isinstance(event, OutcomeRecorded)
    before = sorted(
        (e for e in staged_entries(store, event.golem_id, outcome).values() if e.active),
        key=lambda e: (e.lineage.source_position, e.entry_id),  # the sweep's order
    )
    after = staged_entries(store, event.golem_id)
    cause = outcome.meta.event_id
    decided: dict[str, list[object]] = {}
    for record in store.read_stream(side_stream(event.golem_id, STAGING_STREAM)):
        if record.position > outcome.position and record.meta.causation_id == cause:
            decided.setdefault(record.event.entry_id, []).append(record.event)  # type: ignore[attr-defined]
    rows: list[ExplainedEntry] = []
    for entry, match in zip(before, relevance(event, before), strict=True):
        own = decided.get(entry.entry_id, [])
        change = next((d for d in own if isinstance(d, ConfidenceChanged)), None)
        now = after.get(entry.entry_id, entry)
        rows.append(
            ExplainedEntry(
                entry_id=entry.entry_id,
                kind=entry.kind,
                text=entry.text,
                # What the sweep recorded, where it moved the entry; else what it would have computed.
                relevance=change.relevance if change is not None and change.relevance is not None else match.relevance,
                shared=match.shared,
                missing=match.missing,
                moved=change is not None,
                why=_why(entry, match, own, event, settings),
                before_pct=entry.confidence_pct,
                after_pct=now.confidence_pct,
                status=now.status,
            )
        )
    ranked = sorted(rows, key=lambda r: -r.relevance)  # stable: the sweep's order among equals
    return OutcomeExplanation(
        position=outcome.position,
        min_relevance=settings.min_relevance,
        active=len(before),
        moved=tuple(r for r in ranked if r.moved),
        nearest=tuple(r for r in ranked if not r.moved)[:nearest],
    )
