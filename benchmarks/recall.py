"""Recall's query latency over a golem of many episodes, against a raw SQLite FTS5 query.

For each size N (default 20 000, small enough for CI; issue 38 measured 100 000, 300 000 and
1 000 000), a golem records N episodes of 12 words each, drawn from a 5 000-word vocabulary by a
Zipf law (as words are used), with a speaker each; the recall projection is caught up into a SQLite
projection database. Then each of Q questions of five words is asked three ways, back to back, in
``--runs`` rounds; each figure is the median over a round's questions, then the median of the rounds:

* ``recall_ms``: :func:`~oneiros.projections._recall.recall` as the REST route asks it (terms, document
  counts, the BM25 top k over the postings' blocks, the items' rows, staged entries, MEMORY.md);
* ``term_top_ms``: the ranking alone (``ProjectionDB.term_top``, at the depth recall asks: 30);
* ``raw_fts5_ms``: SQLite's own full-text index over the same texts (``porter unicode61``),
  ``ORDER BY bm25() LIMIT 10``: what a textbook retriever in the same database costs.

``recall_vs_raw_fts5`` is ``recall_ms / raw_fts5_ms`` (issue 38: at most 1.0). ``catch_up_s`` is the
time the projection took to index the N episodes (one run), ``catch_up_episodes_per_s`` the same as
a rate (issue 38: at least 20 000); ``catch_up_cpu_s`` and ``catch_up_episodes_per_cpu_s`` count the
process's own CPU time only, which other work on a shared machine does not stretch. ``load`` is the
machine's 1-minute load average before and after each size. Usage: ``python benchmarks/recall.py
[--episodes N [N ...]] [--queries Q] [--runs R]``; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
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


def measure(episodes: int, queries: int, runs: int) -> dict[str, object]:
    """The figures of one size."""
    load_before = os.getloadavg()[0]
    rng = random.Random(29)
    vocabulary = _vocabulary(rng, 5_000)
    weights = [1 / (n + 1) for n in range(len(vocabulary))]

    def words(n: int) -> list[str]:
        return rng.choices(vocabulary, weights, k=n)

    texts = [" ".join(words(12)) for _ in range(episodes)]
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
        del events
        db = open_projection_db(f"sqlite:///{scratch}/events.projections.db")
        started, cpu = time.perf_counter(), time.process_time()
        ProjectionRunner(store, db, [RecallIndex()]).catch_up()
        catch_up, catch_up_cpu = time.perf_counter() - started, time.process_time() - cpu

        raw = sqlite3.connect(Path(scratch) / "fts.db")
        raw.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        raw.executemany(
            "INSERT INTO t (rowid, body) VALUES (?, ?)",
            ((n, f"{('Ana', 'Ben')[n % 2]}: {text}") for n, text in enumerate(texts)),
        )
        raw.commit()

        questions = [" ".join(words(5)) for _ in range(queries)]
        rounds: dict[str, list[float]] = {"recall": [], "term_top": [], "raw_fts5": []}
        settings = _RecallSettings()
        for _round in range(runs):
            timings: dict[str, list[float]] = {"recall": [], "term_top": [], "raw_fts5": []}
            for question in questions:
                t0 = time.perf_counter()
                found = recall(db, [], "g", question, 10)
                t1 = time.perf_counter()
                scorer = _Scorer(db, "g", question, settings)
                t2 = time.perf_counter()
                db.term_top("recall", "g", scorer.indexed, Okapi(settings.k1, settings.b, scorer.avgdl), 30)
                t3 = time.perf_counter()
                match = " OR ".join(f'"{w}"' for w in dict.fromkeys(question.split()))
                raw.execute(
                    "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,)
                ).fetchall()
                t4 = time.perf_counter()
                timings["recall"].append(t1 - t0)
                timings["term_top"].append(t3 - t2)
                timings["raw_fts5"].append(t4 - t3)
                assert found.results, question
            for name, values in timings.items():
                rounds[name].append(statistics.median(values))
        raw.close()
        db.close()
        store.close()
    ms = {name: round(statistics.median(v) * 1000, 3) for name, v in rounds.items()}
    return {
        "episodes": episodes,
        "queries": queries,
        "runs": runs,
        "catch_up_s": round(catch_up, 2),
        "catch_up_episodes_per_s": round(episodes / catch_up),
        # On a shared machine the wall clock counts other processes' turns; this is the process's own.
        "catch_up_cpu_s": round(catch_up_cpu, 2),
        "catch_up_episodes_per_cpu_s": round(episodes / catch_up_cpu),
        "recall_ms": ms["recall"],
        "term_top_ms": ms["term_top"],
        "raw_fts5_ms": ms["raw_fts5"],
        "recall_vs_raw_fts5": round(ms["recall"] / ms["raw_fts5"], 3),
        "term_top_vs_raw_fts5": round(ms["term_top"] / ms["raw_fts5"], 3),
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = []
    for episodes in args.episodes:
        figures = measure(episodes, args.queries, args.runs)
        print(json.dumps(figures), flush=True)
        sizes.append(figures)
    print(json.dumps({"sizes": sizes}))


if __name__ == "__main__":
    main()
