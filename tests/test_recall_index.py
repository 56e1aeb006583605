"""The ``recall`` index: term postings of each golem's episodes and dream observations, applied a
stretch at a time. Whatever the stretches, it must hold each golem's latest episode per tick and
rank like a textbook BM25 over them; on SQLite and PostgreSQL alike; and recall must give one
ranking of facts and dreams, each naming the episodes it stands for."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.events._observations import DreamObservation
from oneiros.events._types import DreamStart, Episode, EpisodeRecorded, Event, EventMeta, GolemCreated
from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.projections._index import GolemIndex
from oneiros.projections._recall import RecallIndex, RecallSettings, episode_text, recall
from oneiros.projections._runner import ProjectionRunner, RunnerSettings
from oneiros.projections._terms import terms, terms_of
from oneiros.projections._topk import term_batch
from oneiros.store._store import EventStore, open_store
from tests.conftest import postgres_url
from tests.projections_support import World, staged

_WORDS = ("harbor", "storm", "ledger", "signal", "copper", "tide", "harbors", "stormy")
_T0 = datetime(2026, 1, 1, tzinfo=UTC)
# (golem, tick, the episode's words, or None for a DreamStart between episodes)
_Step = tuple[str, int, tuple[str, ...] | None]
_steps = st.lists(
    st.tuples(
        st.sampled_from(("g", "h")),
        st.integers(0, 6),
        st.none() | st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(tuple),
    ),
    min_size=1,
    max_size=40,
)


def _store(steps: list[_Step]) -> EventStore:
    store = open_store("memory://")
    versions: dict[str, int] = {}
    for golem, tick, words in steps:
        event: Event = (
            DreamStart(cycle_id=f"{golem}-{tick}", trigger="owner")
            if words is None
            else EpisodeRecorded(episode=Episode(tick=tick, summary=" ".join(words)))
        )
        batch_of: list[Event] = [event] if golem in versions else [GolemCreated(name=golem), event]
        meta = EventMeta(time=_T0, event_id=f"e{store.head()}", golem_id=golem)
        store.append(golem, versions.get(golem, 0), [(meta, e) for e in batch_of])
        versions[golem] = versions.get(golem, 0) + len(batch_of)
    return store


def _latest(steps: list[_Step]) -> dict[str, dict[int, str]]:
    """Each golem's episodes as the steps leave them: the last text recorded with each tick."""
    out: dict[str, dict[int, str]] = {}
    for golem, tick, words in steps:
        if words is not None:
            out.setdefault(golem, {})[tick] = " ".join(words)
    return out


def _postings(db: ProjectionDB) -> dict[tuple[str, int], Counter[str]]:
    """(golem, tick) -> term counts, read back from the postings through the document rows."""
    docs = {key: msgspec.json.decode(data) for _kind, key, data in db.scan("recall", "doc")}
    found: dict[tuple[str, int], Counter[str]] = {}
    for golem, term, doc, tf, _length, _part in db.postings("recall"):  # the blocks themselves: what ranking reads
        tick = int(docs[f"{golem}/{doc}"]["ref"])
        found.setdefault((golem, tick), Counter())[term] = tf
    return found


@settings(max_examples=60, deadline=None)
@given(steps=_steps, batch=st.integers(1, 7), kept=st.integers(0, 3), piece=st.integers(1, 9))
def test_recall_postings_do_not_depend_on_how_the_log_is_cut(
    steps: list[_Step], batch: int, kept: int, piece: int
) -> None:
    """Caught up alone (stretches of ``batch`` events, rows forgotten past ``kept`` at a commit),
    with another projection (the shared read), and taken live in pieces of ``piece`` events, the
    index posts the terms of each golem's latest episode per tick, and nothing else, and the three
    databases hold the same rows and postings byte for byte."""
    store = _store(steps)
    runner_settings = RunnerSettings(batch_events=batch, kept_rows=kept)
    alone, together, live = (open_projection_db("memory://") for _ in range(3))
    ProjectionRunner(store, alone, [RecallIndex()], runner_settings).catch_up()
    ProjectionRunner(store, together, [RecallIndex(), GolemIndex()], runner_settings).catch_up()
    taker = ProjectionRunner(store, live, [RecallIndex()], runner_settings)
    log = list(store.read_all())
    for start in range(0, len(log), piece):
        taker.take(log[start : start + piece])

    expected = {
        (golem, tick): Counter(terms(text)) for golem, found in _latest(steps).items() for tick, text in found.items()
    }
    assert expected == _postings(alone)
    assert alone.digest("recall") == together.digest("recall")
    assert alone.digest("recall") == live.digest("recall")
    assert store.head() == live.position("recall")


def _textbook(texts: dict[int, str], query: str, k1: float = 1.2, b: float = 0.75) -> dict[int, float]:
    """Okapi BM25 of each text against ``query``, written out from the formula."""
    docs = {tick: Counter(terms(text)) for tick, text in texts.items()}
    docs = {tick: c for tick, c in docs.items() if c}
    n = len(docs)
    avgdl = sum(sum(c.values()) for c in docs.values()) / n if n else 0.0
    scores: dict[int, float] = {}
    for tick, counts in docs.items():
        length = sum(counts.values())
        total = 0.0
        for term in dict.fromkeys(terms(query)):
            tf = counts.get(term, 0)
            if tf:
                df = sum(1 for c in docs.values() if term in c)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))
        if total > 0:
            scores[tick] = total
    return scores


@pytest.fixture(params=["sqlite", "postgres"])
def projection_db(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[ProjectionDB]:
    url = (
        f"sqlite:///{tmp_path}/proj.db"
        if request.param == "sqlite"
        else postgres_url(request.getfixturevalue("pg_schema"))
    )
    db = open_projection_db(url)
    yield db
    db.close()


def test_recall_ranks_episodes_as_textbook_bm25_on_both_engines(projection_db: ProjectionDB) -> None:
    """Over episodes recorded (one tick recorded twice), recall's relevance of each episode is the
    textbook BM25 score of its indexed text, and the results come in that order, on SQLite and
    PostgreSQL alike; an episode that holds no query term is not returned."""
    texts = [
        ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "Painting a lake sunrise helps me relax after work."),
        ("Caroline", "The support group made me feel accepted."),
        ("Melanie", "We went camping with the kids, they loved the stars."),
        ("Caroline", "I'm researching adoption agencies that support LGBTQ folks."),
        ("Melanie", "Swimming with the kids later today!"),
    ]
    store = open_store("memory://")
    episodes = [Episode(tick=n, summary=text, speaker=who, ref=f"D1:{n + 1}") for n, (who, text) in enumerate(texts)]
    # Tick 3 again: the later text is the one recall knows.
    episodes.append(Episode(tick=3, summary="Adopting kids is a big step", speaker="Melanie", ref="D2:1"))
    events: list[Event] = [GolemCreated(name="g"), *(EpisodeRecorded(episode=e) for e in episodes)]
    store.append("g", 0, [(EventMeta(time=_T0, event_id=f"e{n}", golem_id="g"), e) for n, e in enumerate(events)])
    ProjectionRunner(store, projection_db, [RecallIndex()], RunnerSettings(batch_events=3)).catch_up()
    latest = {e.tick: episode_text(e) for e in episodes}
    query = "Who adopted kids or went to a support group?"

    found = recall(projection_db, [], "g", query, limit=10)

    expected = _textbook(latest, query)
    assert sorted(expected, key=lambda t: (-expected[t], -t)) == [int(i.ref) for i in found.results]
    for item in found.results:
        assert expected[int(item.ref)] == pytest.approx(item.relevance, rel=1e-9)
    assert [n for n in range(1, len(found.results) + 1)] == [i.rank for i in found.results]
    assert ("D2:1",) == next(i.source_refs for i in found.results if i.ref == "3")


def test_one_ranking_of_facts_and_dreams_each_naming_its_episodes() -> None:
    """A dream's observation (naming two episodes) and a staged hypothesis are ranked with the
    episodes by one BM25: they come back among the related dreams, never the results, with their
    source ticks and the episodes' own ids; ``ranking()`` merges both lists by rank, numbered
    1, 2, 3... with no gap. (Ungrouped: grouping by episode is the next test's.)"""
    store = open_store("memory://")
    world = World(store)
    world.golems.record_episodes(
        "g1",
        [
            Episode(tick=10, summary="Deployed the payments service without a canary", speaker="agent", ref="m-10"),
            Episode(tick=11, summary="Rolled back payments after errors doubled", speaker="agent", ref="m-11"),
            Episode(tick=12, summary="Lunch with the team", speaker="user", ref="m-12"),
        ],
    )
    observation = DreamObservation(
        cycle_id="CYCLE",
        kind="thread",
        text="payments service: deployed without a canary, then rolled back",
        subject="payments",
        source_episode_ticks=(10, 11),
    )
    hypothesis = staged("CYCLE", 0, "strategy_hypothesis", "Ship payments behind a canary", 0.2, ticks=(10,))
    world.dream([observation, hypothesis])
    world.update()
    projections = world.projections

    ungrouped = RecallSettings(grouped=False)
    found = recall(
        projections.db, projections.staging("g1"), "g1", "payments canary rollback", limit=5, settings=ungrouped
    )

    assert all(i.standing == "fact" for i in found.results)
    assert {"10", "11"} == {i.ref for i in found.results}
    dreams = {i.kind: i for i in found.related_dreams}
    assert ("dream", (10, 11), ("m-10", "m-11")) == (
        dreams["observation"].standing,
        dreams["observation"].source_ticks,
        dreams["observation"].source_refs,
    )
    assert ("dream", "proposed", (10,), ("m-10",)) == (
        dreams["dream"].standing,
        dreams["dream"].status,
        dreams["dream"].source_ticks,
        dreams["dream"].source_refs,
    )
    merged = found.ranking()
    assert list(range(1, len(merged) + 1)) == [i.rank for i in merged]
    assert sorted(merged, key=lambda i: -i.relevance) == merged


def test_the_ranking_is_grouped_by_source_episode() -> None:
    """Grouped (the default): an observation restating one episode gives its place to that episode
    (the fact moves up with the observation's relevance); an observation joining two episodes takes
    the place of the first of them in the ranking (the answer, "The old one by the lighthouse", with
    its relevance), and the other ("Which harbor?") is left out. Every place brings an episode of its
    own, numbered 1, 2, 3... with relevance never rising."""
    store = open_store("memory://")
    world = World(store)
    world.golems.record_episodes(
        "g1",
        [
            Episode(tick=1, summary="We talked about the weekend, the harbor and the boats", speaker="ann"),
            Episode(tick=2, summary="Yesterday I sailed to the harbor", speaker="bob"),
            Episode(tick=3, summary="Which harbor?", speaker="ann"),
            Episode(tick=4, summary="The old one by the lighthouse", speaker="bob"),
        ],
    )
    dated = DreamObservation(
        cycle_id="CYCLE", text="harbor sailed: Bob sailed to the harbor on 7 May", source_episode_ticks=(2,)
    )
    pair = DreamObservation(
        cycle_id="CYCLE",
        text="Ann asked which harbor; Bob answered the old one by the lighthouse",
        source_episode_ticks=(3, 4),
    )
    world.dream([dated, pair])
    world.update()
    db = world.projections.db

    plain = recall(db, [], "g1", "harbor sailed lighthouse", settings=RecallSettings(grouped=False)).ranking()
    grouped = recall(db, [], "g1", "harbor sailed lighthouse").ranking()

    assert "observation" == plain[0].kind
    assert "3" in {i.ref for i in plain}
    answer = next(i for i in plain if i.ref == "4")
    assert ["2", "observation", "1"] == [i.ref if i.kind == "episode" else i.kind for i in grouped]
    assert plain[0].relevance == grouped[0].relevance
    assert ((3, 4), answer.relevance) == (grouped[1].source_ticks, grouped[1].relevance)
    assert [1, 2, 3] == [i.rank for i in grouped]
    assert sorted(grouped, key=lambda i: -i.relevance) == grouped


def test_a_summary_never_takes_an_episodes_place() -> None:
    """A summary names what episodes talked about without restating them: grouped, the episode it
    stands for keeps its own place, and the summary, ranked below it, brings the other episode."""
    store = open_store("memory://")
    world = World(store)
    world.golems.record_episodes(
        "g1",
        [
            Episode(tick=1, summary="The kayak capsized on the lake at dawn", speaker="ann"),
            Episode(tick=2, summary="We dried everything by the fire", speaker="bob"),
        ],
    )
    summary = DreamObservation(
        cycle_id="CYCLE", kind="summary", text="ann, bob talked about: kayak, fire", source_episode_ticks=(1, 2)
    )
    world.dream([summary])
    world.update()

    grouped = recall(world.projections.db, [], "g1", "kayak capsized lake").ranking()

    assert [("episode", (1,)), ("observation", (1, 2))] == [(i.kind, i.source_ticks) for i in grouped]


def test_an_index_of_an_older_layout_is_rebuilt_from_the_log() -> None:
    """Rows of the recall index's first layout (word rows, no layout row) are dropped at the next
    catch-up and the index built again from the log, so an upgrade never recalls from rows it does
    not read."""
    store = _store([("g", 1, ("harbor", "storm"))])
    db = open_projection_db("memory://")
    db.commit("recall", 0, store.head(), [("word", "g/harbor", b'{"ticks":[1]}')])

    ProjectionRunner(store, db, [RecallIndex()]).catch_up()

    assert [] == db.scan("recall", "word")
    assert ["1"] == [i.ref for i in recall(db, [], "g", "harbor").results]


def test_an_embedder_fuses_a_second_ranking_by_reciprocal_rank() -> None:
    """With ``embedder = "hashing"`` every item's relevance is the sum of 1/(60 + rank) over its
    BM25 rank and its cosine rank, so the best of both is at most 2/61, and the items are those
    BM25 found."""
    store = _store([("g", 1, ("harbor", "storm")), ("g", 2, ("harbor", "tide", "tide")), ("g", 3, ("copper",))])
    db = open_projection_db("memory://")
    ProjectionRunner(store, db, [RecallIndex()]).catch_up()

    plain = recall(db, [], "g", "harbor tide")
    fused = recall(db, [], "g", "harbor tide", settings=RecallSettings(embedder="hashing"))

    assert {i.ref for i in plain.results} == {i.ref for i in fused.results}
    assert all(0 < i.relevance <= 2 / 61 for i in fused.results)
    assert "2" == fused.results[0].ref


_PIECES = st.sampled_from([*_WORDS, "The", "was", " ", "-", "é", "ß", "1", "_", "x"])


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.lists(_PIECES, max_size=12).map("".join), max_size=8))
def test_a_batch_of_texts_is_cut_into_the_terms_each_text_has_alone(texts: list[str]) -> None:
    """Cutting a batch's texts at once (each distinct word stemmed once) gives each text the terms,
    in order and with repeats, that it has alone: the index and the query read text the same way."""
    assert [terms(text) for text in texts] == terms_of(texts)


_ANY_PIECES = (
    _PIECES | st.text(max_size=6) | st.sampled_from(["\x00", "\x1c", "\u00a0", "İ", "ΣΑΣ", "\U0001d7d8x", "A.B"])
)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.lists(_ANY_PIECES, max_size=12).map("".join), max_size=8))
def test_a_batch_cut_in_one_pass_has_the_terms_of_each_text_alone(texts: list[str]) -> None:
    """The catch-up's cut of a whole batch (``term_batch``: every text's words in one pass over
    their bytes, any text, separator and control characters, other alphabets and spaces included)
    gives each text the terms, in order and with repeats, that it has alone, and its length."""
    cut = term_batch(texts)
    assert [len(terms(text)) for text in texts] == cut.lengths
    assert [terms(text) for text in texts] == [
        [cut.names[i] for i in cut.ids[cut.text == n].tolist()] for n in range(len(texts))
    ]


@pytest.mark.parametrize("recorded", [[1, 2, 3, 1, 4, 5, 0, 6, 2], [5, 4, 3, 2, 1, 0, 3]])
def test_a_tick_recorded_again_in_a_later_batch_replaces_its_episode_on_both_engines(
    projection_db: ProjectionDB, recorded: list[int]
) -> None:
    """A catch-up that forgets its rows at each commit (``kept_rows=0``) looks the ticks of each batch
    up in the database, skipping those past the highest stored: a tick recorded again, below or at
    that highest one, is still found, so only its latest episode is posted, on SQLite and PostgreSQL."""
    steps: list[_Step] = [("g", tick, (_WORDS[n % len(_WORDS)], _WORDS[tick])) for n, tick in enumerate(recorded)]
    store = _store(steps)
    ProjectionRunner(store, projection_db, [RecallIndex()], RunnerSettings(batch_events=2, kept_rows=0)).catch_up()

    expected = {("g", tick): Counter(terms(text)) for tick, text in _latest(steps)["g"].items()}
    assert expected == _postings(projection_db)
