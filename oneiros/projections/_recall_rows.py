"""The recall index's rows (``_recall.py`` writes and reads them): each document an episode or a
dream observation, which of them holds each tick, and each golem's statistics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, EpisodeRecorded, Event
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Rows
from oneiros.store._store import Recorded

if TYPE_CHECKING:
    from oneiros.projections._topk import TermBatch

__all__ = ["episode_refs", "episode_text", "episode_times"]

_EPISODES, _OBSERVATIONS = 0, 1
"""The index's parts: one ranking, but each part's best are fetched, so neither crowds the other out."""


class _Stats(msgspec.Struct, kw_only=True):
    docs: int = 0
    length: int = 0


class _Tick(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Which document holds the current profile entry or value on a thing."""

    doc: int
    ref: str | None = None


_TICKS_PER_ROW = 256
"""Ticks a ``ticks`` row holds. A row per tick was a quarter of a catch-up's time (one more row
per episode in the table and its key index); a live commit rewrites one row of at most this many."""


class _Ticks(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The documents of the episodes recorded with a stretch of ticks, and those episodes' own ids,
    by tick (in decimal: rows are written with their keys in order, which needs text keys)."""

    docs: dict[str, int] = msgspec.field(default_factory=dict)
    refs: dict[str, str] = msgspec.field(default_factory=dict)


def _ticks_key(golem: str, tick: int) -> str:
    return f"{golem}/{tick // _TICKS_PER_ROW:012d}"


class _Outdated(msgspec.Struct, frozen=True, kw_only=True):
    """An episode whose fact a later one on the same thing superseded (``by``: that fact's document)."""

    by: int


class _Doc(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    # Fields at their defaults are left out of the row: a catch-up writes one per episode, and
    # what it writes is most of its time (the text its terms came from is rebuilt, not stored).
    kind: Literal["episode", "observation", "profile"]
    ref: str
    text: str
    extra: tuple[str, ...] = ()
    """What an episode is indexed by besides speaker and text: its tags and regime."""
    ticks: tuple[int, ...] = ()
    refs: tuple[str, ...] = ()
    speaker: str | None = None
    time: str | None = None
    restates: bool = True
    """Whether its text restates its episodes (an episode, an observation, a thread), or only names
    what they talked about (a summary): only a restatement may take an episode's place."""
    timeline: bool = False
    """A timeline (what the user brought up about a subject, in order): weighted up for a query
    that asks for an order or a progression."""

    @property
    def indexed(self) -> str:
        """The text its terms were taken from: :func:`episode_text` of an episode, else its text."""
        if self.kind != "episode":
            return self.text
        said = f"{self.speaker}: {self.text}" if self.speaker else self.text
        return " ".join((said, *self.extra)) if self.extra else said


def _extra(episode: Episode) -> tuple[str, ...]:
    return (*episode.tags, episode.regime) if episode.regime != "unknown" else tuple(episode.tags)


def episode_text(episode: Episode) -> str:
    """What an episode is indexed by: ``Speaker: summary`` (or the summary alone), its tags, and its
    regime when it names one."""
    said = f"{episode.speaker}: {episode.said()}" if episode.speaker else episode.said()
    extra = _extra(episode)
    return " ".join((said, *extra)) if extra else said


def _indexed_text(event: Event) -> str:
    match event:
        case EpisodeRecorded(episode=episode):
            return episode_text(episode)
        case DreamObservation(text=text):
            return text
        case _:
            raise TypeError(f"recall indexes episodes and dream observations, not {type(event).__name__}")


def _post(records: Sequence[Recorded], observations: Sequence[bool], cut: TermBatch, rows: Rows) -> None:
    """Post each of ``records`` that has terms (the texts of ``cut``, in order) in its golem's part."""
    posted: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for n, (record, observation, length) in enumerate(zip(records, observations, cut.lengths, strict=True)):
        if length:
            part = _OBSERVATIONS if observation else _EPISODES
            docs, texts = posted.setdefault((record.meta.golem_id, part), ([], []))
            docs.append(record.position)
            texts.append(n)
    for (golem, part), (docs, texts) in posted.items():
        rows.post(golem, part, docs, texts, cut)


def _tick_key(golem: str, tick: int) -> str:
    return f"{golem}/{tick:012d}"


def _episode_ticks(db: ProjectionDB, golem_id: str, ticks: Iterable[int]) -> list[tuple[int, _Ticks]]:
    """Each of ``ticks`` the golem recorded an episode with, beside the row that holds it, read in
    one query per 500 rows."""
    wanted = sorted(set(ticks))
    found = db.get_many("recall", "ticks", sorted({_ticks_key(golem_id, t) for t in wanted}))
    rows = {key: msgspec.json.decode(data, type=_Ticks) for key, data in found.items()}
    return [(t, held) for t in wanted if (held := rows.get(_ticks_key(golem_id, t))) and str(t) in held.docs]


def episode_refs(db: ProjectionDB, golem_id: str, ticks: Iterable[int]) -> dict[int, str]:
    """The own ids (``Episode.ref``) of the golem's episodes recorded with ``ticks``, of those that
    have one."""
    return {t: ref for t, held in _episode_ticks(db, golem_id, ticks) if (ref := held.refs.get(str(t)))}


def episode_times(db: ProjectionDB, golem_id: str, ticks: Iterable[int]) -> dict[int, str]:
    """The times (ISO 8601) of the golem's episodes recorded with ``ticks``, of those that have one."""
    docs = {t: held.docs[str(t)] for t, held in _episode_ticks(db, golem_id, ticks)}
    rows = db.get_many("recall", "doc", [f"{golem_id}/{doc}" for doc in docs.values()])
    times = {
        t: msgspec.json.decode(d, type=_Doc).time for t, doc in docs.items() if (d := rows.get(f"{golem_id}/{doc}"))
    }
    return {t: time for t, time in times.items() if time}
