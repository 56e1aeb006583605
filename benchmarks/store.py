"""Append and replay throughput of the SQLite store against raw sqlite3 and eventsourcing's defaults.

    python benchmarks/store.py --events 100000 [--runs 3]

Baselines, measured in the same run on the same machine:
- raw sqlite3: the same table shape, the same msgspec-encoded rows, ``executemany`` in one transaction
  (append) and ``SELECT`` plus a typed msgspec decode of every row (replay);
- eventsourcing 9.5's default path: an ``Application`` on SQLite with its JSON transcoder, saving an
  aggregate's events and getting the aggregate back from its repository.
Ratios are ours over the baseline's throughput (1.0 = as fast as raw); higher is better.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from benchmarks._common import emit, interleaved, median_ratio
from oneiros.events import (
    DreamHypothesis,
    Episode,
    EpisodeRecorded,
    Event,
    EventMeta,
    Outcome,
    encode_event,
    open_store,
)
from oneiros.events._codec import current_decoder
from oneiros.fsm import replay

GOLEMS = 10
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_items(n: int) -> dict[str, list[tuple[EventMeta, Event]]]:
    """``n`` events over ten golems: mostly episodes, one hypothesis in five."""
    per: dict[str, list[tuple[EventMeta, Event]]] = {f"g{i}": [] for i in range(GOLEMS)}
    for i in range(n):
        golem = f"g{i % GOLEMS}"
        meta = EventMeta(time=T0 + timedelta(seconds=i), event_id=f"e{i}", golem_id=golem, correlation_id="c")
        ev: Event
        if i % 5 == 4:
            ev = DreamHypothesis(cycle_id="c", hypothesis=f"if momentum holds then {i} follows", seed_episode_tick=i)
        else:
            ev = EpisodeRecorded(
                episode=Episode(
                    tick=i,
                    summary=f"episode {i}: bought at range floor",
                    tags=("eth", "range"),
                    regime="ranging",
                    outcome=Outcome(surprise=0.2, pnl=0.01),
                )
            )
        per[golem].append((meta, ev))
    return per


def raw_append(path: str, rows: list[tuple[str, int, str, bytes]]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS ev (originator_id TEXT, originator_version INTEGER, topic TEXT, state BLOB, "
        "PRIMARY KEY (originator_id, originator_version))"
    )
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO ev VALUES (?,?,?,?)", rows)
    conn.execute("COMMIT")
    conn.close()


def raw_append_encoding(path: str, items: dict[str, list[tuple[EventMeta, Event]]]) -> None:
    rows = []
    for golem, evs in items.items():
        for version, (meta, ev) in enumerate(evs, start=1):
            topic, state = encode_event(meta, ev)
            rows.append((golem, version, topic, state))
    raw_append(path, rows)


def raw_append_one_per_tx(path: str, rows: list[tuple[str, int, str, bytes]]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS ev (originator_id TEXT, originator_version INTEGER, topic TEXT, state BLOB, "
        "PRIMARY KEY (originator_id, originator_version))"
    )
    for row in rows:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO ev VALUES (?,?,?,?)", row)
        conn.execute("COMMIT")
    conn.close()


def raw_replay(path: str) -> int:
    conn = sqlite3.connect(path)
    decoders: dict[str, msgspec.json.Decoder[object]] = {}
    count = 0
    for topic, state in conn.execute("SELECT topic, state FROM ev ORDER BY rowid"):
        decoder = decoders.get(topic)
        if decoder is None:
            # The strongest plain baseline: a typed decoder per topic, as a hand-written reader would use.
            decoder = decoders[topic] = current_decoder(topic)
        decoder.decode(state)
        count += 1
    conn.close()
    return count


class Noted(Aggregate):
    @event("Created")
    def __init__(self, name: str) -> None:
        self.name = name
        self.notes = 0

    @event("Noted")
    def note(self, episode: dict[str, object]) -> None:
        self.notes += 1


def es_app(path: str) -> Application:
    return Application(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path})


def es_append(path: str, n: int, per_tx: bool) -> str:
    app = es_app(path)
    agg = Noted(name="g")
    for i in range(n - 1):
        agg.note({"tick": i, "summary": f"episode {i}: bought at range floor", "tags": ["eth", "range"], "pnl": 0.01})
        if per_tx:
            app.save(agg)
    app.save(agg)
    agg_id = str(agg.id)
    app.close()
    return agg_id


def es_replay(path: str, agg_id: str) -> None:
    from uuid import UUID

    app = es_app(path)
    app.repository.get(UUID(agg_id))
    app.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--per-tx-events", type=int, default=2_000, help="events for the one-per-transaction runs")
    args = parser.parse_args()
    n, runs, n_tx = args.events, args.runs, min(args.per_tx_events, args.events)
    tmp = tempfile.mkdtemp(prefix="oneiros-bench-")
    counter = iter(range(10**9))

    def fresh() -> str:
        return os.path.join(tmp, f"db{next(counter)}.sqlite")

    items = make_items(n)
    encoded = [(g, v, *encode_event(m, e)) for g, evs in items.items() for v, (m, e) in enumerate(evs, start=1)]
    paths: dict[str, str] = {}

    def reset(key: str) -> None:
        paths[key] = fresh()

    # -- append, batched: one transaction per golem stream (ten transactions for the whole load) --
    def ours_batch() -> None:
        store = open_store(f"sqlite:///{paths['ours']}")
        for golem, evs in items.items():
            store.append(golem, 0, evs)
        store.close()

    ours_url = f"sqlite:///{paths.setdefault('replay', fresh())}"
    seeded = open_store(ours_url)
    for golem, evs in items.items():
        seeded.append(golem, 0, evs)
    seeded.close()
    raw_append(paths["replay"] + ".raw", encoded)
    paths["es_id"] = es_append(paths.setdefault("es_replay", fresh()), n, False)

    # -- append, one event per transaction --
    small = {g: evs[: n_tx // GOLEMS] for g, evs in items.items()}
    small_rows = [(g, v, *encode_event(m, e)) for g, evs in small.items() for v, (m, e) in enumerate(evs, start=1)]

    def ours_per_tx() -> None:
        store = open_store(f"sqlite:///{paths['ours_tx']}")
        for golem, evs in small.items():
            for version, item in enumerate(evs):
                store.append(golem, version, [item])
        store.close()

    def ours_read() -> None:
        store = open_store(ours_url)
        for _ in store.read_all():
            pass
        store.close()

    def ours_fold() -> None:
        store = open_store(ours_url)
        replay(store)
        store.close()

    t = interleaved(
        {
            "raw_batch": (lambda: raw_append_encoding(paths["raw"], items), lambda: reset("raw")),
            "ours_batch": (ours_batch, lambda: reset("ours")),
            "es_batch": (lambda: es_append(paths["es"], n, False), lambda: reset("es")),
            "raw_tx": (lambda: raw_append_one_per_tx(paths["raw_tx"], small_rows), lambda: reset("raw_tx")),
            "ours_tx": (ours_per_tx, lambda: reset("ours_tx")),
            "es_tx": (lambda: es_append(paths["es_tx"], len(small_rows), True), lambda: reset("es_tx")),
            "raw_replay": (lambda: raw_replay(paths["replay"] + ".raw"), None),
            "ours_read": (ours_read, None),
            "ours_fold": (ours_fold, None),
            "es_replay": (lambda: es_replay(paths["es_replay"], paths["es_id"]), None),
        },
        runs,
    )
    shutil.rmtree(tmp, ignore_errors=True)

    def rate(count: int, key: str) -> int:
        return round(count / statistics.median(t[key]))

    figures = {
        "events": n,
        "runs": runs,
        "append_batch_events_per_s": rate(n, "ours_batch"),
        "append_batch_raw_events_per_s": rate(n, "raw_batch"),
        "append_batch_es_default_events_per_s": rate(n, "es_batch"),
        "append_batch_vs_raw": median_ratio(t["raw_batch"], t["ours_batch"]),
        "append_batch_vs_es_default": median_ratio(t["es_batch"], t["ours_batch"]),
        "append_per_tx_events": n_tx,
        "append_per_tx_events_per_s": rate(n_tx, "ours_tx"),
        "append_per_tx_vs_raw": median_ratio(t["raw_tx"], t["ours_tx"]),
        "append_per_tx_vs_es_default": median_ratio(t["es_tx"], t["ours_tx"]),
        "replay_events_per_s": rate(n, "ours_read"),
        "replay_vs_raw": median_ratio(t["raw_replay"], t["ours_read"]),
        "replay_fold_events_per_s": rate(n, "ours_fold"),
        "replay_fold_vs_raw": median_ratio(t["raw_replay"], t["ours_fold"]),
        "replay_vs_es_default": median_ratio(t["es_replay"], t["ours_fold"]),
        "es_default_append_vs_raw": median_ratio(t["raw_batch"], t["es_batch"]),
        "es_default_replay_vs_raw": median_ratio(t["raw_replay"], t["es_replay"]),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    emit(figures)


if __name__ == "__main__":
    main()
