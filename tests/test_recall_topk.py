"""Recall's pruned top k ranks exactly as the exhaustive BM25 it replaced.

Until the postings moved into blocks (issue 38), every query term's every posting was scored in
one SQL statement (``term_top`` at commit 12ca729). That statement is kept here, verbatim, as the
reference: it runs over a row-per-posting table of the same corpus, in the same database engine, and
the new ranking must give the same documents, in the same order, with the same scores (to 1e-9), on
SQLite and PostgreSQL, at every depth recall asks for; and :func:`recall` itself must answer the
same with either."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, EpisodeRecorded, Event, EventMeta, GolemCreated
from oneiros.projections._db import Okapi, ProjectionDB, open_projection_db
from oneiros.projections._postings import BlockInfo
from oneiros.projections._recall import RecallIndex, RecallSettings, _Scorer, recall
from oneiros.projections._runner import ProjectionRunner, RunnerSettings
from oneiros.projections._topk import top_k
from oneiros.store._store import EventStore, open_store
from tests.conftest import postgres_url

_T0 = datetime(2026, 1, 1, tzinfo=UTC)
_STOP = ("the", "and", "was", "of", "to", "it", "is")
_HAND = [
    # (golem, tick, text): ties (the same text twice), repeated terms, stop words only, a re-recorded
    # tick, and a golem of one document.
    ("g", 10_000, "copper harbor ledger"),
    ("g", 10_001, "copper harbor ledger"),
    ("g", 10_002, "ledger ledger ledger ledger copper"),
    ("g", 10_003, "the and was of it is"),
    ("g", 10_004, "storm signal"),
    ("g", 10_004, "storm signal tide tide"),
    ("solo", 1, "a lone harbor in the storm"),
]


def _corpus(rng: random.Random, size: int) -> list[tuple[str, int, str]]:
    vocabulary = [f"w{n}" for n in range(400)] + ["harbor", "storm", "ledger", "copper", "signal", "tide"]
    weights = [1 / (n + 1) for n in range(len(vocabulary))]
    out = []
    for tick in range(size):
        words = rng.choices(vocabulary, weights, k=rng.randint(1, 24)) + rng.choices(_STOP, k=rng.randint(0, 4))
        rng.shuffle(words)
        out.append(("g", tick, " ".join(words)))
    # Some ticks recorded again later: the earlier episode leaves the index.
    out += [("g", tick, " ".join(rng.choices(vocabulary[:50], k=6))) for tick in rng.sample(range(size), 40)]
    return out + _HAND


def _store(corpus: list[tuple[str, int, str]], observations: int, rng: random.Random) -> EventStore:
    store = open_store("memory://")
    versions: dict[str, int] = {}
    for n, (golem, tick, text) in enumerate(corpus):
        events: list[Event] = [] if golem in versions else [GolemCreated(name=golem)]
        events.append(EpisodeRecorded(episode=Episode(tick=tick, summary=text)))
        if n % (len(corpus) // observations) == 0:
            ticks = tuple(sorted(rng.sample(range(1000), 2)))
            said = text.split()
            thread = f"thread {' '.join(rng.sample(said, min(3, len(said))))}"
            events.append(DreamObservation(cycle_id="c", kind="thread", text=thread, source_episode_ticks=ticks))
        metas = [EventMeta(time=_T0, event_id=f"e{store.head() + i}", golem_id=golem) for i in range(len(events))]
        store.append(golem, versions.get(golem, 0), list(zip(metas, events, strict=True)))
        versions[golem] = versions.get(golem, 0) + len(events)
    return store


def _exhaustive(db: ProjectionDB, golem: str, weights: Mapping[str, float], okapi: Okapi, per_part: int) -> Any:
    """``ProjectionDB.term_top`` as of commit 12ca729, over the ``reference`` table."""
    if not weights or per_part <= 0:
        return []
    real = db.real
    query = ", ".join(f"(CAST(? AS TEXT), CAST(? AS {real}))" for _ in weights)
    sql = (
        f"WITH q (term, w) AS (VALUES {query}), "
        "s AS (SELECT t.doc AS doc, t.part AS part, "
        f"SUM(q.w * t.tf * CAST(? AS {real}) / (t.tf + CAST(? AS {real}) * "
        f"(CAST(? AS {real}) + CAST(? AS {real}) * t.len))) AS score "
        f"FROM {_reference(db)} t JOIN q ON t.term = q.term "
        "WHERE t.projection = ? AND t.golem = ? GROUP BY t.doc, t.part) "
        "SELECT doc, part, score FROM (SELECT doc, part, score, "
        "ROW_NUMBER() OVER (PARTITION BY part ORDER BY score DESC, doc DESC) AS r FROM s) ranked "
        "WHERE r <= ? ORDER BY score DESC, doc DESC"
    )
    k1, b, avgdl = okapi
    params: list[Any] = [v for term, w in sorted(weights.items()) for v in (term, w)]
    params += [k1 + 1, k1, 1 - b, b / avgdl if avgdl > 0 else 0.0, "recall", golem, per_part]
    with db._transaction(commit=False) as c:
        c.execute(db._sql(sql), params)
        return [(int(r["doc"]), int(r["part"]), float(r["score"])) for r in c.fetchall()]


def _reference(db: ProjectionDB) -> str:
    return db.terms_table.replace("oneiros_projection_postings", "reference_terms")


def _fill_reference(db: ProjectionDB) -> None:
    """A row per posting, as the index kept them until issue 38, read from the index's postings."""
    table = _reference(db)
    with db._transaction(commit=True) as c:
        c.execute(
            f"CREATE TABLE {table} (projection TEXT NOT NULL, golem TEXT NOT NULL, term TEXT NOT NULL, "
            "doc BIGINT NOT NULL, tf INTEGER NOT NULL, len INTEGER NOT NULL, part INTEGER NOT NULL, "
            "PRIMARY KEY (projection, golem, term, doc))"
        )
        c.executemany(
            db._sql(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)"),
            [("recall", *p) for p in db.postings("recall")],
        )


def _same_but_for_last_bit_ties(
    deeper: list[tuple[int, int, float]], got: list[tuple[int, int, float]], k: int
) -> None:
    """``got`` is each part's first ``k`` of the exhaustive ranking ``deeper`` (PostgreSQL's), where
    a run of documents whose scores differ only in the last bits is one tie, in the later document
    first. PostgreSQL's hash aggregate summed each document's shares in the order its rows came, so
    two documents of the same terms, lengths and frequencies could differ in the last bit and come
    in either order; the pruned ranking sums every document's shares in one order, so they tie
    exactly and the later one goes first, as the ranking promises."""
    for part in {p for _d, p, _s in deeper}:
        mine = [(d, s) for d, p, s in got if p == part]
        theirs = [(d, s) for d, p, s in deeper if p == part]
        tie, canonical = 0, []
        for n, (doc, score) in enumerate(theirs):
            if n and not math.isclose(score, theirs[n - 1][1], rel_tol=1e-12):
                tie += 1
            canonical.append((tie, -doc))
        canonical.sort()
        assert [-d for _t, d in canonical[: len(mine)]] == [d for d, _s in mine]
        assert len(mine) == min(k, len(theirs))


# PostgreSQL's run of the exhaustive reference takes a minute or two (hash aggregates of every posting).
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def ranked_db(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[ProjectionDB]:
    url = (
        f"sqlite:///{tmp_path}/proj.db"
        if request.param == "sqlite"
        else postgres_url(request.getfixturevalue("pg_schema"))
    )
    db = open_projection_db(url)
    yield db
    db.close()


def test_the_pruned_ranking_is_the_exhaustive_one_on_both_engines(ranked_db: ProjectionDB) -> None:
    """Over 3,000 generated episodes (Zipf words, stop words, repeats; 40 ticks recorded again),
    dream observations and hand cases (ties, repeated terms, a stop-word-only episode, a golem of
    one document), indexed in several commits and some live, each of 150 queries (known, unknown and
    stop words) gives, at each depth, the documents, order and scores the exhaustive SQL gives over
    the same postings; and the postings are what the index must hold (the documents' terms)."""
    rng = random.Random(38)
    corpus = _corpus(rng, 3000)
    store = _store(corpus, 60, rng)
    runner = ProjectionRunner(store, ranked_db, [RecallIndex()], RunnerSettings(batch_events=700))
    head = store.head()
    runner.catch_up(until=head - 50)
    log = list(store.read_all(after=head - 50))
    for start in range(0, len(log), 7):
        runner.take(log[start : start + 7])
    _fill_reference(ranked_db)
    assert ranked_db.position("recall") == head
    sqlite = ranked_db.mark == "?"
    vocabulary = sorted({w for _g, _t, text in corpus for w in text.split()})
    queries = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(100)]
    queries += ["harbor", "copper harbor ledger", "ledger", "the and was", "zzz unknown words", "storm tide"]
    queries += ["w0 w1 w2 w3", "w0", "harbor storm", "w399 w398", "signal"]
    compared = 0
    for golem in ("g", "solo"):
        for query in queries:
            scorer = _Scorer(ranked_db, golem, query, RecallSettings())
            deeper = _exhaustive(ranked_db, golem, scorer.indexed, scorer.okapi(), 300)
            for per_part in (1, 3, 10, 30, 200):
                got = ranked_db.term_top("recall", golem, scorer.indexed, scorer.okapi(), per_part)
                expected = _exhaustive(ranked_db, golem, scorer.indexed, scorer.okapi(), per_part)
                assert [s for *_k, s in expected] == pytest.approx([s for *_k, s in got], rel=1e-9, abs=1e-9)
                if sqlite:
                    assert [(d, p) for d, p, _s in expected] == [(d, p) for d, p, _s in got], (golem, query, per_part)
                else:
                    _same_but_for_last_bit_ties(deeper, got, per_part)
                compared += len(got)
    assert compared > 15_000  # the queries matched something, deep lists included


def test_recall_answers_as_with_the_exhaustive_ranking(
    ranked_db: ProjectionDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall's whole answer (results and related dreams: refs, ranks, relevance, grouped or not)
    is the same with the pruned ranking as with the exhaustive one in its place."""
    rng = random.Random(29)
    corpus = _corpus(rng, 1500)
    store = _store(corpus, 80, rng)
    ProjectionRunner(store, ranked_db, [RecallIndex()], RunnerSettings(batch_events=500)).catch_up()
    _fill_reference(ranked_db)
    vocabulary = sorted({w for _g, _t, text in corpus for w in text.split()})
    queries = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 5))) for _ in range(60)]

    def answers() -> list[Any]:
        out = []
        for query in queries:
            for grouped in (True, False):
                found = recall(ranked_db, [], "g", query, 10, settings=RecallSettings(grouped=grouped))
                out.append([(i.kind, i.ref, i.rank, round(i.relevance, 9), i.source_ticks) for i in found.ranking()])
        return out

    pruned = answers()
    monkeypatch.setattr(ranked_db, "term_top", lambda _p, *args, **_blocks: _exhaustive(ranked_db, *args))
    assert answers() == pruned
    assert sum(len(a) for a in pruned) > 1000


def test_blocks_read_before_a_commit_are_read_again() -> None:
    """A ranking handed the blocks a reader saw before a commit changed them (the open block grew,
    or closed into a block of its own) ranks what the database holds now, as a ranking that reads
    the blocks itself does, rather than what the stale description names."""
    rng = random.Random(7)
    corpus = [("g", tick, "harbor " + " ".join(rng.choices(["storm", "tide", "w1"], k=3))) for tick in range(1500)]
    store = _store(corpus[:1000], 10, rng)
    db = open_projection_db("memory://")
    runner = ProjectionRunner(store, db, [RecallIndex()])
    runner.catch_up()
    scorer = _Scorer(db, "g", "harbor storm", RecallSettings())
    stale = db.term_blocks("recall", "g", ["harbor", "storm"])
    metas = [EventMeta(time=_T0, event_id=f"x{n}", golem_id="g") for n in range(500)]
    episodes = [EpisodeRecorded(episode=Episode(tick=t, summary=text)) for _g, t, text in corpus[1000:]]
    store.append("g", store.head(), list(zip(metas, episodes, strict=True)))
    runner.catch_up()

    fresh = db.term_top("recall", "g", scorer.indexed, scorer.okapi(), 40)
    assert fresh == db.term_top("recall", "g", scorer.indexed, scorer.okapi(), 40, blocks=stale)
    assert max(doc for doc, _part, _score in fresh) > 1000  # the new episodes are among the best


_postings = st.lists(
    st.tuples(st.integers(1, 4), st.integers(1, 30)),  # (tf, len) of one document
    min_size=0,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(
    lists=st.lists(st.tuples(_postings, st.floats(0.01, 9.0), st.integers(1, 8)), min_size=1, max_size=5),
    k=st.integers(1, 12),
    seed=st.integers(0, 2**16),
)
def test_maxscore_finds_the_exhaustive_top_k(
    lists: list[tuple[list[tuple[int, int]], float, int]], k: int, seed: int
) -> None:
    """For any postings of up to five terms (any weights, term frequencies and lengths, cut into
    blocks of any size), MaxScore's top k is the exhaustive top k: the same documents in the same
    order (score, then the later document), with the same scores."""
    rng = random.Random(seed)
    okapi = (2.2, 1.2, 0.25, 0.75 / 12)
    blocks: dict[str, list[BlockInfo]] = {}
    data: dict[tuple[str, int], Any] = {}
    weights: dict[str, float] = {}
    exhaustive: dict[int, list[float]] = {}
    docs_len = {d: rng.randint(1, 30) for d in range(80)}
    for n, (postings, weight, size) in enumerate(lists):
        term = f"t{n}"
        weights[term] = weight
        docs = sorted(rng.sample(range(80), min(len(postings), 80)))
        array = np.zeros(len(docs), dtype=[("doc", "<i8"), ("tf", "<u4"), ("len", "<u4")])
        for i, (doc, (tf, _len)) in enumerate(zip(docs, postings, strict=False)):
            array[i] = (doc, tf, docs_len[doc])
        for start in range(0, len(array), size):
            part = array[start : start + size]
            info = BlockInfo(
                term,
                0,
                int(part["doc"][0]),
                int(part["doc"][0]),
                int(part["doc"][-1]),
                len(part),
                int(part["tf"].max()),
                int(part["len"].min()),
            )
            blocks.setdefault(term, []).append(info)
            data[(term, info.first)] = part
    for term in sorted(weights):
        for block in blocks.get(term, []):
            for doc, tf, length in data[(term, block.first)]:
                share = (
                    weights[term]
                    * float(tf)
                    * okapi[0]
                    / (float(tf) + okapi[1] * (okapi[2] + okapi[3] * float(length)))
                )
                exhaustive.setdefault(int(doc), []).append(share)
    totals = {doc: sum(shares) for doc, shares in exhaustive.items()}
    expected = sorted(totals, key=lambda d: (-totals[d], -d))[:k]

    def load(term: str, chosen: Any) -> Any:
        return np.concatenate([data[(term, b.first)] for b in chosen])

    got = top_k(blocks, weights, okapi, k, load)
    assert expected == [d for d, _s in got]
    assert [totals[d] for d in expected] == pytest.approx([s for _d, s in got], rel=1e-12)
