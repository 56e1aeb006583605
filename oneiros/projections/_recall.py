"""Recall: what the golem knows that matches a query, ranked by Okapi BM25, with the dreams that
match kept apart (Dense-Mem: ``recall_memory`` returns ``related_dreams`` separately from
results; a dream is a hypothesis, never active memory).

Results are facts: waking episodes, validated dream beliefs, promoted insights and the newest
MEMORY.md's lines. Related dreams are hypotheses: proposed or reinforced staged entries (an
unvalidated belief is one of those) and the observations, threads and summaries a dream drew from
the episodes (``DreamObservation``). Both come from one ranking: every item has the BM25 score of
its text against the query over the golem's own corpus (``relevance``), its place in that one
ranking (``rank``, results and related dreams numbered together) and its ``standing``, and names
the episodes it stands for (``source_ticks``, with their own ids in ``source_refs``), so a reader
can merge the two lists by rank or go back to the turns. ``score`` keeps its older meaning (the
share of the query's content words the text holds), which the recall-driven promotion policy reads.

Episodes and dream observations are found through the ``recall`` projection: term postings in the
projection database (``ProjectionDB.term_top``, the same SQL on SQLite and PostgreSQL), so a recall
never reads the log. Staged entries and MEMORY.md lines are few and change status; they are scored
at recall time with the same formula and the index's statistics. With an embedder configured
(``RecallSettings.embedder``), each ranking's candidates are ranked again by cosine similarity and
the two rankings fused by reciprocal rank.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Literal

import msgspec

from oneiros._text import content_word_set
from oneiros.events._observations import DreamObservation
from oneiros.events._recall import RecallKind
from oneiros.events._types import Episode, EpisodeRecorded, Event
from oneiros.generators._units import ASSISTANTS
from oneiros.projections._current import current_order
from oneiros.projections._db import Okapi, ProjectionDB
from oneiros.projections._index import PENDING, golem_dreams, staged_entries
from oneiros.projections._profile import ProfileEntry
from oneiros.projections._recall_rows import (
    _EPISODES,
    _OBSERVATIONS,
    _Doc,
    _extra,
    _indexed_text,
    _Outdated,
    _post,
    _Stats,
    _Tick,
    _tick_key,
    _Ticks,
    _ticks_key,
    episode_refs,
    episode_text,
    episode_times,
)
from oneiros.projections._runner import Rows
from oneiros.projections._sinks import beliefs, memory_version
from oneiros.projections._staging import StagedEntry
from oneiros.projections._standing import InForce, applicable, in_force
from oneiros.projections._terms import bm25_weight, idf, term_counts, terms, unique_terms
from oneiros.settings._recall import RecallSettings
from oneiros.store._store import Recorded

__all__ = [
    "RecallIndex",
    "RecallItem",
    "RecallResult",
    "RecallSettings",
    "Standing",
    "episode_refs",
    "episode_text",
    "episode_times",
    "recall",
    "recall_golem",
]

Standing = Literal["fact", "dream"]
_GROUPED_POOL = 3
"""Grouping fetches this many times the limit from each part of the index, to fill the places it leaves out."""
_CURRENT_WINDOW = 10
"""How far down the ranking a later value on the same thing is put above an earlier one."""
_RRF_K = 60
"""Reciprocal-rank fusion's constant (Cormack et al. 2009): 1 / (60 + rank)."""


_TIMELINE_WEIGHT = 1.5
"""What a timeline's relevance is multiplied by when the query asks for an order or a progression:
its words are spread over many turns, so BM25 alone ranks it below the one turn that repeats the
question's words. A timeline whose subject the query names ("how has my budget tracker
progressed") is weighted by twice that: it is the one asked for, above timelines that only
mention the subject."""
_ORDERING = re.compile(
    r"\b(?:in order|order in which|in what order|progress(?:ed)?|over time|throughout our conversations|"
    r"summary of how|timeline)\b",
    re.IGNORECASE,
)
_QUERY_WORD = re.compile(r"[a-z0-9+#-]+")
_OUTDATED_WEIGHT = 0.5
"""What an outdated turn's relevance is multiplied by, so the turn of the value in force ranks above it."""


class RecallIndex:
    """Rows ``doc/<golem>/<doc>`` (an episode or a dream observation, ``doc`` its log position),
    ``ticks/<golem>/<tick // 256>`` (the documents of the episodes with those ticks), ``key/<golem>/<key>``
    (the document of the current profile entry or value on that thing), ``outdated/<golem>/<tick>``
    (an episode whose fact a later one superseded), ``stats/<golem>`` (documents and
    terms), and each document's term postings."""

    name = "recall"
    layout = 5
    """1: word rows of the newest 1000 ticks each, scored by the share of query words; 2: BM25; 3: each
    document says whether it restates its episodes (rows of 2 would read every summary as one); 4:
    postings in blocks (``_postings.py``) rather than a row each; 5: document rows without their
    indexed text (rebuilt from speaker, text, tags and regime) or fields at their defaults, and a
    ``ticks`` row per 256 ticks rather than a ``tick`` row per episode."""
    types: tuple[type[Event], ...] = (EpisodeRecorded, DreamObservation)

    def __init__(self, settings: RecallSettings | None = None) -> None:
        self.settings = settings or RecallSettings()

    def apply(self, record: Recorded, rows: Rows) -> None:
        self.apply_batch((record,), rows)

    def apply_batch(self, records: Sequence[Recorded], rows: Rows) -> None:
        # Every text of the stretch is cut into terms at once (one call of the stemmer), and the
        # statistics row of a golem is edited once per stretch, not once per document.
        texts: list[str] = []
        episodes: list[tuple[str, Episode] | None] = []
        for record in records:
            event = record.event
            if isinstance(event, EpisodeRecorded):
                texts.append(episode_text(event.episode))
                episodes.append((_ticks_key(record.meta.golem_id, event.episode.tick), event.episode))
            else:
                texts.append(_indexed_text(event))
                episodes.append(None)
        rows.prefetch("ticks", [e[0] for e in episodes if e is not None], _Ticks, numbered=True)
        from oneiros.projections._topk import term_batch  # noqa: PLC0415 - NumPy, only where postings are written

        cut = term_batch(texts)
        # Every document of the stretch is posted first, so that one it replaces later in the same
        # stretch is known to the postings as not yet written.
        _post(records, [e is None for e in episodes], cut, rows)
        stats: dict[str, _Stats] = {}
        put = rows.put
        for record, episode, length in zip(records, episodes, cut.lengths, strict=True):
            golem, event, doc = record.meta.golem_id, record.event, record.position
            golem_stats = stats.get(golem)
            if golem_stats is None:
                golem_stats = stats[golem] = rows.get("stats", golem, _Stats) or _Stats()
            if episode is not None:
                entry = self._episode(golem, doc, *episode, rows=rows, stats=golem_stats)
            else:
                assert isinstance(event, DreamObservation)  # _indexed_text refused anything else
                if event.key:
                    outdates = event.kind != "timeline"  # a timeline's turns stay current
                    self._supersede(golem, event.key, doc, rows, golem_stats, outdates=outdates)
                entry = self._observation(golem, record.meta.event_id, event, rows)
            put("doc", f"{golem}/{doc}", entry)
            if length:
                golem_stats.docs += 1
                golem_stats.length += length
        for golem, golem_stats in stats.items():
            put("stats", golem, golem_stats)

    @staticmethod
    def _episode(golem: str, doc: int, key: str, episode: Episode, *, rows: Rows, stats: _Stats) -> _Doc:  # noqa: PLR0913 - private, one call site; rows and stats keyword-only
        ticks = rows.edit("ticks", key, _Ticks)
        if ticks is None:
            ticks = _Ticks()
            rows.put("ticks", key, ticks)
        tick, ref = str(episode.tick), episode.ref
        before = ticks.docs.get(tick)
        if before is not None:
            # The tick recorded again: the later episode is the one recall finds, as dreams see it.
            old = rows.get("doc", f"{golem}/{before}", _Doc)
            if old is not None:
                found = terms(old.indexed)
                rows.unpost(golem, before, set(found), _EPISODES)
                rows.delete("doc", f"{golem}/{before}")
                if found:
                    stats.docs -= 1
                    stats.length -= len(found)
        ticks.docs[tick] = doc
        if ref:
            ticks.refs[tick] = ref
        elif ticks.refs:
            ticks.refs.pop(tick, None)
        return _Doc(
            kind="episode",
            ref=tick,
            text=episode.said(),
            extra=_extra(episode),
            ticks=(episode.tick,),
            refs=(ref,) if ref else (),
            speaker=episode.speaker,
            time=episode.time.isoformat() if episode.time else None,
        )

    @staticmethod
    def _supersede(golem: str, key: str, doc: int, rows: Rows, stats: _Stats, *, outdates: bool = True) -> None:  # noqa: PLR0913 - private; outdates keyword-only
        """A profile entry or a fact giving a new value supersedes the golem's earlier one on the
        same thing (its ``key``): recall finds only the current one (the log keeps both, and the
        profile read model both entries, with when each held). A timeline written again (not
        ``outdates``) says its turns are still current: it only lists more of them."""
        key_row = f"{golem}/{key}"
        before = rows.get("key", key_row, _Tick)
        if before is not None:
            old = rows.get("doc", f"{golem}/{before.doc}", _Doc)
            if old is not None:
                for tick in old.ticks if outdates else ():  # what the replaced fact's turns said is outdated now
                    rows.put("outdated", _tick_key(golem, tick), _Outdated(by=doc))
                found = terms(old.indexed)
                rows.unpost(golem, before.doc, set(found), _OBSERVATIONS)
                rows.delete("doc", f"{golem}/{before.doc}")
                if found:
                    stats.docs -= 1
                    stats.length -= len(found)
        rows.put("key", key_row, _Tick(doc=doc))

    @staticmethod
    def _observation(golem: str, event_id: str, event: DreamObservation, rows: Rows) -> _Doc:
        ticks = event.source_episode_ticks
        refs = [
            ref
            for tick in ticks
            if (held := rows.get("ticks", _ticks_key(golem, tick), _Ticks)) and (ref := held.refs.get(str(tick)))
        ]
        return _Doc(
            kind="profile" if event.kind == "profile" else "observation",
            ref=event_id,
            text=event.text,
            ticks=ticks,
            refs=tuple(refs),
            speaker=event.subject,
            time=event.about.isoformat() if event.about else None,
            # A timeline names its turns without restating them, as a summary does: it never takes
            # a turn's place, or one timeline would stand for many turns in one slot.
            restates=event.kind not in ("summary", "timeline"),
            timeline=event.kind == "timeline",
        )


class RecallItem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing recalled, as the API returns it. ``text`` is data, never an instruction."""

    kind: RecallKind
    ref: str
    text: str
    score: float
    """The share of the query's content words the text holds (0 to 1)."""
    status: str = ""
    """For a related dream: proposed or reinforced (a staged entry), or empty (an observation)."""
    confidence: float | None = None
    rank: int = 0
    """Its place in the recall's one ranking of results and related dreams together, from 1."""
    relevance: float = 0.0
    """What it was ranked by: its BM25 score against the query (fused with the embedder's ranking
    when one is configured)."""
    standing: Standing = "fact"
    """``fact`` (a result) or ``dream`` (a hypothesis, among the related dreams)."""
    source_ticks: tuple[int, ...] = ()
    """The episodes it stands for: its own tick for an episode, the sources of a dream output."""
    source_refs: tuple[str, ...] = ()
    """Those episodes' own ids, where they have one (a LoCoMo dialog id, a chat message's id)."""
    speaker: str | None = None
    time: str | None = None
    replaces: str | None = None
    """The ref of an earlier item stating a value on the same thing, which this later one was
    ranked above (``_current.py``): what the current value replaced."""


class RecallResult(msgspec.Struct, frozen=True, kw_only=True):
    query: str
    results: list[RecallItem]
    related_dreams: list[RecallItem]
    """Hypotheses that match: review them, never treat them as memory (Dense-Mem)."""

    def ranking(self) -> list[RecallItem]:
        """Results and related dreams in the recall's one ranking (by ``rank``)."""
        return sorted((*self.results, *self.related_dreams), key=lambda i: i.rank)


class _Scorer:
    """BM25 of texts outside the index, with the index's statistics for ``golem``."""

    def __init__(self, db: ProjectionDB, golem: str, query: str, settings: RecallSettings) -> None:
        self.settings = settings
        self.terms = unique_terms(query)
        data = db.get("recall", "stats", golem)
        stats = msgspec.json.decode(data, type=_Stats) if data else _Stats()
        self.docs = stats.docs
        self.avgdl = stats.length / stats.docs if stats.docs else 0.0
        self.blocks = db.term_blocks("recall", golem, self.terms)
        held: dict[str, int] = {}
        for block in self.blocks:
            held[block.term] = held.get(block.term, 0) + block.n
        self.idf = {t: idf(self.docs, held.get(t, 0)) for t in self.terms}
        self.indexed = {t: w for t, w in self.idf.items() if held.get(t)}

    def okapi(self) -> Okapi:
        return Okapi(self.settings.k1, self.settings.b, self.avgdl)

    def score(self, text: str) -> float:
        counts = term_counts(text)
        length = sum(counts.values())
        k1, b = self.settings.k1, self.settings.b
        # An outside text longer than any indexed one still normalises against the index's mean.
        avgdl = self.avgdl or float(length)
        return sum(self.idf[t] * bm25_weight(counts[t], length, avgdl, k1, b) for t in self.terms if t in counts)


def _indexed(  # noqa: PLR0913 - private, one call site; the rest keyword-only
    db: ProjectionDB,
    golem_id: str,
    scorer: _Scorer,
    per_part: int,
    words: set[str],
    *,
    summaries: set[str],
    ordering: bool = False,
    query: str = "",
) -> list[RecallItem]:
    """The index's best ``per_part`` of each part as items; the refs of summaries among them are
    added to ``summaries``; with ``ordering``, timelines are weighted up (those whose subject the
    ``query``, in lower case, names the most)."""
    hits = db.term_top("recall", golem_id, scorer.indexed, scorer.okapi(), per_part, blocks=scorer.blocks)
    rows = db.get_many("recall", "doc", [f"{golem_id}/{doc}" for doc, _part, _score in hits])
    out: list[RecallItem] = []
    for doc, _part, score in hits:
        data = rows.get(f"{golem_id}/{doc}")
        if data is None:  # pragma: no cover - postings and rows are written in one transaction
            continue
        found = msgspec.json.decode(data, type=_Doc)
        if not found.restates:
            summaries.add(found.ref)
        relevance = score
        if ordering and found.timeline:
            named = bool(found.speaker) and f" {found.speaker} " in f" {query} "
            relevance = score * _TIMELINE_WEIGHT * (2 if named else 1)
        out.append(
            RecallItem(
                kind=found.kind,
                ref=found.ref,
                text=found.text,
                score=_share(words, found.text),
                relevance=relevance,
                standing="fact" if found.kind == "episode" else "dream",
                source_ticks=found.ticks,
                source_refs=found.refs,
                speaker=found.speaker,
                time=found.time,
            )
        )
    return out


def _share(query: set[str], text: str) -> float:
    return round(len(query & content_word_set(text)) / len(query), 4) if query else 0.0


def _outside(
    db: ProjectionDB, staging: Sequence[StagedEntry], golem_id: str, scorer: _Scorer, words: set[str]
) -> list[RecallItem]:
    """Beliefs, insights, MEMORY.md lines and staged dreams, scored as the index would score them."""
    mine = {e.entry_id: e for e in staging if e.golem_id == golem_id}

    def item(kind: RecallKind, ref: str, text: str, standing: Standing, **more: object) -> RecallItem:
        entry = mine.get(ref)
        ticks = entry.lineage.source_episode_ticks if entry else ()
        relevance = scorer.score(text)
        return RecallItem(
            kind=kind,
            ref=ref,
            text=text,
            score=_share(words, text),
            relevance=relevance,
            standing=standing,
            source_ticks=ticks,
            **more,  # type: ignore[arg-type]
        )

    # A belief still unvalidated is its staged dream, which comes back among related_dreams.
    known = [b for b in beliefs(db, golem_id) if b.validated]
    out = [item("belief", b.entry_id, b.content, "fact", confidence=b.confidence_pct / 100) for b in known]
    as_belief = {b.entry_id for b in known}
    for e in mine.values():
        if e.status == "promoted" and e.entry_id not in as_belief:
            out.append(item("insight", e.entry_id, e.text, "fact", confidence=e.confidence_pct / 100))
        elif e.status in ("proposed", "reinforced"):
            out.append(item("dream", e.entry_id, e.text, "dream", status=e.status, confidence=e.confidence_pct / 100))
    memory = memory_version(db, golem_id)
    if memory is not None:
        for n, line in enumerate(memory.content.splitlines(), start=1):
            if line.startswith("- "):
                out.append(item("memory", f"MEMORY.md:v{memory.version}:{n}", line[2:], "fact"))
    return out


def _with_refs(db: ProjectionDB, golem_id: str, items: list[RecallItem]) -> list[RecallItem]:
    """Items scored outside the index name their episodes' own ids too."""
    wanted = {t for i in items if i.source_ticks and not i.source_refs for t in i.source_ticks}
    if not wanted:
        return items
    refs = episode_refs(db, golem_id, wanted)
    return [
        msgspec.structs.replace(i, source_refs=tuple(r for t in i.source_ticks if (r := refs.get(t))))
        if i.source_ticks and not i.source_refs
        else i
        for i in items
    ]


def _fused(query: str, items: list[RecallItem], embedder_name: str) -> list[RecallItem]:
    """Each item's relevance becomes 1/(60 + its BM25 rank) + 1/(60 + its cosine rank)."""
    from oneiros.episodes._vectors import make_embedder  # noqa: PLC0415 - NumPy, only when asked for

    embedder = make_embedder(embedder_name)
    if embedder is None or not items:
        return items
    matrix = embedder.embed([query, *(i.text for i in items)])
    cosine = (matrix[1:] @ matrix[0]).tolist()
    by_bm25 = sorted(range(len(items)), key=lambda n: -items[n].relevance)
    by_cosine = sorted(range(len(items)), key=lambda n: -cosine[n])
    fused = [0.0] * len(items)
    for order in (by_bm25, by_cosine):
        for place, n in enumerate(order, start=1):
            fused[n] += 1 / (_RRF_K + place)
    return [msgspec.structs.replace(i, relevance=round(f, 9)) for i, f in zip(items, fused, strict=True)]


def _grouped(ranked: Sequence[RecallItem], summaries: AbstractSet[str] = frozenset()) -> list[RecallItem]:
    """``ranked`` grouped by source episode, numbered again. An item that stands for one episode
    takes the place of that episode's fullest form among the candidates: the best-ranked dream
    observation that restates it with more (the question it answers, a thread across days; never a
    summary, among ``summaries``, which names what episodes talked about without restating them), else
    the episode itself (a dream that restates one episode adds nothing a reader does not get from
    the episode); whatever takes a place keeps the relevance of what stood there. An item whose
    episodes are all stood for above it is left out, so each place brings an episode of its own.
    An item naming no episode is always kept. A profile entry takes its turn's place as a fuller
    form does (the turn alone does not say what the user stands by, or that it is current)."""
    facts: dict[int, RecallItem] = {}
    fuller: dict[int, RecallItem] = {}
    for i in ranked:
        if i.standing == "fact" and len(i.source_ticks) == 1:
            facts.setdefault(i.source_ticks[0], i)
        elif (i.kind == "observation" and len(i.source_ticks) > 1 and i.ref not in summaries) or i.kind == "profile":
            for tick in i.source_ticks:
                fuller.setdefault(tick, i)
    covered: set[int] = set()
    kept: list[RecallItem] = []
    for found in ranked:
        shown = found
        if len(found.source_ticks) == 1:
            tick = found.source_ticks[0]
            shown = fuller.get(tick) or facts.get(tick) or found
        ticks = set(shown.source_ticks)
        if ticks and ticks <= covered:
            continue
        covered |= ticks
        kept.append(shown if shown is found else msgspec.structs.replace(shown, relevance=found.relevance))
    return [msgspec.structs.replace(i, rank=n) for n, i in enumerate(kept, start=1)]


def _demoted(db: ProjectionDB, golem_id: str, items: list[RecallItem]) -> list[RecallItem]:
    """``items`` with each episode whose fact was superseded (a later value on the same thing)
    weighted down, so the current value's turn ranks first."""
    episodes = [i for i in items if i.kind == "episode" and i.source_ticks]
    if not episodes:
        return items
    keys = [_tick_key(golem_id, i.source_ticks[0]) for i in episodes]
    outdated = db.get_many("recall", "outdated", keys)
    if not outdated:
        return items
    return [
        msgspec.structs.replace(i, relevance=i.relevance * _OUTDATED_WEIGHT)
        if i.kind == "episode" and i.source_ticks and _tick_key(golem_id, i.source_ticks[0]) in outdated
        else i
        for i in items
    ]


def _standing(
    items: list[RecallItem], held: InForce, first: Sequence[ProfileEntry], scorer: _Scorer, words: set[str]
) -> list[RecallItem]:
    """``items`` with what the user stands by weighted up, and the instructions that apply among
    them (from the profile when the index did not find them)."""
    weight = scorer.settings.profile_weight
    if weight != 1.0 and held.ticks:
        items = [
            msgspec.structs.replace(i, relevance=i.relevance * weight)
            if (i.kind == "profile" and i.ref in held.refs)
            or (i.kind == "episode" and len(i.source_ticks) == 1 and i.source_ticks[0] in held.ticks)
            else i
            for i in items
        ]
    seen = {i.ref for i in items}
    return items + [
        RecallItem(
            kind="profile",
            ref=e.ref,
            text=e.text,
            score=_share(words, e.text),
            relevance=scorer.score(e.text) * weight,
            standing="dream",
            source_ticks=e.source_ticks,
            time=e.since,
        )
        for e in first
        if e.ref not in seen
    ]


def _current(ranked: list[RecallItem], limit: int, scorer: _Scorer) -> list[RecallItem]:
    """The first ``limit`` of ``ranked`` (at most the ten a reader reads first) with the later of two
    values on the same thing first."""
    limit = min(limit, _CURRENT_WINDOW)
    top = ranked[:limit]
    stated = [(i.text, i.time, i.relevance, (i.speaker or "").lower() not in ASSISTANTS) for i in top]
    order = current_order(stated, scorer.terms, scorer.idf)
    if all(n == place and replaced is None for place, (n, replaced) in enumerate(order)):
        return ranked
    moved = [
        msgspec.structs.replace(top[n], replaces=None if replaced is None else top[replaced].ref)
        for n, replaced in order
    ]
    return [msgspec.structs.replace(i, rank=n) for n, i in enumerate([*moved, *ranked[limit:]], start=1)]


def _ordered(items: Iterable[RecallItem], first: AbstractSet[str] = frozenset()) -> list[RecallItem]:
    """By relevance, the instructions that apply (``first``, by ref) before everything."""
    ranked = sorted(items, key=lambda i: (i.ref not in first, -i.relevance, i.standing != "fact", i.kind, i.ref))
    return [msgspec.structs.replace(i, rank=n) for n, i in enumerate(ranked, start=1)]


def recall(  # noqa: PLR0913 - the read model's recall entry; settings keyword-only
    db: ProjectionDB,
    staging: Sequence[StagedEntry],
    golem_id: str,
    query: str,
    limit: int = 10,
    *,
    settings: RecallSettings | None = None,
) -> RecallResult:
    """What ``golem_id`` knows that matches ``query`` (at most ``limit`` results), and the dreams
    that match (at most ``limit``, staged ones among ``staging``), apart; one ranking numbers both."""
    settings = settings or RecallSettings()
    words = content_word_set(query)
    scorer = _Scorer(db, golem_id, query, settings)
    fusing = settings.embedder != "none"
    per_part = max(limit, settings.pool) if fusing else limit
    if settings.grouped:
        per_part *= _GROUPED_POOL  # what grouping leaves out is made up from further down
    summaries: set[str] = set()
    found = [
        *_indexed(
            db,
            golem_id,
            scorer,
            per_part,
            words,
            summaries=summaries,
            ordering=bool(_ORDERING.search(query)),
            query=" ".join(_QUERY_WORD.findall(query.lower())),
        ),
        *_outside(db, staging, golem_id, scorer, words),
    ]
    held = in_force(db, golem_id)
    first = applicable(held, scorer.terms, scorer.idf, settings.instructions)
    found = _standing(_demoted(db, golem_id, [i for i in found if i.relevance > 0]), held, first, scorer, words)
    if fusing:
        found = _fused(query, found, settings.embedder)
    ranked = _ordered(found, first={e.ref for e in first})
    if settings.grouped:
        ranked = _grouped(ranked, summaries)
    ranked = _current(ranked, limit, scorer)
    results = [i for i in ranked if i.standing == "fact"][:limit]
    dreams = [i for i in ranked if i.standing == "dream"][:limit]
    shown = _with_refs(db, golem_id, [*results, *dreams])
    return RecallResult(query=query, results=shown[: len(results)], related_dreams=shown[len(results) :])


def recall_golem(
    db: ProjectionDB, golem_id: str, query: str, limit: int = 10, *, settings: RecallSettings | None = None
) -> RecallResult:
    """:func:`recall` over the golem's pending and promoted staged entries, as the REST route and
    the MCP tool ask it."""
    wanted = (*PENDING, "promoted")
    entries = staged_entries(db, [entry_id for _key, entry_id in golem_dreams(db, golem_id, wanted)])
    return recall(db, entries, golem_id, query, limit, settings=settings)
