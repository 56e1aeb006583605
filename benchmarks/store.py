"""Append, replay and append-to-observer latency of the store, against raw drivers in the same run.

    python benchmarks/store.py --events 100000 [--runs 5] [--pg postgresql://postgres@127.0.0.1:5432/test]

Every ratio is ours over a baseline measured in the same run, interleaved round by round, as the
median over rounds of baseline time / our time (1.0 = as fast as the baseline; higher is better).

Appends write the same events in the same batches everywhere: one transaction per golem stream (ten
for the whole load), tables created beforehand, so a ratio measures the store's cost per batch and not
table creation or the number of commits. Baselines, with the same msgspec encoding timed in:
- SQLite: ``sqlite3`` ``executemany`` into the same table shape, the rows made by ``encode_event``
  (``append_batch_vs_raw``: encoded and read back, as the store must to refuse what it could not
  read) or by a bare ``msgspec`` encode of the same bytes (``append_batch_vs_raw_unchecked``; what the
  read-back costs a raw writer is ``raw_checked_vs_raw_unchecked``);
- PostgreSQL: psycopg ``executemany`` and ``COPY ... FROM STDIN`` into the same table shape;
- eventsourcing 9.5's default path (SQLite): an ``Application`` with its JSON transcoder.
Replay baselines: ``SELECT`` of every row plus a typed msgspec decode per row (binary bytea on PostgreSQL);
both sides read through a store or connection opened beforehand, so the read is timed, not the opening.
Append-to-observer: a second process appends one event every few milliseconds while this process
follows the log with :func:`oneiros.fsm._observers.follow_log`; the latency is from just before the append to the
observer's call (CLOCK_MONOTONIC, shared by processes). Two raw baselines: a bare ``NOTIFY`` from
another process to a psycopg ``LISTEN`` (the wake-up alone), and the same path a store must take, an
``INSERT`` + ``NOTIFY`` committed (so its fsync) then a ``SELECT`` and decode of the new rows.
PostgreSQL figures are skipped (and say so) when no server answers.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import socket
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from benchmarks._common import emit, interleaved, median_ratio
from oneiros.events._codec import _Envelope, current_decoder, encode_event, topic_of
from oneiros.events._types import DreamHypothesis, Episode, EpisodeRecorded, Event, EventMeta, GolemCreated, Outcome
from oneiros.fsm._observers import Observers, follow_log
from oneiros.fsm._service import replay
from oneiros.store._store import EventStore, Recorded, open_store

GOLEMS = 10
_ENCODE = msgspec.json.Encoder().encode
T0 = datetime(2026, 1, 1, tzinfo=UTC)
Items = dict[str, list[tuple[EventMeta, Event]]]
Rows = list[tuple[str, int, str, bytes]]


def make_items(n: int) -> Items:
    """``n`` events over ten golems: mostly episodes, one hypothesis in five."""
    per: Items = {f"g{i}": [] for i in range(GOLEMS)}
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


def encoded_batches(items: Items) -> list[Rows]:
    """The rows of each golem's batch, encoded the way the store encodes them."""
    return [
        [(golem, version, *encode_event(meta, ev)) for version, (meta, ev) in enumerate(evs, start=1)]
        for golem, evs in items.items()
    ]


def plain_batches(items: Items) -> list[Rows]:
    """The same rows as :func:`encoded_batches`, byte for byte, encoded without reading them back
    (the check by which the store refuses an event it could not read)."""
    return [
        [
            (golem, version, topic_of(type(ev)), _ENCODE(_Envelope(meta, ev)))
            for version, (meta, ev) in enumerate(evs, start=1)
        ]
        for golem, evs in items.items()
    ]


def decode_all(rows: list[tuple[str, bytes]]) -> int:
    """The strongest plain reader: a typed decoder per topic, one decode per row."""
    decoders: dict[str, Any] = {}
    for topic, state in rows:
        decoder = decoders.get(topic)
        if decoder is None:
            decoder = decoders[topic] = current_decoder(topic)
        decoder.decode(state)
    return len(rows)


# -- SQLite ---------------------------------------------------------------------------------------

SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS ev (originator_id TEXT, originator_version INTEGER, topic TEXT, state BLOB, "
    "PRIMARY KEY (originator_id, originator_version))"
)


def sqlite_raw_create(path: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(SQLITE_TABLE)
    conn.close()


def sqlite_raw_append(path: str, items: Items, encode: Callable[[Items], list[Rows]] = encoded_batches) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for rows in encode(items):
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO ev VALUES (?,?,?,?)", rows)
        conn.execute("COMMIT")
    conn.close()


def sqlite_raw_one_per_tx(path: str, rows: Rows) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for row in rows:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO ev VALUES (?,?,?,?)", row)
        conn.execute("COMMIT")
    conn.close()


def sqlite_raw_replay(conn: sqlite3.Connection) -> int:
    return decode_all(conn.execute("SELECT topic, state FROM ev ORDER BY rowid").fetchall())


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


def append_all(store: EventStore, items: Items) -> None:
    for golem, evs in items.items():
        store.append(golem, 0, evs)


def read_all(store: EventStore) -> None:
    for _ in store.read_all():
        pass


class Slot:
    """A store opened by a variant's set-up and closed by the next one (or at the end)."""

    def __init__(self) -> None:
        self.store: EventStore | None = None

    def open(self, url: str) -> None:
        self.close()
        self.store = open_store(url)
        self.store.head()  # connected and tables created before the clock starts

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None


def sqlite_figures(n: int, runs: int, n_tx: int, tmp: str) -> dict[str, Any]:
    counter = iter(range(10**9))

    def fresh() -> str:
        return os.path.join(tmp, f"db{next(counter)}.sqlite")

    items = make_items(n)
    paths: dict[str, str] = {}
    ours, ours_tx = Slot(), Slot()

    def raw_setup(key: str) -> Callable[[], None]:
        def setup() -> None:
            paths[key] = fresh()
            sqlite_raw_create(paths[key])

        return setup

    def ours_setup(slot: Slot) -> Callable[[], None]:
        return lambda: slot.open(f"sqlite:///{fresh()}")

    def es_setup(key: str) -> Callable[[], None]:
        def setup() -> None:
            paths[key] = fresh()

        return setup

    ours_url = f"sqlite:///{paths.setdefault('replay', fresh())}"
    with open_store(ours_url) as seeded:
        append_all(seeded, items)
    sqlite_raw_create(paths["replay"] + ".raw")
    sqlite_raw_append(paths["replay"] + ".raw", items)
    paths["es_id"] = es_append(paths.setdefault("es_replay", fresh()), n, False)

    small = {g: evs[: n_tx // GOLEMS] for g, evs in items.items()}
    small_rows = [row for rows in encoded_batches(small) for row in rows]

    # Replays read through a store (or connection) opened beforehand: the read is timed, not the opening.
    reader = open_store(ours_url)
    raw_reader = sqlite3.connect(paths["replay"] + ".raw")

    def ours_per_tx() -> None:
        assert ours_tx.store is not None
        for golem, evs in small.items():
            for version, item in enumerate(evs):
                ours_tx.store.append(golem, version, [item])

    def ours_batch() -> None:
        assert ours.store is not None
        append_all(ours.store, items)

    cpu: dict[str, list[float]] = {}
    t = interleaved(
        {
            "raw_batch": (lambda: sqlite_raw_append(paths["raw"], items), raw_setup("raw")),
            "raw_batch_plain": (
                lambda: sqlite_raw_append(paths["raw_plain"], items, plain_batches),
                raw_setup("raw_plain"),
            ),
            "ours_batch": (ours_batch, ours_setup(ours)),
            "es_batch": (lambda: es_append(paths["es"], n, False), es_setup("es")),
            "raw_tx": (lambda: sqlite_raw_one_per_tx(paths["raw_tx"], small_rows), raw_setup("raw_tx")),
            "ours_tx": (ours_per_tx, ours_setup(ours_tx)),
            "es_tx": (lambda: es_append(paths["es_tx"], len(small_rows), True), es_setup("es_tx")),
            "raw_replay": (lambda: sqlite_raw_replay(raw_reader), None),
            "ours_read": (lambda: read_all(reader), None),
            "ours_fold": (lambda: replay(reader), None),
            "es_replay": (lambda: es_replay(paths["es_replay"], paths["es_id"]), None),
        },
        runs,
        cpu,
    )
    ours.close()
    ours_tx.close()
    reader.close()
    raw_reader.close()

    def rate(count: int, key: str) -> int:
        return round(count / statistics.median(t[key]))

    return {
        "append_batch_events_per_s": rate(n, "ours_batch"),
        "append_batch_raw_events_per_s": rate(n, "raw_batch"),
        "append_batch_es_default_events_per_s": rate(n, "es_batch"),
        "append_batch_vs_raw": median_ratio(t["raw_batch"], t["ours_batch"]),
        "append_batch_vs_raw_unchecked": median_ratio(t["raw_batch_plain"], t["ours_batch"]),
        # The same ratios in CPU time of this process: steadier on a shared machine, disk waits left out.
        "append_batch_cpu_vs_raw": median_ratio(cpu["raw_batch"], cpu["ours_batch"]),
        "append_batch_cpu_vs_raw_unchecked": median_ratio(cpu["raw_batch_plain"], cpu["ours_batch"]),
        "replay_cpu_vs_raw": median_ratio(cpu["raw_replay"], cpu["ours_read"]),
        "raw_checked_vs_raw_unchecked": median_ratio(t["raw_batch_plain"], t["raw_batch"]),
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
    }


# -- PostgreSQL -----------------------------------------------------------------------------------


def pg_conninfo(url: str) -> str:
    split = urlsplit(url)
    return (
        f"host={split.hostname or '127.0.0.1'} port={split.port or 5432} "
        f"dbname={split.path.lstrip('/')} user={split.username or 'postgres'}"
        + (f" password={split.password}" if split.password else "")
    )


def pg_reachable(url: str) -> bool:
    split = urlsplit(url)
    try:
        with socket.create_connection((split.hostname or "127.0.0.1", split.port or 5432), timeout=1):
            return True
    except OSError:
        return False


class Schemas:
    """Fresh schemas for one run, all dropped at the end."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url
        self.conn = psycopg.connect(pg_conninfo(url), autocommit=True)
        self.made: list[str] = []

    def fresh(self) -> str:
        name = f"bench_{uuid.uuid4().hex[:10]}"
        self.conn.execute(f'CREATE SCHEMA "{name}"')
        self.made.append(name)
        return name

    def store_url(self, schema: str) -> str:
        return f"{self.url}?schema={schema}"

    def drop_all(self) -> None:
        for name in self.made:
            self.conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        self.conn.close()


PG_TABLE = (
    'CREATE TABLE "{s}".ev (originator_id text NOT NULL, originator_version bigint NOT NULL, topic text, '
    "state bytea, notification_id bigserial, PRIMARY KEY (originator_id, originator_version)); "
    'CREATE UNIQUE INDEX ON "{s}".ev (notification_id)'
)


def pg_raw_append(url: str, schema: str, items: Items, copy: bool) -> None:
    import psycopg

    with psycopg.connect(pg_conninfo(url)) as conn:
        for rows in encoded_batches(items):
            with conn.transaction(), conn.cursor() as cur:
                if copy:
                    with cur.copy(
                        f'COPY "{schema}".ev (originator_id, originator_version, topic, state) FROM STDIN'
                    ) as out:
                        for row in rows:
                            out.write_row(row)
                else:
                    cur.executemany(
                        f'INSERT INTO "{schema}".ev (originator_id, originator_version, topic, state) '
                        "VALUES (%s, %s, %s, %s)",
                        rows,
                    )


def pg_raw_replay(conn: Any, schema: str) -> int:
    with conn.cursor(binary=True) as cur:
        cur.execute(f'SELECT topic, state FROM "{schema}".ev ORDER BY notification_id')
        return decode_all(cur.fetchall())


def pg_figures(n: int, runs: int, url: str) -> dict[str, Any]:
    import psycopg

    items = make_items(n)
    schemas = Schemas(url)
    try:
        names: dict[str, str] = {}
        ours = Slot()

        def raw_setup(key: str) -> Callable[[], None]:
            def setup() -> None:
                names[key] = schemas.fresh()
                with psycopg.connect(pg_conninfo(url), autocommit=True) as conn:
                    conn.execute(PG_TABLE.format(s=names[key]))

            return setup

        def ours_setup() -> None:
            ours.open(schemas.store_url(schemas.fresh()))

        def ours_batch() -> None:
            assert ours.store is not None
            append_all(ours.store, items)

        replay_url = schemas.store_url(schemas.fresh())
        with open_store(replay_url) as seeded:
            append_all(seeded, items)
        raw_setup("replay")()
        pg_raw_append(url, names["replay"], items, copy=True)
        reader = open_store(replay_url)
        raw_reader = psycopg.connect(pg_conninfo(url), autocommit=True)

        t = interleaved(
            {
                "raw_executemany": (lambda: pg_raw_append(url, names["em"], items, False), raw_setup("em")),
                "raw_copy": (lambda: pg_raw_append(url, names["copy"], items, True), raw_setup("copy")),
                "ours_batch": (ours_batch, ours_setup),
                "raw_replay": (lambda: pg_raw_replay(raw_reader, names["replay"]), None),
                "ours_read": (lambda: read_all(reader), None),
            },
            runs,
        )
        ours.close()
        reader.close()
        raw_reader.close()
        observer = observer_latency(url, schemas)
    finally:
        schemas.drop_all()

    def rate(key: str) -> int:
        return round(n / statistics.median(t[key]))

    return {
        "pg_append_batch_events_per_s": rate("ours_batch"),
        "pg_append_executemany_events_per_s": rate("raw_executemany"),
        "pg_append_copy_events_per_s": rate("raw_copy"),
        "pg_append_vs_executemany": median_ratio(t["raw_executemany"], t["ours_batch"]),
        "pg_append_vs_copy": median_ratio(t["raw_copy"], t["ours_batch"]),
        "pg_replay_events_per_s": rate("ours_read"),
        "pg_replay_vs_raw": median_ratio(t["raw_replay"], t["ours_read"]),
        **observer,
    }


# -- append to observer, across processes ---------------------------------------------------------

SAMPLES = 300  # over all rounds
GAP_S = 0.005


def _ours_writer(url: str, ready: Any, go: Any, samples: int) -> None:
    store = open_store(url)
    store.append("w", 0, [(EventMeta(time=T0, event_id="0", golem_id="w"), GolemCreated(name="w"))])
    ready.set()
    go.wait()
    for version in range(1, samples + 1):
        time.sleep(GAP_S)
        sent = time.monotonic()
        meta = EventMeta(time=T0, event_id=repr(sent), golem_id="w")
        store.append("w", version, [(meta, EpisodeRecorded(episode=Episode(tick=version, summary="s")))])
    store.close()


def _raw_writer(conninfo: str, schema: str, ready: Any, go: Any, samples: int) -> None:
    """NOTIFY alone (``schema`` empty), or INSERT + NOTIFY + COMMIT as a store must (the fsync included)."""
    import psycopg

    meta = EventMeta(time=T0, event_id="0", golem_id="w")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        ready.set()
        go.wait()
        for version in range(1, samples + 1):
            time.sleep(GAP_S)
            sent = repr(time.monotonic())
            if not schema:
                conn.execute(f"NOTIFY bench_raw, '{sent}'")
                continue
            topic, state = encode_event(meta, EpisodeRecorded(episode=Episode(tick=version, summary="s")))
            with conn.transaction():
                conn.execute(
                    f'INSERT INTO "{schema}".ev (originator_id, originator_version, topic, state) '
                    "VALUES (%s, %s, %s, %s)",
                    ("w", version, topic, state),
                )
                conn.execute(f"NOTIFY bench_raw, '{sent}'")


def _raw_listen(conninfo: str, schema: str, samples: int) -> list[float]:
    """Latencies of the raw path: LISTEN, and for inserts the SELECT and decode of the new rows."""
    import psycopg

    ctx = mp.get_context("spawn")
    latencies: list[float] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("LISTEN bench_raw")
        ready, go = ctx.Event(), ctx.Event()
        writer = ctx.Process(target=_raw_writer, args=(conninfo, schema, ready, go, samples))
        writer.start()
        ready.wait(60)
        go.set()
        last = 0
        with psycopg.connect(conninfo, autocommit=True) as reader:
            for note in conn.notifies(timeout=30, stop_after=samples):
                if schema:
                    with reader.cursor(binary=True) as cur:
                        cur.execute(
                            f'SELECT notification_id, topic, state FROM "{schema}".ev WHERE notification_id > %s '
                            "ORDER BY notification_id",
                            (last,),
                        )
                        rows = cur.fetchall()
                    decode_all([(topic, state) for _, topic, state in rows])
                    last = rows[-1][0] if rows else last
                latencies.append(time.monotonic() - float(note.payload))
        writer.join(60)
    return latencies


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _ours_latencies(store_url: str, samples: int) -> list[float]:
    """Latencies of :func:`follow_log` on a store in ``store_url``'s fresh schema, from another process."""
    ctx = mp.get_context("spawn")
    ours: list[float] = []
    stop = threading.Event()
    store = open_store(store_url)
    observers = Observers()

    def seen(record: Recorded) -> None:
        ours.append(time.monotonic() - float(record.meta.event_id))
        if len(ours) == samples:
            stop.set()

    observers.on_event(EpisodeRecorded, seen)
    ready, go = ctx.Event(), ctx.Event()
    writer = ctx.Process(target=_ours_writer, args=(store_url, ready, go, samples))
    writer.start()
    ready.wait(60)
    follower = threading.Thread(target=follow_log, args=(store, observers, stop), kwargs={"after": 0})
    follower.start()
    time.sleep(0.3)  # the follower is listening before the first timed append
    go.set()
    follower.join(60)
    stop.set()
    writer.join(60)
    store.close()
    return ours


def observer_latency(url: str, schemas: Schemas, rounds: int = 3) -> dict[str, Any]:
    """Rounds of ours, the bare LISTEN and the raw INSERT + LISTEN in turn, so that a busy disk (the
    commit's fsync is most of each figure) weighs on all three alike; ``pg_observer_vs_raw_insert``
    is the median over rounds of the raw p50 over ours (1.0 = as fast as the raw path)."""
    import psycopg

    conninfo = pg_conninfo(url)
    per_round = SAMPLES // rounds
    ours: list[list[float]] = []
    raw: list[list[float]] = []
    raw_insert: list[list[float]] = []
    for _ in range(rounds):
        ours.append(_ours_latencies(schemas.store_url(schemas.fresh()), per_round))
        raw.append(_raw_listen(conninfo, "", per_round))
        insert_schema = schemas.fresh()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(PG_TABLE.format(s=insert_schema))
        raw_insert.append(_raw_listen(conninfo, insert_schema, per_round))

    def pooled(runs: list[list[float]]) -> list[float]:
        return [x for run in runs for x in run]

    ratios = [statistics.median(r) / statistics.median(o) for o, r in zip(ours, raw_insert, strict=True) if o and r]
    return {
        "pg_observer_samples": len(pooled(ours)),
        "pg_observer_rounds": rounds,
        "pg_observer_p50_ms": _p(pooled(ours), 0.5) if pooled(ours) else None,
        "pg_observer_p95_ms": _p(pooled(ours), 0.95) if pooled(ours) else None,
        "pg_raw_listen_p50_ms": _p(pooled(raw), 0.5) if pooled(raw) else None,
        "pg_raw_listen_p95_ms": _p(pooled(raw), 0.95) if pooled(raw) else None,
        "pg_raw_insert_listen_p50_ms": _p(pooled(raw_insert), 0.5) if pooled(raw_insert) else None,
        "pg_raw_insert_listen_p95_ms": _p(pooled(raw_insert), 0.95) if pooled(raw_insert) else None,
        "pg_observer_vs_raw_insert": round(statistics.median(ratios), 3) if ratios else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--per-tx-events", type=int, default=2_000, help="events for the one-per-transaction runs")
    parser.add_argument("--pg", default=os.environ.get("ONEIROS_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--observer-only", action="store_true", help="only the PostgreSQL append-to-observer figures")
    args = parser.parse_args()
    if args.observer_only:
        schemas = Schemas(args.pg)
        try:
            figures = observer_latency(args.pg, schemas)
            emit({**figures, "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        finally:
            schemas.drop_all()
        return
    n, runs, n_tx = args.events, args.runs, min(args.per_tx_events, args.events)
    figures: dict[str, Any] = {"events": n, "runs": runs}
    tmp = tempfile.mkdtemp(prefix="oneiros-bench-")
    try:
        if not args.skip_sqlite:
            figures.update(sqlite_figures(n, runs, n_tx, tmp))
            print(json.dumps(figures, sort_keys=True), file=sys.stderr, flush=True)  # progress, if PG fails
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.skip_pg:
        figures["pg"] = "skipped (--skip-pg)"
    elif not pg_reachable(args.pg):
        figures["pg"] = f"skipped: no PostgreSQL at {urlsplit(args.pg).netloc}"
    else:
        figures.update(pg_figures(n, runs, args.pg))
    figures["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    emit(figures)


if __name__ == "__main__":
    main()
