"""The projections stand on eventsourcing's machinery: the projection database passes eventsourcing's
own tracking-recorder suite on SQLite and PostgreSQL, and the validation sweep's decisions go through
``EventStore.append_streams`` with their checkpoint."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from eventsourcing.persistence import TrackingRecorder
from eventsourcing.tests.persistence import TrackingRecorderTestCase

from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.store._store import Checkpoint, EventStore, Recorded, StreamAppend, open_store
from oneiros.validation._sweep import StagingProcess
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


class _Spy(EventStore):
    """The same store, remembering every append_streams call (append goes through it too)."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner.backend)
        self.calls: list[tuple[list[str], Checkpoint | None]] = []

    def append_streams(
        self, appends: Sequence[StreamAppend], *, checkpoint: Checkpoint | None = None
    ) -> list[Recorded]:
        self.calls.append(([a.golem_id for a in appends if a.items], checkpoint))
        return super().append_streams(appends, checkpoint=checkpoint)


def test_sweep_decisions_go_through_the_store_with_their_tracking() -> None:
    """Every event the staging process decides is written by EventStore.append_streams, in the
    same call as the position it reached, and the decisions land in the golem's staging stream."""
    world = World(open_store("memory://"))
    world.episodes(1)
    world.dream(hypotheses=2)
    spy = _Spy(world.store)
    position = StagingProcess(spy).catch_up()
    assert [(["g1:staging"], Checkpoint(StagingProcess.name, 0, position))] == spy.calls
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
