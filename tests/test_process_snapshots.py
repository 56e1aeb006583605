"""The validation sweep starts from a snapshot of its memory and folds only what came after it, and
a sweep with nothing to decide does not fold the log at all; counted through a store that counts
what its reads return, never timed. Whatever the snapshots, the sweep decides exactly what a sweep
that folds the whole log decides."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.events._staging import EntryStaged
from oneiros.events._types import Event
from oneiros.projections._runner import RunnerSettings
from oneiros.store._store import EventStore, open_store
from oneiros.validation._sweep import StagingProcess
from tests.conftest import postgres_url
from tests.projections_support import World

# One step of a golem's life: episodes, a cycle staging hypotheses and insights, or an outcome
# that confirms or contradicts the n-th staged entry (the sweep's decisions depend on its memory).
Step = tuple[str, int]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("episodes"), st.integers(1, 8)),
        st.tuples(st.just("dream"), st.integers(1, 3)),
        st.tuples(st.sampled_from(["confirms", "contradicts"]), st.integers(0, 5)),
        st.tuples(st.just("read"), st.just(0)),
        st.tuples(st.just("read"), st.just(0)),
    ),
    min_size=1,
    max_size=30,
)


class CountingStore(EventStore):
    """The same store, counting the events its whole-log reads return."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner.backend)
        self.returned = 0

    def read_all(
        self,
        after: int = 0,
        until: int | None = None,
        types: Sequence[type[Event]] = (),
        page: int | None = None,
        *,
        skip: Sequence[type[Event]] = (),
    ) -> Iterator[Any]:
        for record in super().read_all(after, until, types, page, skip=skip):
            self.returned += 1
            yield record


def _sweep(store: EventStore, every: int) -> StagingProcess:
    """A sweep as a new command starts it: a fresh process with no memory."""
    return StagingProcess(store, runner=RunnerSettings(snapshot_every=every))


def _memory(sweep: StagingProcess) -> Any:
    """The sweep's memory, less what it judges lazily (which episodes are suspect: a live sweep has
    judged some that a freshly loaded one has not yet, with the same outcome once it does)."""
    return msgspec.to_builtins({g: dataclasses.replace(b, suspect={}, unjudged={}) for g, b in sweep.books.items()})


def _live(url: str, steps: list[Step], every: int) -> tuple[list[tuple[int, str, int, str, bytes]], list[Any]]:
    """Every event of the log after ``steps``, each ``read`` a fresh sweep catching up (as a reading
    command does), with snapshots every ``every`` events (0: none); and the memory a fresh sweep
    loads after each of them."""
    world = World(open_store(url))
    staged: list[str] = []
    memories: list[Any] = []
    for kind, n in steps:
        if kind == "episodes":
            world.episodes(*range(world.tick + 1, world.tick + 1 + n))
        elif kind == "dream":
            world.dream(hypotheses=n, insights=1)
        elif kind == "read":
            _sweep(world.store, every).catch_up()
            memories.append(_memory(_sweep(world.store, every).loaded()))
            staged = [r.event.entry_id for r in world.store.read_all(types=(EntryStaged,))]
        elif staged:
            world.outcome(kind, staged[n % len(staged)])
    _sweep(world.store, every).catch_up()
    events = [
        (r.position, r.meta.golem_id, r.version, type(r.event).__name__, msgspec.json.encode(r.event))
        for r in world.store.read_all()
    ]
    return events, memories


@settings(max_examples=40, deadline=None)
@given(steps=STEPS, every=st.integers(1, 12))
def test_a_sweep_from_snapshots_decides_what_a_whole_fold_decides(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Step], every: int
) -> None:
    """Sweeps started anew at any points of a golem's life, each restoring the latest snapshot
    (taken every ``every`` events) and folding the rest, load the memory that folding the whole
    log loads, and leave the very log that sweeps folding the whole log every time leave: the
    same decisions, at the same positions."""
    tmp = tmp_path_factory.mktemp("sweep")
    assert _live(f"sqlite:///{tmp}/whole.db", steps, 0) == _live(f"sqlite:///{tmp}/snap.db", steps, every)


def _world_with_history(tmp_path: Path, url: str | None = None) -> World:
    world = World(open_store(url or f"sqlite:///{tmp_path}/events.db"))
    world.episodes(*range(1, 301))
    for _ in range(3):
        world.dream(hypotheses=2, insights=1)
        world.outcome("confirms")
    return world


def test_a_sweep_with_nothing_to_decide_reads_no_event(tmp_path: Path) -> None:
    """Once the sweep has decided on everything, the next reading command's sweep reads nothing
    back from the log (it peeks for an input, finds none, and leaves its memory unloaded)."""
    world = _world_with_history(tmp_path)
    _sweep(world.store, 0).catch_up()
    counting = CountingStore(open_store(world.store.url))
    position = _sweep(counting, 0).catch_up()
    assert (world.store.head(), 0) == (position, counting.returned)


def test_a_sweep_past_events_it_ignores_moves_its_position_without_loading(tmp_path: Path) -> None:
    """Events the sweep does not read (new golems created) move its position to the head, so nobody
    waiting on it waits on them, with no fold of the log."""
    world = _world_with_history(tmp_path)
    _sweep(world.store, 0).catch_up()
    world.golems.create("g2")
    world.golems.create("g3")
    counting = CountingStore(open_store(world.store.url))
    sweep = _sweep(counting, 0)
    assert (world.store.head(), 0) == (sweep.catch_up(), counting.returned)
    assert world.store.head() == world.store.backend.recorder.max_tracking_id(sweep.name)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_restored_sweep_reads_only_what_came_after_its_snapshot(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    """A sweep that wrote a snapshot (a file beside SQLite, a row in PostgreSQL) lets the next one,
    in a new process, restore it: that one reads back only the events after the snapshot, not the
    300 episodes before it, and holds the same entries as a sweep that folded the whole log."""
    url = postgres_url(request.getfixturevalue("pg_schema")) if backend == "postgres" else None
    world = _world_with_history(tmp_path, url)
    _sweep(world.store, 1).catch_up()
    world.dream(hypotheses=1, insights=0)
    counting = CountingStore(open_store(world.store.url))
    restored = _sweep(counting, 1)
    restored.catch_up()
    whole = _sweep(open_store(world.store.url), 0).loaded()
    assert whole.books["g1"].entries == restored.books["g1"].entries
    assert 0 < counting.returned < 30


def _snapshot_file(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "events.db.snapshots").glob("oneiros.staging.process-memory.snapshot")
    return found


def test_a_damaged_snapshot_is_ignored_and_the_log_folded(tmp_path: Path) -> None:
    """A snapshot whose bytes were damaged fails its checksum: the sweep folds the whole log instead
    and decides what it would have decided without snapshots."""
    world = _world_with_history(tmp_path)
    _sweep(world.store, 1).catch_up()
    snapshot = _snapshot_file(tmp_path)
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0xFF
    snapshot.write_bytes(bytes(data))
    counting = CountingStore(open_store(world.store.url))
    sweep = _sweep(counting, 1).loaded()
    assert _sweep(open_store(world.store.url), 0).loaded().books["g1"].entries == sweep.books["g1"].entries
    assert counting.returned > 300


def test_a_snapshot_of_another_log_is_ignored(tmp_path: Path) -> None:
    """A snapshot taken of another log (a store copied over, or restored from a backup) does not
    hold the event it was taken at where this log has its own: it is ignored and the log folded."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = _world_with_history(tmp_path / "a"), _world_with_history(tmp_path / "b")
    b.dream(hypotheses=3, insights=0)
    _sweep(a.store, 1).catch_up()
    _sweep(b.store, 1).catch_up()
    _snapshot_file(tmp_path / "b").write_bytes(_snapshot_file(tmp_path / "a").read_bytes())
    counting = CountingStore(open_store(b.store.url))
    sweep = _sweep(counting, 1).loaded()
    assert _sweep(open_store(b.store.url), 0).loaded().books["g1"].entries == sweep.books["g1"].entries
    assert counting.returned > 300


def test_update_reports_the_sweep_then_the_projections_moving_to_the_head(tmp_path: Path) -> None:
    """``oneiros.daemon._catch_up.update`` tells its listener what is moving and where it got: the sweep
    every few thousand inputs and at its target, then each projection it brings up at its commit,
    positions never going back for any one of them. The sweep ends at the head it started from (its
    own decisions come after it); the rest end at the head with them."""
    from oneiros.daemon._catch_up import update
    from oneiros.projections._db import open_projection_db
    from oneiros.projections._service import Projections

    world = World(open_store(f"sqlite:///{tmp_path}/events.db"))
    world.episodes(*range(1, 12_001))
    world.dream(hypotheses=2, insights=1)
    heard: list[tuple[str, int]] = []
    before = world.store.head()
    with Projections(world.store, open_projection_db(f"sqlite:///{tmp_path}/proj.db")) as projections:
        update(projections, names=("journal",), on_progress=lambda what, at: heard.append((what, at)))
    head = world.store.head()
    sweep = [at for what, at in heard if what == "sweep"]
    assert ["sweep", "health", "journal"] == list(dict.fromkeys(what for what, _ in heard))
    assert (sorted(sweep), True) == (sweep, len(sweep) >= 3)
    assert (True, {"sweep": before, "health": head, "journal": head}) == (
        head > before,
        {what: at for what, at in heard},
    )
