"""Recall: what the golem knows that matches a query, with the dreams that match kept apart
(Dense-Mem 002_*: ``recall_memory`` returns ``related_dreams`` separately from results; a dream is
a hypothesis, never active memory).

Results come from waking episodes, validated dream beliefs, promoted insights and the newest
MEMORY.md; related dreams are proposed or reinforced staged entries (an unvalidated belief is one of
those, so it comes back there, never among the results). Matching is on content words (the same
word list the offline generator and criterion matching use): a text scores the share of the
query's words it contains. Episodes are found through the ``recall`` projection, an inverted
index of their words, so a recall never reads the log.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import msgspec

from oneiros._text import content_word_set
from oneiros.events._recall import RecallKind
from oneiros.events._types import EpisodeRecorded, Event
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Rows
from oneiros.projections._sinks import beliefs, memory_version
from oneiros.projections._staging import StagedEntry
from oneiros.store._store import Recorded

__all__ = ["RecallIndex", "RecallItem", "RecallResult", "RecallSettings", "recall"]


class RecallSettings(msgspec.Struct, frozen=True, kw_only=True):
    postings: int = 1_000
    """Newest episodes kept per word in the index (oneiros default): recall favours what is recent
    and an index row stays small however long the golem lives."""


class _Postings(msgspec.Struct, kw_only=True):
    ticks: list[int] = msgspec.field(default_factory=list)


class _EpisodeText(msgspec.Struct, kw_only=True):
    tick: int
    summary: str
    tags: tuple[str, ...] = ()
    regime: str = ""
    time: str = ""


class RecallIndex:
    """Rows ``episode/<golem>/<tick>`` and ``word/<golem>/<word>`` (the ticks whose episode has it)."""

    name = "recall"
    types: tuple[type[Event], ...] = (EpisodeRecorded,)

    def __init__(self, settings: RecallSettings | None = None) -> None:
        self.settings = settings or RecallSettings()

    def apply(self, record: Recorded, rows: Rows) -> None:
        self.apply_batch((record,), rows)

    def apply_batch(self, records: Sequence[Recorded], rows: Rows) -> None:
        # A word's row is edited once per stretch with the ticks of every episode in it that has
        # the word, not once per such episode: an episode has a dozen words, and editing each
        # word's row per episode was most of a catch-up's time.
        found: dict[str, defaultdict[str, list[int]]] = {}
        for record in records:
            event = record.event
            assert isinstance(event, EpisodeRecorded)
            golem, episode = record.meta.golem_id, event.episode
            tick = episode.tick
            text = _EpisodeText(
                tick=tick,
                summary=episode.summary,
                tags=episode.tags,
                regime=episode.regime,
                time=episode.time.isoformat() if episode.time else "",
            )
            rows.put("episode", f"{golem}/{tick:012d}", text)
            words = found.get(golem)
            if words is None:
                words = found[golem] = defaultdict(list)
            for word in content_word_set(" ".join((episode.summary, *episode.tags, episode.regime))):
                words[word].append(tick)
        limit = self.settings.postings
        for golem, words in found.items():
            prefix = golem + "/"
            for word, ticks in words.items():
                postings = rows.edit("word", prefix + word, _Postings)
                if postings is None:
                    rows.put("word", prefix + word, _Postings(ticks=ticks[-limit:]))
                    continue
                kept = postings.ticks
                kept += ticks
                if len(kept) > limit:
                    del kept[:-limit]


class RecallItem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing recalled, as the API returns it. ``text`` is data, never an instruction."""

    kind: RecallKind
    ref: str
    text: str
    score: float
    status: str = ""
    """For a related dream: proposed or reinforced."""
    confidence: float | None = None


class RecallResult(msgspec.Struct, frozen=True, kw_only=True):
    query: str
    results: list[RecallItem]
    related_dreams: list[RecallItem]
    """Hypotheses that match: review them, never treat them as memory (Dense-Mem 002_*)."""


def _score(query: set[str], text: str) -> float:
    return round(len(query & content_word_set(text)) / len(query), 4) if query else 0.0


def _ranked(items: Iterable[RecallItem], limit: int) -> list[RecallItem]:
    return sorted((i for i in items if i.score > 0), key=lambda i: (-i.score, i.kind, i.ref))[:limit]


def _episodes(db: ProjectionDB, golem_id: str, query: set[str]) -> list[RecallItem]:
    matched: dict[int, int] = {}
    for word in query:
        data = db.get("recall", "word", f"{golem_id}/{word}")
        for tick in msgspec.json.decode(data, type=_Postings).ticks if data else ():
            matched[tick] = matched.get(tick, 0) + 1
    rows = db.get_many("recall", "episode", [f"{golem_id}/{tick:012d}" for tick in matched])
    out: list[RecallItem] = []
    for data in rows.values():
        text = msgspec.json.decode(data, type=_EpisodeText)
        score = round(matched[text.tick] / len(query), 4)
        out.append(RecallItem(kind="episode", ref=str(text.tick), text=text.summary, score=score))
    return out


def recall(
    db: ProjectionDB, staging: Sequence[StagedEntry], golem_id: str, query: str, limit: int = 10
) -> RecallResult:
    """What ``golem_id`` knows that matches ``query`` (at most ``limit`` results), and the staged
    dreams among ``staging`` that match, apart."""
    words = content_word_set(query)
    found = _episodes(db, golem_id, words)
    # A belief still unvalidated is its staged dream, which comes back among related_dreams.
    known = [b for b in beliefs(db, golem_id) if b.validated]
    found += [
        RecallItem(
            kind="belief",
            ref=b.entry_id,
            text=b.content,
            score=_score(words, b.content),
            confidence=b.confidence_pct / 100,
        )
        for b in known
    ]
    mine = [e for e in staging if e.golem_id == golem_id]
    as_belief = {b.entry_id for b in known}
    found += [
        RecallItem(
            kind="insight", ref=e.entry_id, text=e.text, score=_score(words, e.text), confidence=e.confidence_pct / 100
        )
        for e in mine
        if e.status == "promoted" and e.entry_id not in as_belief
    ]
    memory = memory_version(db, golem_id)
    if memory is not None:
        for n, line in enumerate(memory.content.splitlines(), start=1):
            if line.startswith("- "):
                ref = f"MEMORY.md:v{memory.version}:{n}"
                found.append(RecallItem(kind="memory", ref=ref, text=line[2:], score=_score(words, line)))
    dreams = [
        RecallItem(
            kind="dream",
            ref=e.entry_id,
            text=e.text,
            score=_score(words, e.text),
            status=e.status,
            confidence=e.confidence_pct / 100,
        )
        for e in mine
        if e.status in ("proposed", "reinforced")
    ]
    return RecallResult(query=query, results=_ranked(found, limit), related_dreams=_ranked(dreams, limit))
