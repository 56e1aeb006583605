"""Exact lineage of a staged entry, read from the log: the episodes it was drawn from, the output
and the generator call it came from (by call key and request hash), the prompt template and its
version, the model, the tokens and cost, and every decision that moved its confidence.

A read over the log, appending nothing. The link to the generation is the call key the engine
recorded when it made the output (``OutputsSourced`` → ``DreamStaged.call_key`` →
``Lineage.call_key``); an entry staged before outputs named their calls has none, and its
generation is the one whose prompt and model its lineage recorded (``exact`` is then False).
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from oneiros._errors import EntryNotFound, InputError
from oneiros.events._quarantine import EntryQuarantined
from oneiros.events._recall import RECALL_STREAM, MemoryRecalled
from oneiros.events._staging import (
    STAGING_STREAM,
    ConfidenceChanged,
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    OutcomeRecorded,
    side_stream,
)
from oneiros.events._types import DreamStart, Episode, EpisodeRecorded, GenerationRecorded
from oneiros.settings._prompts import DEFAULT_PROMPTS
from oneiros.store._backends import Row
from oneiros.store._snapshots import read_stream_pages
from oneiros.store._store import EventStore, Recorded, decode_rows

__all__ = ["ConfidenceMove", "EntryLineage", "GenerationLink", "PromptTemplate", "entry_lineage", "find_entry"]


class GenerationLink(msgspec.Struct, frozen=True, kw_only=True):
    """The ``GenerationRecorded`` an entry's text came from."""

    call_key: str
    request_hash: str
    position: int
    event_id: str
    phase: str
    task: str
    model: str
    requested_model: str
    temperature: float
    max_tokens: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    prompt: str


class PromptTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """The template the call's prompt was rendered from, as the cycle's recorded settings had it.
    ``version`` is the first 12 hex digits of its SHA-256: equal versions, equal templates."""

    task: str
    version: str
    overridden: bool
    """True when the cycle ran with a user's template for the task, not the default."""
    template: str


class ConfidenceMove(msgspec.Struct, frozen=True, kw_only=True):
    """One decision on the entry, or evidence for one, in log order: its quarantine (only a review
    may promote it then), a confidence step (with the outcome behind it), a review, a recall that
    returned it (what the recall-driven policy counts), or how the entry ended (promoted by the
    sweep, a review or recalls; refuted, displaced, expired)."""

    position: int
    kind: str
    before_pct: int | None = None
    after_pct: int | None = None
    verdict: str | None = None
    decision: str | None = None
    status: str | None = None
    who: str | None = None
    why: str | None = None
    outcome: dict[str, Any] | None = None
    quarantine: dict[str, Any] | None = None
    """The ``EntryQuarantined`` (source episodes, trust, flags, ``why``) of a ``quarantined`` move."""
    query: str | None = None
    """What a ``recall`` move's recall asked; ``score`` is how well the entry matched it."""
    score: float | None = None
    time: str | None = None
    """When the event that made the move was written (ISO 8601)."""
    relevance: float | None = None
    """How far an ``outcome`` move's outcome bore on the entry (0-1), as the sweep recorded it."""


class EntryLineage(msgspec.Struct, frozen=True, kw_only=True):
    entry_id: str
    golem_id: str
    cycle_id: str
    kind: str
    text: str
    staged_position: int
    staged_confidence_pct: int
    confidence_pct: int
    """After every move below."""
    phase: str | None
    output_event_id: str
    output_position: int
    source_episodes: tuple[Episode, ...]
    exact: bool
    """Whether the generation was found by the call key recorded at creation."""
    generation: GenerationLink | None
    prompt_template: PromptTemplate | None
    moves: tuple[ConfidenceMove, ...]


def find_entry(store: EventStore, prefix: str, golem_id: str | None = None) -> Recorded:
    """The ``EntryStaged`` record whose entry id is ``prefix`` or starts with it (unique)."""
    if not prefix:
        raise InputError("name a staged entry (its id or a unique prefix of it)")
    found: dict[str, Recorded] = {}
    for record in store.read_all(types=[EntryStaged]):
        event = record.event
        assert isinstance(event, EntryStaged)
        if golem_id is not None and event.golem_id != golem_id:
            continue
        if event.entry_id == prefix:
            return record
        if event.entry_id.startswith(prefix):
            found.setdefault(event.entry_id, record)
    if not found:
        raise EntryNotFound(prefix)
    if len(found) > 1:
        shown = ", ".join(sorted(found)[:5]) + (", ..." if len(found) > 5 else "")
        raise InputError(f"entry prefix {prefix!r} matches {len(found)} entries: {shown}")
    return next(iter(found.values()))


def _template(start: DreamStart | None, task: str) -> PromptTemplate | None:
    if task not in DEFAULT_PROMPTS:
        return None
    overrides = start.settings.engines.prompts.overrides if start is not None and start.settings is not None else {}
    template = overrides.get(task, DEFAULT_PROMPTS[task])
    version = hashlib.sha256(template.encode()).hexdigest()[:12]
    return PromptTemplate(task=task, version=version, overridden=task in overrides, template=template)


def _link(record: Recorded) -> GenerationLink:
    g = record.event
    assert isinstance(g, GenerationRecorded)
    return GenerationLink(
        call_key=g.call_key,
        request_hash=g.request_hash,
        position=record.position,
        event_id=record.meta.event_id,
        phase=g.phase,
        task=g.task,
        model=g.model,
        requested_model=g.requested_model,
        temperature=g.temperature,
        max_tokens=g.max_tokens,
        tokens_in=g.tokens_in,
        tokens_out=g.tokens_out,
        cost_usd=g.cost_usd,
        prompt=g.prompt,
    )


def _move(store: EventStore, record: Recorded) -> ConfidenceMove | None:
    at = record.position
    move: ConfidenceMove | None = None
    match record.event:
        case ConfidenceChanged(
            outcome_position=outcome_at, before_pct=before, after_pct=after, verdict=verdict, relevance=bore
        ):
            found = next(iter(store.read_all(after=outcome_at - 1, until=outcome_at)), None)
            outcome = None
            if found is not None and isinstance(found.event, OutcomeRecorded):
                outcome = {"position": found.position, **msgspec.to_builtins(found.event)}
            move = ConfidenceMove(
                position=at,
                kind="outcome",
                before_pct=before,
                after_pct=after,
                verdict=verdict,
                outcome=outcome,
                relevance=bore,
            )
        case EntryQuarantined(why=why) as quarantined:
            move = ConfidenceMove(
                position=at, kind="quarantined", status="quarantined", why=why, quarantine=quarantined.as_row()
            )
        case EntryReviewed(decision=decision, status=status, who=who, why=why):
            move = ConfidenceMove(position=at, kind="review", decision=decision, status=status, who=who, why=why)
        case EntryPromoted(confidence_pct=pct, by=by, reason=reason):
            move = ConfidenceMove(position=at, kind="promoted", after_pct=pct, who=by, why=reason)
        case EntryRefuted(confidence_pct=pct):
            move = ConfidenceMove(position=at, kind="refuted", after_pct=pct)
        case EntryDisplaced(by_entry_id=by):
            move = ConfidenceMove(position=at, kind="displaced", why=f"made room for {by}")
        case EntryExpired(tick=tick):
            move = ConfidenceMove(position=at, kind="expired", why=f"unresolved at tick {tick}")
    return None if move is None else msgspec.structs.replace(move, time=record.meta.time.isoformat())


def _recalls(store: EventStore, golem_id: str, entry_id: str) -> list[ConfidenceMove]:
    """Each recall that returned the entry among its related dreams, as the recall policy counts it."""
    out: list[ConfidenceMove] = []
    for record in store.read_stream(side_stream(golem_id, RECALL_STREAM)):
        event = record.event
        if not isinstance(event, MemoryRecalled):
            continue
        for hit in event.related_dreams:
            if hit.kind == "dream" and hit.ref == entry_id:
                out.append(
                    ConfidenceMove(
                        position=record.position,
                        kind="recall",
                        query=event.query,
                        score=hit.score,
                        time=record.meta.time.isoformat(),
                    )
                )
                break
    return out


class _Tick(msgspec.Struct, frozen=True, gc=False):
    tick: int


class _EpisodeTick(msgspec.Struct, frozen=True, gc=False):
    episode: _Tick


class _TickOnly(msgspec.Struct, frozen=True, gc=False):
    data: _EpisodeTick


# An EpisodeRecorded as stored, reduced to its episode's tick (the rest is skipped, not built).
_tick_only = msgspec.json.Decoder(_TickOnly)
_EPISODE_TOPIC = f"{EpisodeRecorded.type_name}.v{EpisodeRecorded.schema_version}"


def _source_episodes(store: EventStore, golem_id: str, until: int, ticks: set[int]) -> dict[int, Episode]:
    """The golem's episodes of ``ticks`` recorded up to position ``until`` (the latest of a tick
    recorded twice). A long-lived golem's stream is almost all episodes: each is decoded only as
    far as its tick, and only the few sources whole."""
    if not ticks:  # a hypnagogic fragment names none
        return {}
    found: dict[int, Row] = {}
    for rows in read_stream_pages(store, golem_id, until=until, types=(EpisodeRecorded,)):
        for row in rows:
            # An older schema version goes through the upcasters whole: the rare case.
            tick = _tick_only.decode(row[3]).data.episode.tick if row[2] == _EPISODE_TOPIC else _episode_of(row).tick
            if tick in ticks:
                found[tick] = row
    return {tick: _episode_of(row) for tick, row in found.items()}


def _episode_of(row: Row) -> Episode:
    event = next(decode_rows([row])).event
    assert isinstance(event, EpisodeRecorded)
    return event.episode


def entry_lineage(store: EventStore, prefix: str, golem_id: str | None = None) -> EntryLineage:
    """Where the staged entry ``prefix`` (its id or a unique prefix) came from, and what moved it."""
    staged_record = find_entry(store, prefix, golem_id)
    staged = staged_record.event
    assert isinstance(staged, EntryStaged)
    lineage = staged.lineage
    episodes = _source_episodes(store, staged.golem_id, lineage.source_position, set(lineage.source_episode_ticks))
    start: DreamStart | None = None
    generations: list[Recorded] = []
    until = lineage.source_position
    for record in store.read_stream(staged.golem_id, until=until, types=(DreamStart, GenerationRecorded)):
        match record.event:
            case DreamStart(cycle_id=lineage.cycle_id) as started:
                start = started
            case GenerationRecorded(cycle_id=lineage.cycle_id):
                generations.append(record)
    exact = bool(lineage.call_key)
    if exact:
        chosen = [r for r in generations if r.event.call_key == lineage.call_key]  # type: ignore[attr-defined]
    else:
        chosen = [
            r
            for r in generations
            if lineage.prompt and (r.event.prompt, r.event.model) == (lineage.prompt, lineage.model)  # type: ignore[attr-defined]
        ]
    generation = _link(chosen[-1]) if chosen else None
    moves = [
        move
        for record in store.read_stream(side_stream(staged.golem_id, STAGING_STREAM))
        if getattr(record.event, "entry_id", None) == staged.entry_id and not isinstance(record.event, EntryStaged)
        for move in [_move(store, record)]
        if move is not None
    ]
    moves += _recalls(store, staged.golem_id, staged.entry_id)
    moves.sort(key=lambda m: m.position)
    confidence = staged.confidence_pct
    for move in moves:
        if move.kind in ("outcome", "promoted", "refuted") and move.after_pct is not None:
            confidence = move.after_pct
    return EntryLineage(
        entry_id=staged.entry_id,
        golem_id=staged.golem_id,
        cycle_id=lineage.cycle_id,
        kind=staged.kind,
        text=staged.text,
        staged_position=staged_record.position,
        staged_confidence_pct=staged.confidence_pct,
        confidence_pct=confidence,
        phase=lineage.phase,
        output_event_id=lineage.source_event_id,
        output_position=lineage.source_position,
        source_episodes=tuple(episodes[t] for t in lineage.source_episode_ticks if t in episodes),
        exact=exact,
        generation=generation,
        prompt_template=_template(start, generation.task) if generation is not None else None,
        moves=tuple(moves),
    )
