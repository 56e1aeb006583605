"""The store contract, written once and run against memory, SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import ProjectionConflict, StreamConflict
from oneiros.events._types import DreamStart, EventMeta, GolemCreated, ModeChanged
from oneiros.store._snapshots import read_cycle
from oneiros.store._store import Checkpoint, EventStore, StreamAppend, Tally

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def meta(golem: str, n: int = 0) -> EventMeta:
    return EventMeta(time=T0, event_id=f"{golem}-{n}", golem_id=golem)


def created(golem: str, name: str = "") -> tuple[EventMeta, GolemCreated]:
    return meta(golem), GolemCreated(name=name)


def test_streams_have_contiguous_versions_and_the_log_a_global_order(store: EventStore) -> None:
    """Interleaved appends to two streams: versions count 1, 2, 3 per stream; positions rise across both."""
    store.append("a", 0, [created("a")])
    store.append("b", 0, [created("b"), created("b", "again")])
    store.append("a", 1, [created("a", "x"), created("a", "y")])
    assert [1, 2, 3] == [r.version for r in store.read_stream("a")]
    assert [1, 2] == [r.version for r in store.read_stream("b")]
    positions = [r.position for r in store.read_all()]
    assert positions == sorted(positions)
    assert len(set(positions)) == 5
    assert ["a", "b", "b", "a", "a"] == [r.golem_id for r in store.read_all()]
    assert positions[-1] == store.head()


def test_append_returns_what_reads_return(store: EventStore) -> None:
    """The records an append returns are the records later reads give back."""
    written = store.append("a", 0, [created("a"), (meta("a", 1), DreamStart(cycle_id="c", trigger="owner"))])
    assert written == store.read_stream("a")
    assert written == list(store.read_all())


def test_a_conflicting_batch_writes_nothing(store: EventStore) -> None:
    """A batch whose versions collide with existing ones raises StreamConflict and appends none of its events."""
    store.append("a", 0, [created("a"), created("a")])
    head = store.head()
    with pytest.raises(StreamConflict) as caught:
        store.append("a", 1, [created("a", "new"), created("a", "newer")])
    assert ("a", 1) == (caught.value.golem_id, caught.value.expected_version)
    assert "stream 'a' moved past version 1: another writer appended first" == str(caught.value)
    assert head == store.head()
    assert ["", ""] == [r.event.name for r in store.read_stream("a")]


def test_two_writers_of_one_version_one_wins(store: EventStore) -> None:
    """Eight threads race to write version 1: exactly one succeeds, the rest get StreamConflict."""
    results: list[str] = []
    barrier = threading.Barrier(8)

    def write(i: int) -> None:
        barrier.wait()
        try:
            store.append("race", 0, [created("race", str(i))])
            results.append("won")
        except StreamConflict:
            results.append("conflict")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ["conflict"] * 7 + ["won"] == sorted(results)
    assert 1 == len(store.read_stream("race"))


def test_reads_by_position_respect_after_until_and_types(store: EventStore) -> None:
    """read_all pages from ``after`` up to ``until`` and filters by event type; read_stream stops at ``until``."""
    for i in range(7):
        store.append("a", i * 2, [created("a"), (meta("a"), ModeChanged(from_mode="Waking", to_mode="Dreaming"))])
    all_positions = [r.position for r in store.read_all(page=3)]
    assert 14 == len(all_positions)
    assert all_positions[4:9] == [
        r.position for r in store.read_all(after=all_positions[3], until=all_positions[8], page=2)
    ]
    assert 7 == len(list(store.read_all(types=[ModeChanged])))
    assert all(isinstance(r.event, ModeChanged) for r in store.read_all(types=[ModeChanged]))
    assert 5 == len(store.read_stream("a", until=all_positions[4]))
    assert [13, 14] == [r.version for r in store.read_stream("a", after_version=12)]


def test_a_tally_counts_what_a_read_returns_and_a_skip_leaves_out(store: EventStore) -> None:
    """``tally`` gives, per stream and type, the count, last version and last position a whole read
    finds in the same stretch; ``read_all(skip=...)`` returns the whole read without those types,
    in pages that stay full however many rows they skip."""
    for i in range(5):
        store.append("a", i * 3, [created("a"), (meta("a"), ModeChanged(from_mode="Waking", to_mode="Dreaming"))])
        store.append("a", i * 3 + 2, [(meta("a"), DreamStart(cycle_id=f"c{i}", trigger="owner"))])
        store.append("b", i, [(meta("b"), ModeChanged(from_mode="Waking", to_mode="Waking"))])
    whole = list(store.read_all())
    after, until = whole[2].position, whole[-3].position
    stretch = [r for r in whole if after < r.position <= until]
    expected: dict[tuple[str, type], Tally] = {}
    for r in stretch:
        if isinstance(r.event, ModeChanged | GolemCreated):
            seen = expected.get((r.golem_id, type(r.event)))
            expected[(r.golem_id, type(r.event))] = Tally(
                r.golem_id, type(r.event), 1 + (seen.count if seen else 0), r.version, r.position
            )
    assert sorted(expected.values(), key=lambda t: t.position) == store.tally(after, until, [ModeChanged, GolemCreated])
    assert 3 == len(expected)
    assert [] == store.tally(until, after, [ModeChanged])
    kept = [r for r in whole if not isinstance(r.event, ModeChanged)]
    assert kept == list(store.read_all(skip=[ModeChanged], page=2))
    assert [r for r in kept if isinstance(r.event, DreamStart)] == list(
        store.read_all(types=[DreamStart, ModeChanged], skip=[ModeChanged], page=2)
    )


def test_a_stream_read_of_some_types_is_the_stream_read_filtered(store: EventStore) -> None:
    """read_stream with ``types`` returns what the whole stream read returns of those types, in
    stream order and with the same positions, versions and events, within ``after_version`` and
    ``until`` alike; another stream's events of the same types stay out."""
    for i in range(5):
        waking = ModeChanged(from_mode="Dreaming", to_mode="Waking")
        store.append(
            "a", i * 3, [created("a"), (meta("a"), DreamStart(cycle_id=f"c{i}", trigger="owner")), (meta("a"), waking)]
        )
        store.append("b", i, [(meta("b"), DreamStart(cycle_id=f"b{i}", trigger="owner"))])
    whole = store.read_stream("a")
    until = whole[10].position
    expected = (
        [r for r in whole if isinstance(r.event, DreamStart)],
        [r for r in whole if isinstance(r.event, (DreamStart, ModeChanged)) and r.version > 4],
        [r for r in whole if isinstance(r.event, DreamStart) and r.position <= until],
    )
    assert expected == (
        store.read_stream("a", types=[DreamStart]),
        store.read_stream("a", after_version=4, types=[DreamStart, ModeChanged]),
        store.read_stream("a", until=until, types=[DreamStart]),
    )
    assert (5, 8) == (len(expected[0]), len(expected[1]))


def test_a_cycle_read_is_the_stream_read_of_that_cycle(store: EventStore) -> None:
    """read_cycle returns what the whole stream read returns of events carrying the cycle's id,
    for every cycle of the stream (the last one too), and nothing for a cycle that never started
    there, even one of the same id in another stream."""

    def in_cycle(golem: str, cycle: str) -> EventMeta:
        return msgspec.structs.replace(meta(golem), cycle_id=cycle)

    store.append("a", 0, [created("a")])
    store.append("b", 0, [(in_cycle("b", "x"), DreamStart(cycle_id="x", trigger="owner"))])
    for i in range(4):
        cycle = f"c{i}"
        asleep = ModeChanged(from_mode="Waking", to_mode="Dreaming")
        awake = ModeChanged(from_mode="Dreaming", to_mode="Waking")
        version = store.stream_version("a")
        store.append(
            "a",
            version,
            [
                (meta("a"), ModeChanged(from_mode="Waking", to_mode="Waking")),  # between cycles
                (in_cycle("a", cycle), DreamStart(cycle_id=cycle, trigger="owner")),
                (in_cycle("a", cycle), asleep),
                (in_cycle("a", cycle), awake),
            ],
        )
    whole = store.read_stream("a")
    expected = [[r for r in whole if r.meta.cycle_id == f"c{i}"] for i in range(4)]
    assert expected == [read_cycle(store, "a", f"c{i}") for i in range(4)]
    assert [3, 3, 3, 3] == [len(e) for e in expected]
    assert ([], []) == (read_cycle(store, "a", "x"), read_cycle(store, "a", "nope"))


def test_an_empty_log(store: EventStore) -> None:
    """An empty store has head 0 and no events anywhere."""
    assert 0 == store.head()
    assert [] == list(store.read_all())
    assert [] == store.read_stream("nobody")
    assert [] == store.append("a", 0, [])


def test_metadata_must_name_the_stream(store: EventStore) -> None:
    """An event whose metadata names another golem is refused before anything is written."""
    with pytest.raises(ValueError, match="event metadata names golem 'b', not 'a'"):
        store.append("a", 0, [created("b")])
    assert 0 == store.head()


def _open_at(url: str, start: float) -> str:
    import time

    from oneiros.store._store import open_store

    time.sleep(max(0.0, start - time.time()))
    try:
        open_store(url).close()
    except Exception as exc:  # reported back to the test, which names it
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_processes_opening_a_new_sqlite_file_at_once_all_succeed(tmp_path: object) -> None:
    """Several processes creating the same fresh SQLite store at the same moment all get a working store
    (eventsourcing's tracking-table migration row would otherwise collide)."""
    import time
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(6) as pool:
        for round_ in range(8):
            url = f"sqlite:///{tmp_path}/fresh{round_}.db"
            start = time.time() + 0.3
            assert ["ok"] * 6 == list(pool.map(_open_at, [url] * 6, [start] * 6))


# -- several streams, checkpoints and subscriptions -------------------------------------------------


def test_appends_to_several_streams_are_one_transaction(store: EventStore) -> None:
    """append_streams writes every stream or none: a conflict on the second stream leaves the first
    unwritten too, and the error names the stream that conflicted."""
    store.append("b", 0, [created("b")])
    head = store.head()
    with pytest.raises(StreamConflict) as caught:
        store.append_streams([StreamAppend("a", 0, [created("a")]), StreamAppend("b", 0, [created("b", "again")])])
    assert ("b", 0) == (caught.value.golem_id, caught.value.expected_version)
    assert head == store.head()
    assert [] == store.read_stream("a")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(st.sampled_from("xyz"), st.integers(1, 4)), min_size=1, max_size=8))
def test_any_sequence_of_appends_keeps_streams_contiguous_and_the_log_ordered(
    store: EventStore, batches: list[tuple[str, int]]
) -> None:
    """Whatever the interleaving of batches over streams, every stream's versions are 1..n, positions rise
    by one per event across the whole log, and reads give back exactly what the appends returned."""
    prefix = uuid.uuid4().hex[:8]
    versions: dict[str, int] = {}
    written = []
    start = store.head()
    for stream, size in batches:
        golem = f"{prefix}-{stream}"
        version = versions.get(golem, 0)
        written += store.append(golem, version, [created(golem, str(i)) for i in range(size)])
        versions[golem] = version + size
    assert list(range(start + 1, start + 1 + len(written))) == [r.position for r in written]
    assert written == list(store.read_all(after=start))
    for golem, count in versions.items():
        assert list(range(1, count + 1)) == [r.version for r in store.read_stream(golem)]


def test_a_checkpoint_commits_with_the_events_and_refuses_a_stale_runner(store: EventStore) -> None:
    """A checkpoint moves a process's tracked position in the append's transaction; a second runner that
    started from the old position gets ProjectionConflict and writes nothing."""
    store.append("a", 0, [created("a"), created("a")])
    store.append("a:staging", 0, [created("a:staging")], checkpoint=Checkpoint("validation", 0, 2))
    assert 2 == store.backend.recorder.max_tracking_id("validation")
    head = store.head()
    with pytest.raises(ProjectionConflict) as caught:
        store.append("a:other", 0, [created("a:other")], checkpoint=Checkpoint("validation", 0, 1))
    assert ("validation", 0, 2) == (caught.value.projection, caught.value.expected, caught.value.found)
    assert head == store.head()
    assert [] == store.read_stream("a:other")


def test_a_checkpoint_alone_is_recorded_even_on_an_empty_log(store: EventStore) -> None:
    """A process that read nothing worth writing still records how far it read, on an empty log too
    (eventsourcing's tracking row without events)."""
    assert [] == store.append_streams([], checkpoint=Checkpoint("journal", 0, 5))
    assert 5 == store.backend.recorder.max_tracking_id("journal")
    assert 0 == store.head()


def test_a_subscription_yields_new_events_in_order_and_stops_from_another_thread(store: EventStore) -> None:
    """Events appended after subscribing come out in log order, filtered by type; stop() ends the iteration."""
    store.append("a", 0, [created("a")])
    seen: list[tuple[int, str]] = []
    with store.subscribe(types=[ModeChanged], poll_interval=0.01) as events:

        def consume() -> None:
            for record in events:
                seen.append((record.version, type(record.event).__name__))
                if len(seen) == 2:
                    events.stop()

        reader = threading.Thread(target=consume)
        reader.start()
        store.append("a", 1, [(meta("a"), ModeChanged(from_mode="Waking", to_mode="Dreaming")), created("a")])
        store.append("a", 3, [(meta("a"), ModeChanged(from_mode="Dreaming", to_mode="Waking"))])
        reader.join(10)
    assert [(2, "ModeChanged"), (4, "ModeChanged")] == seen
    assert not reader.is_alive()
