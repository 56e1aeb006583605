"""The projections stand on eventsourcing's machinery: the projection database passes eventsourcing's
own tracking-recorder suite on SQLite and PostgreSQL, the validation sweep's decisions go through
``EventStore.append_streams`` with their tracking, and a several-stream append is all or nothing."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import Tracking, TrackingRecorder
from eventsourcing.tests.persistence import TrackingRecorderTestCase

from oneiros._errors import StreamConflict
from oneiros.events import EventMeta, EventStore, GolemCreated, Recorded, StreamAppend, open_store
from oneiros.projections import ProjectionDB, open_projection_db
from oneiros.validation import StagingProcess
from tests.conftest import PG_HOST, PG_PORT, postgres_url, require_server
from tests.projections_support import World


class TestSQLiteProjectionDB(TrackingRecorderTestCase):
    """eventsourcing's TrackingRecorderTestCase against the SQLite projection database."""

    def create_recorder(self) -> TrackingRecorder:
        db = open_projection_db("memory://")
        self.addCleanup(db.close)
        return db


class TestPostgresProjectionDB(TrackingRecorderTestCase):
    """eventsourcing's TrackingRecorderTestCase against the PostgreSQL projection database, in a
    schema of its own dropped afterwards."""

    def create_recorder(self) -> TrackingRecorder:
        require_server("PostgreSQL", PG_HOST, PG_PORT)
        schema = f"t_{uuid.uuid4().hex[:12]}"
        db = open_projection_db(postgres_url(schema))
        self.addCleanup(_drop, schema)
        self.addCleanup(db.close)
        return db


def _drop(schema: str) -> None:
    import psycopg

    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} dbname=test user=postgres", autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _meta(stream: str) -> EventMeta:
    return EventMeta(time=datetime(2026, 5, 24, tzinfo=UTC), event_id=uuid.uuid4().hex, golem_id=stream)


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"])
def test_several_streams_and_tracking_are_one_transaction(
    backend: str, request: pytest.FixtureRequest, tmp_path: object
) -> None:
    """An append to two streams with a tracking position writes both and the position; when one
    stream's version is taken it writes neither stream nor the position and raises StreamConflict."""
    url = {"memory": "memory://", "sqlite": f"sqlite:///{tmp_path}/events.db"}.get(backend) or postgres_url(
        request.getfixturevalue("pg_schema")
    )
    store = open_store(url)
    try:
        both: list[StreamAppend] = [("a", 0, [(_meta("a"), GolemCreated())]), ("b", 0, [(_meta("b"), GolemCreated())])]
        written = store.append_streams(both, tracking=Tracking("proc", 7))
        assert [("a", 1), ("b", 1)] == [(r.meta.golem_id, r.version) for r in written]
        assert 7 == store.backend.recorder.max_tracking_id("proc")
        clash: list[StreamAppend] = [("c", 0, [(_meta("c"), GolemCreated())]), ("a", 0, [(_meta("a"), GolemCreated())])]
        head = store.head()
        with pytest.raises(StreamConflict):
            store.append_streams(clash, tracking=Tracking("proc", 9))
        assert (head, 7, []) == (store.head(), store.backend.recorder.max_tracking_id("proc"), store.read_stream("c"))
        store.append_streams([], tracking=Tracking("proc", 12))
        assert 12 == store.backend.recorder.max_tracking_id("proc")
    finally:
        store.close()


class _Spy(EventStore):
    """The same store, remembering every append_streams call (append goes through it too)."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner.backend)
        self.calls: list[tuple[list[str], Tracking | None]] = []

    def append_streams(self, appends: Sequence[StreamAppend], *, tracking: Tracking | None = None) -> list[Recorded]:
        self.calls.append(([stream for stream, _v, items in appends if items], tracking))
        return super().append_streams(appends, tracking=tracking)


def test_sweep_decisions_go_through_the_store_with_their_tracking() -> None:
    """Every event the staging process decides is written by EventStore.append_streams, in the
    same call as the position it reached, and the decisions land in the golem's staging stream."""
    world = World(open_store("memory://"))
    world.episodes(1)
    world.dream(hypotheses=2)
    spy = _Spy(world.store)
    position = StagingProcess(spy).catch_up()
    assert [(["g1:staging"], Tracking(StagingProcess.name, position))] == spy.calls
    assert 2 == len(world.store.read_stream("g1:staging"))


def test_projection_database_waits_on_positions_like_any_tracking_recorder(tmp_path: object) -> None:
    """A committed projection position is what eventsourcing's wait() and has_tracking_id() see."""
    db: ProjectionDB = open_projection_db(f"sqlite:///{tmp_path}/proj.db")
    try:
        db.commit("journal", 0, 5, [("cycle", "c1", b"{}")])
        db.wait("journal", 5, timeout=0.5)
        assert (True, False, 5) == (
            db.has_tracking_id("journal", 5),
            db.has_tracking_id("journal", 6),
            db.position("journal"),
        )
    finally:
        db.close()


def test_projections_export_nothing_of_validation() -> None:
    """Read models sit below the validation sweep (tests/test_layers.py checks the imports): no
    name of oneiros.validation is re-exported by oneiros.projections."""
    import oneiros.projections
    import oneiros.validation

    assert set() == set(oneiros.projections.__all__) & set(oneiros.validation.__all__)
