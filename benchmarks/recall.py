"""Recall's query latency over a golem of many episodes, against a raw SQLite FTS5 query.

A golem records N episodes (default 100 000) of 12 words each, drawn from a 5 000-word vocabulary
by a Zipf law (as words are used), with a speaker each; the recall projection is caught up into a
SQLite projection database. Then each of Q questions of five words is asked three ways, back to
back, and the median milliseconds of each are reported:

* ``recall_ms``: :func:`~oneiros.projections._recall.recall` as the REST route asks it (terms, document
  counts, the BM25 query over the postings table, the items' rows, staged entries, MEMORY.md);
* ``term_top_ms``: the postings query alone (``ProjectionDB.term_top``);
* ``raw_fts5_ms``: SQLite's own full-text index over the same texts (``porter unicode61``),
  ``ORDER BY bm25() LIMIT 10``: what a textbook retriever in the same database costs.

``recall_vs_raw_fts5`` is ``recall_ms / raw_fts5_ms``. ``catch_up_s`` is the time the projection took
to index the N episodes. Usage: ``python benchmarks/recall.py [--episodes N] [--queries Q]``; the
last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from oneiros.events._types import Episode, EpisodeRecorded, Event, EventMeta, GolemCreated
from oneiros.projections._db import Okapi, open_projection_db
from oneiros.projections._recall import RecallIndex, _Scorer, recall
from oneiros.projections._recall import RecallSettings as _RecallSettings
from oneiros.projections._runner import ProjectionRunner
from oneiros.store._store import open_store

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(29)
    vocabulary = _vocabulary(rng, 5_000)
    weights = [1 / (n + 1) for n in range(len(vocabulary))]

    def words(n: int) -> list[str]:
        return rng.choices(vocabulary, weights, k=n)

    texts = [" ".join(words(12)) for _ in range(args.episodes)]
    with tempfile.TemporaryDirectory() as scratch:
        store = open_store(f"sqlite:///{scratch}/events.db")
        events: list[Event] = [GolemCreated(name="g")]
        events += [
            EpisodeRecorded(episode=Episode(tick=n, summary=t, speaker=("Ana", "Ben")[n % 2]))
            for n, t in enumerate(texts)
        ]
        for start in range(0, len(events), 10_000):
            chunk = events[start : start + 10_000]
            metas = [EventMeta(time=_T0, event_id=f"e{start + i}", golem_id="g") for i in range(len(chunk))]
            store.append("g", start, list(zip(metas, chunk, strict=True)))
        db = open_projection_db(f"sqlite:///{scratch}/events.projections.db")
        started = time.perf_counter()
        ProjectionRunner(store, db, [RecallIndex()]).catch_up()
        catch_up = time.perf_counter() - started

        raw = sqlite3.connect(Path(scratch) / "fts.db")
        raw.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        raw.executemany(
            "INSERT INTO t (rowid, body) VALUES (?, ?)",
            ((n, f"{('Ana', 'Ben')[n % 2]}: {text}") for n, text in enumerate(texts)),
        )
        raw.commit()

        questions = [" ".join(words(5)) for _ in range(args.queries)]
        timings: dict[str, list[float]] = {"recall": [], "term_top": [], "raw_fts5": []}
        settings = _RecallSettings()
        for question in questions:
            t0 = time.perf_counter()
            found = recall(db, [], "g", question, 10)
            t1 = time.perf_counter()
            scorer = _Scorer(db, "g", question, settings)
            t2 = time.perf_counter()
            db.term_top("recall", "g", scorer.indexed, Okapi(settings.k1, settings.b, scorer.avgdl), 10)
            t3 = time.perf_counter()
            match = " OR ".join(f'"{w}"' for w in dict.fromkeys(question.split()))
            raw.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,)).fetchall()
            t4 = time.perf_counter()
            timings["recall"].append(t1 - t0)
            timings["term_top"].append(t3 - t2)
            timings["raw_fts5"].append(t4 - t3)
            assert found.results, question
        raw.close()
        db.close()
        store.close()
    ms = {name: round(statistics.median(v) * 1000, 3) for name, v in timings.items()}
    print(
        json.dumps(
            {
                "episodes": args.episodes,
                "queries": args.queries,
                "catch_up_s": round(catch_up, 2),
                "recall_ms": ms["recall"],
                "term_top_ms": ms["term_top"],
                "raw_fts5_ms": ms["raw_fts5"],
                "recall_vs_raw_fts5": round(ms["recall"] / ms["raw_fts5"], 2),
                "term_top_vs_raw_fts5": round(ms["term_top"] / ms["raw_fts5"], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
