"""The projection runner: exactly-once positions, ignored events, rebuild, as-of builds, conflicts,
and the same behaviour on SQLite and PostgreSQL projection databases."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros._errors import ProjectionConflict, UnknownProjection
from oneiros.events._types import DreamStart, Event
from oneiros.projections._db import Commit, ProjectionDB, open_projection_db
from oneiros.projections._runner import ProjectionRunner, Rows, RunnerSettings, wait_for
from oneiros.store._store import EventStore, Recorded, open_store
from tests.conftest import postgres_url
from tests.projections_support import World


class _Seen(msgspec.Struct):
    times: int = 0


class Audit:
    """Counts how often each event position is applied."""

    name = "audit"
    types: tuple[type[Event], ...] = ()

    def apply(self, record: Recorded, rows: Rows) -> None:
        seen = rows.get("seen", f"{record.position:09d}", _Seen) or _Seen()
        seen.times += 1
        rows.put("seen", f"{record.position:09d}", seen)


class StartsOnly:
    name = "starts"
    types: tuple[type[Event], ...] = (DreamStart,)

    def apply(self, record: Recorded, rows: Rows) -> None:
        rows.put("start", record.event.cycle_id, _Seen(times=record.position))


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[ProjectionDB]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/proj.db"
    else:
        url = postgres_url(request.getfixturevalue("pg_schema"))
    d = open_projection_db(url)
    yield d
    d.close()


def _world_with_cycles(store: EventStore, cycles: int = 3) -> World:
    world = World(store)
    world.episodes(1, 2, 3)
    for _ in range(cycles):
        world.dream(hypotheses=1)
    return world


def test_every_event_applied_once_in_small_batches(db: ProjectionDB) -> None:
    """Catching up in batches of 7 applies every position exactly once and tracks the head."""
    store = open_store("memory://")
    _world_with_cycles(store)
    runner = ProjectionRunner(store, db, [Audit()], msgspec.structs.replace(_settings(), batch_events=7))
    assert {"audit": store.head()} == runner.catch_up()
    seen = {key: msgspec.json.decode(data, type=_Seen).times for _k, key, data in db.scan("audit")}
    assert {f"{p:09d}": 1 for p in range(1, store.head() + 1)} == seen


def test_ignored_events_still_advance_position(db: ProjectionDB) -> None:
    """A projection reading only DreamStart ends at the head, past every event it ignored."""
    store = open_store("memory://")
    world = _world_with_cycles(store, cycles=1)
    runner = ProjectionRunner(store, db, [StartsOnly()])
    runner.catch_up()
    world.episodes(4, 5)
    assert {"starts": store.head()} == runner.catch_up()
    assert store.head() == db.position("starts")


def test_rebuild_and_as_of_position(db: ProjectionDB) -> None:
    """Dropping and rebuilding gives the same digest; building as of a position sees only the
    events up to it."""
    store = open_store("memory://")
    _world_with_cycles(store)
    runner = ProjectionRunner(store, db, [StartsOnly()])
    runner.catch_up()
    before = db.digest("starts")
    runner.rebuild("starts")
    assert before == db.digest("starts")
    first_start = next(store.read_all(types=[DreamStart])).position
    runner.rebuild("starts", until=first_start)
    assert (first_start, 1) == (db.position("starts"), len(db.scan("starts")))


def test_second_runner_cannot_commit_the_same_stretch(db: ProjectionDB) -> None:
    """Two runners that started from the same position: the second commit raises and writes nothing."""
    store = open_store("memory://")
    _world_with_cycles(store)
    db.commit("audit", 0, 3, [("seen", "x", b"{}")])
    with pytest.raises(ProjectionConflict) as caught:
        db.commit("audit", 0, 5, [("seen", "y", b"{}")])
    assert "projection 'audit' moved from position 0 to 3: another runner committed first" == str(caught.value)
    assert [("seen", "x", b"{}")] == db.scan("audit")


def test_one_projection_moved_by_another_runner_stops_every_commit_made_with_it(db: ProjectionDB) -> None:
    """A follower commits every projection of a stretch together: when another runner moved one of
    them first, the commit raises naming it and writes nothing for any of them (the follower then
    brings each up on its own)."""
    db.commit("audit", 0, 3, [("seen", "x", b"{}")])
    together = [Commit("starts", 0, 5, [("start", "a", b"{}")]), Commit("audit", 0, 5, [("seen", "y", b"{}")])]
    with pytest.raises(ProjectionConflict) as caught:
        db.commit_many(together)
    assert "projection 'audit' moved from position 0 to 3: another runner committed first" == str(caught.value)
    assert ([("seen", "x", b"{}")], [], {"audit": 3}) == (
        db.scan("audit"),
        db.scan("starts"),
        db.positions(["audit", "starts"]),
    )
    db.commit_many([Commit("starts", 0, 5, [("start", "a", b"{}")]), Commit("audit", 3, 5, [("seen", "y", b"{}")])])
    assert {"audit": 5, "starts": 5} == db.positions(["audit", "starts"])


def test_unknown_projection_is_refused() -> None:
    """Asking for a projection that does not exist names the ones that do."""
    world = World(open_store("memory://"))
    with pytest.raises(UnknownProjection) as caught:
        world.projections.runner(["dreams"])
    known = "journal, staging, beliefs, noise, observations, memory, golems, schedule, index, recall, profile"
    assert f"unknown projection 'dreams'; expected one of {known}" == str(caught.value)


def _settings() -> RunnerSettings:

    return RunnerSettings(poll_interval_s=0.005)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_follow_sees_new_events(backend: str, request: pytest.FixtureRequest, tmp_path: object) -> None:
    """A following runner picks up events appended after it started: by polling on SQLite, by
    LISTEN/NOTIFY on PostgreSQL."""
    url = (
        f"sqlite:///{tmp_path}/events.db" if backend == "sqlite" else postgres_url(request.getfixturevalue("pg_schema"))
    )
    store = open_store(url)
    world = World(store)
    db = open_projection_db("memory://")
    runner = ProjectionRunner(store, db, [StartsOnly()], _settings())
    stop = threading.Event()
    thread = threading.Thread(target=runner.follow, args=(stop,))
    thread.start()
    try:
        world.episodes(1)
        world.dream()
        assert wait_for(lambda: len(db.scan("starts")) == 1, timeout=30)
        assert wait_for(lambda: db.position("starts") == store.head(), timeout=30)
    finally:
        stop.set()
        thread.join()
        store.close()


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=8), batch=st.integers(1, 50))
def test_building_in_steps_equals_building_at_once(steps: list[int], batch: int) -> None:
    """Catching up to arbitrary positions one after another, in arbitrary batch sizes, leaves every
    projection with the rows of a single build to the head."""
    from oneiros.projections._runner import RunnerSettings
    from oneiros.projections._service import ProjectionSettings, make_projections

    store = open_store("memory://")
    world = _world_with_cycles(store, cycles=2)
    world.outcome("confirms", next(iter(world.entries())))
    projections = make_projections(ProjectionSettings())
    stepped = open_projection_db("memory://")
    runner = ProjectionRunner(store, stepped, projections, RunnerSettings(batch_events=batch))
    position = 0
    for step in steps:
        position += step
        runner.catch_up(until=position)
    runner.catch_up()
    once = open_projection_db("memory://")
    ProjectionRunner(store, once, projections).catch_up()
    assert [(p.name, once.digest(p.name)) for p in projections] == [
        (p.name, stepped.digest(p.name)) for p in projections
    ]


def test_staging_rows_match_the_staging_process_memory() -> None:
    """The staging projection and the staging process fold the same events, so their view of every
    entry (status, confidence, confirmations) is the same."""
    from oneiros.validation._sweep import StagingProcess

    world = World(open_store("memory://"), cap=3)
    world.episodes(1)
    world.dream(hypotheses=2, insights=2)
    entries = world.entries()
    for entry_id in list(entries)[:2]:
        world.outcome("confirms", entry_id)
        world.outcome("contradicts", entry_id)
    world.feedback.review(list(entries)[-1], "reject", who="ana", why="no")
    world.update()
    process = StagingProcess(world.store)
    process.load()

    def view(e: object) -> tuple[object, ...]:
        return (e.entry_id, e.status, e.confidence_pct, e.confirmations, e.contradictions)

    assert sorted(map(view, world.projections.staging("g1"))) == sorted(map(view, process.books["g1"].entries.values()))


def test_a_batch_past_the_position_is_filled_from_the_log_and_never_applied_twice(db: ProjectionDB) -> None:
    """A subscription batch that starts beyond a projection's position (another runner, or a
    restart, left a gap) is preceded by the gap read from the store; the same batch taken again by
    a second runner of the same projection applies nothing twice."""
    store = open_store("memory://")
    _world_with_cycles(store)
    first, second = ProjectionRunner(store, db, [Audit()]), ProjectionRunner(store, db, [Audit()])
    first.catch_up(until=5)
    batch = list(store.read_all(after=12))
    second.take(batch)
    first.take(batch)
    seen = {key: msgspec.json.decode(data, type=_Seen).times for _k, key, data in db.scan("audit")}
    assert (store.head(), {f"{p:09d}": 1 for p in range(1, store.head() + 1)}) == (db.position("audit"), seen)


def test_projections_built_together_equal_each_built_alone() -> None:
    """Catching up several projections in one read of the log (each from its own position) leaves
    the same rows and positions as catching each up on its own."""
    from oneiros.projections._service import ProjectionSettings, make_projections

    store = open_store("memory://")
    world = _world_with_cycles(store, cycles=3)
    world.outcome("confirms", next(iter(world.entries())))
    projections = [Audit(), *make_projections(ProjectionSettings())]
    together, alone = open_projection_db("memory://"), open_projection_db("memory://")
    ProjectionRunner(store, together, projections[:3]).catch_up(until=20)  # some start ahead of others
    ProjectionRunner(store, together, projections).catch_up()
    for projection in projections:
        ProjectionRunner(store, alone, [projection]).catch_up()
    assert [(p.name, alone.position(p.name), alone.digest(p.name)) for p in projections] == [
        (p.name, together.position(p.name), together.digest(p.name)) for p in projections
    ]
