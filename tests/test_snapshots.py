"""Snapshots beside the log: any cut point gives the state a full fold gives, and a damaged, foreign
or stale snapshot is noticed and ignored."""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.events._types import EpisodeRecorded, Event
from oneiros.runtime._golem_log import GolemLog, GolemLogs
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.settings._runtime import SnapshotSettings
from oneiros.store._snapshots import read_stream_paged, seal, unseal
from oneiros.store._store import EventStore, Recorded
from tests.conftest import postgres_url
from tests.scale_support import fixed_episodes


class CountingStore(EventStore):
    """The same store, counting what stream reads return: how often the log is read, not how fast."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner.backend)
        self.reads = 0
        self.records = 0
        self.episode_reads: Counter[int] = Counter()
        """How often each recorded episode (by position) came back from a read."""

    @property
    def episodes(self) -> int:
        return sum(self.episode_reads.values())

    def read_stream_rows(
        self, golem_id: str, after_version: int = 0, until: int | None = None, *, types: Sequence[type[Event]] = ()
    ) -> list[tuple[int, int, str, bytes]]:
        # Every stream read comes through here, decoded (read_stream) or not (a fold's fast path).
        rows = super().read_stream_rows(golem_id, after_version, until, types=types)
        self.reads += 1
        self.records += len(rows)
        self.episode_reads.update(r[0] for r in rows if r[2].startswith(f"{EpisodeRecorded.type_name}.v"))
        return rows

    def reset(self) -> None:
        self.reads = self.records = 0
        self.episode_reads.clear()


def _golems(url: str, every: int = 0, seed: int = 5) -> Golems:
    deps = Deps(clock=FixedClock(datetime(2026, 3, 1, tzinfo=UTC)), ids=SequentialIds("s"), seed=seed)
    return Golems(CountingStore(open_store(url)), deps=deps, snapshots=SnapshotSettings(every=every))


HARDENED = CycleSettings(budget=CycleBudget(tier="hardened"))


@cache
def _history() -> tuple[Recorded, ...]:
    """A log with every kind of event the fold keeps: episodes (some replacing earlier ticks), two
    whole cycles (ledger, staged entries, depotentiation, strength, triage) and a third cut short
    in REM, so cut points fall inside a cycle too."""
    golems = _golems("memory://")
    golems.create("g")
    episodes = fixed_episodes(120)
    golems.record_episodes("g", episodes[:60])
    executor = InProcessExecutor(golems, settings=HARDENED)
    executor.run_cycle("g", cycle_id="one")
    golems.record_episodes("g", episodes[60:])
    executor.run_cycle("g", cycle_id="two")
    golems.record_episodes("g", episodes[:5])
    golems.fall_asleep("g", "owner", budget_tokens=5000, cycle_id="three")
    return tuple(golems.store.read_stream("g"))


def _fold(records: tuple[Recorded, ...] | list[Recorded]) -> GolemLog:
    log = GolemLog("g")
    for record in records:
        log.apply(record)
    return log


def _view(log: GolemLog) -> dict[str, object]:
    """Everything a phase reads from the fold, as comparable data."""
    memory = log.memory
    columns = memory.columns()
    return {
        "state": log.state,
        "episodes": msgspec.to_builtins(memory.episodes()),
        "ticks": columns.ticks.tolist(),
        "arousal": columns.arousal.tolist(),
        "strength": dict(memory.strength),
        "triage": dict(memory.triage),
        "ledger": msgspec.to_builtins(log.ledger.spent()),
        "ledger_one": msgspec.to_builtins(log.ledger.spent(cycle_id="one", phase="rem")),
        "staged": [(r.position, msgspec.to_builtins(r.event)) for r in log.staged],
        "cycle": [(r.position, r.version, msgspec.to_builtins(r.event)) for r in log.cycle],
        "last": (log.last.position, log.last.meta.event_id) if log.last else None,
    }


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_snapshot_at_any_cut_point_plus_the_events_after_it_equals_the_full_fold(data: st.DataObject) -> None:
    """Snapshot the fold after any number of events, seal and unseal it, restore, apply the rest:
    the result is what folding the whole stream gives, field by field."""
    history = _history()
    cut = data.draw(st.integers(min_value=1, max_value=len(history)))
    snapshot = unseal(seal(_fold(history[:cut]).to_snapshot()))
    assert snapshot is not None
    restored = GolemLog.from_snapshot(snapshot, history[cut - 1])
    for record in history[cut:]:
        restored.apply(record)
    assert _view(_fold(history)) == _view(restored)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_golem_state_from_a_snapshot_at_any_cut_point_equals_the_full_fold(data: st.DataObject) -> None:
    """A Golems service whose snapshot store holds the state after any cut reads the same state as a
    fold of the whole stream, reading only the events after the cut."""
    history = _history()
    cut = data.draw(st.integers(min_value=1, max_value=len(history)))
    store = CountingStore(open_store("memory://"))
    for record in history:
        store.append("g", record.version - 1, [(record.meta, record.event)])
    writer = Golems(store, snapshots=SnapshotSettings(every=1))
    writer.remember(_fold(history[:cut]).state, history[cut - 1])
    reader = Golems(store)
    reader.snapshots = writer.snapshots
    store.reset()
    assert _fold(history).state == reader.state("g")
    assert (1, len(history) - cut + 1) == (store.reads, store.records)


def _cycled_sqlite(tmp_path: Path, name: str = "events.db") -> tuple[str, list[Recorded]]:
    """An SQLite log after one cycle, its cycle-reader snapshot on disk; returns its URL and stream."""
    url = f"sqlite:///{tmp_path}/{name}"
    golems = _golems(url, every=50)
    golems.create("g")
    golems.record_episodes("g", fixed_episodes(200))
    InProcessExecutor(golems).run_cycle("g", cycle_id="one")
    return url, golems.store.read_stream("g")


def _snapshot_file(tmp_path: Path, name: str = "events.db") -> Path:
    return tmp_path / f"{name}.snapshots" / "g.cycle-reader.snapshot"


def _fresh_read(url: str) -> tuple[GolemLog, CountingStore]:
    golems = _golems(url, every=0)
    store = golems.store
    assert isinstance(store, CountingStore)
    return GolemLogs.of(golems).read("g"), store


def test_a_good_snapshot_spares_the_fold_of_every_episode(tmp_path: Path) -> None:
    """With the snapshot the last cycle left, a fresh process reads no recorded episode again and
    gets what a full fold gets."""
    url, history = _cycled_sqlite(tmp_path)
    assert _snapshot_file(tmp_path).exists()
    log, store = _fresh_read(url)
    assert 0 == store.episodes
    assert _view(_fold(history)) == _view(log)


@pytest.mark.parametrize("damage", ["flip a byte", "cut short", "garbage"])
def test_a_damaged_snapshot_is_detected_and_ignored(tmp_path: Path, damage: str) -> None:
    """A snapshot file with a flipped byte, cut short or replaced by garbage fails its checksum: the
    reader folds the whole stream instead and gets the same state."""
    url, history = _cycled_sqlite(tmp_path)
    path = _snapshot_file(tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 2] ^= 0x40
    elif damage == "cut short":
        data = data[: len(data) // 2]
    else:
        data = bytearray(b"not a snapshot at all")
    path.write_bytes(bytes(data))
    assert unseal(bytes(data)) is None
    log, store = _fresh_read(url)
    assert 200 == store.episodes
    assert _view(_fold(history)) == _view(log)


def test_a_snapshot_of_another_log_is_ignored(tmp_path: Path) -> None:
    """A snapshot copied from another log whose events carry the same versions, positions and ids
    (the same id source, the same commands) but other episodes is not the log's own: the event it
    was taken at differs, so it is ignored, never trusted over the log."""
    logs = {}
    for name, seed in (("other.db", 9), ("events.db", 3)):
        golems = _golems(f"sqlite:///{tmp_path}/{name}", every=50)
        golems.create("g")
        golems.record_episodes("g", fixed_episodes(200, seed=seed))
        GolemLogs.of(golems).read("g")
        logs[name] = golems.store.read_stream("g")
    ours, theirs = logs["events.db"], logs["other.db"]
    assert [(r.version, r.position, r.meta.event_id) for r in ours] == [
        (r.version, r.position, r.meta.event_id) for r in theirs
    ]
    shutil.rmtree(tmp_path / "events.db.snapshots")
    shutil.copytree(tmp_path / "other.db.snapshots", tmp_path / "events.db.snapshots")
    log, store = _fresh_read(f"sqlite:///{tmp_path}/events.db")
    assert 200 == len(store.episode_reads)
    assert _view(_fold(ours)) == _view(log)


def test_a_snapshot_ahead_of_the_log_is_ignored(tmp_path: Path) -> None:
    """A log restored from a backup older than its snapshot no longer holds the snapshot's event:
    the snapshot is stale and the reader folds the log it has."""
    url = f"sqlite:///{tmp_path}/events.db"
    golems = _golems(url, every=50)
    golems.create("g")
    golems.record_episodes("g", fixed_episodes(100))
    with sqlite3.connect(tmp_path / "events.db") as src, sqlite3.connect(tmp_path / "backup.db") as dst:
        src.backup(dst)  # the log is in WAL mode: a file copy could miss what the WAL holds
    golems.record_episodes("g", fixed_episodes(100, seed=4))
    InProcessExecutor(golems).run_cycle("g", cycle_id="one")
    golems.store.close()
    backup = tmp_path / "backup.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path}/events.db{suffix}").unlink(missing_ok=True)
    shutil.move(backup, tmp_path / "events.db")
    log, store = _fresh_read(url)
    assert 100 == store.episodes
    assert 101 == log.state.version
    assert _view(_fold(open_store(url).read_stream("g"))) == _view(log)


@settings(max_examples=30, deadline=None)
@given(
    owners=st.lists(st.sampled_from(["g", "h", "i"]), min_size=1, max_size=60),
    page=st.integers(min_value=1, max_value=8),
    after=st.integers(min_value=0, max_value=10),
)
def test_a_paged_stream_read_is_the_whole_stream_read(owners: list[str], page: int, after: int) -> None:
    """Reading a stream a window of positions at a time, among other streams' events, gives exactly
    the records one read gives, in order, however thin the stream and small the page."""
    store = open_store("memory://")
    golems = Golems(store, deps=Deps(clock=FixedClock(datetime(2026, 1, 1, tzinfo=UTC)), ids=SequentialIds("p")))
    for golem in sorted(set(owners)):
        golems.create(golem)
    for index, golem in enumerate(owners):
        golems.record_episodes(golem, fixed_episodes(1, seed=index))
    for golem in ("g", "h", "i"):
        assert store.read_stream(golem, after_version=after) == list(
            read_stream_paged(store, golem, after_version=after, page=page)
        )


def test_on_postgresql_workers_share_snapshots_through_a_table(pg_schema: str) -> None:
    """On PostgreSQL the snapshot lives in the store's own schema, so a phase worker on another
    machine (a fresh store connection and service) starts from it and reads no episode; a damaged
    row is ignored and the full fold gives the same state."""
    url = postgres_url(pg_schema)
    writer = _golems(url, every=50)
    writer.create("g")
    writer.record_episodes("g", fixed_episodes(150))
    InProcessExecutor(writer).run_cycle("g", cycle_id="one")
    history = writer.store.read_stream("g")
    log, store = _fresh_read(url)
    assert len(store.episode_reads) <= 1
    assert _view(_fold(history)) == _view(log)
    import psycopg

    with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{pg_schema}".oneiros_snapshots SET body = overlay(body placing %s from 40) '
            "WHERE kind = 'cycle-reader'",
            [b"\x00\x01\x02"],
        )
    log, store = _fresh_read(url)
    assert 150 == len(store.episode_reads)
    assert _view(_fold(history)) == _view(log)


def test_a_reader_of_a_postgresql_store_without_snapshots_creates_nothing(pg_schema: str) -> None:
    """Reading a golem from a PostgreSQL store that never had a snapshot asks for one and finds
    none: no table is created by a read."""
    url = postgres_url(pg_schema)
    writer = _golems(url, every=0)
    writer.create("g")
    writer.record_episodes("g", fixed_episodes(20))
    assert 21 == _golems(url, every=0).state("g").version
    import psycopg

    with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass(%s)", [f'"{pg_schema}".oneiros_snapshots']).fetchone()
    assert (None,) == found
