"""eventsourcing's own recorder test suites, run against the store's SQLite, PostgreSQL and memory recorders.

The suites come from ``eventsourcing.tests.persistence`` and are used unchanged; each class here only
says how to make one of our recorders (text stream ids, as the store uses). The aggregate-recorder suite
is not run: it expects ``insert_events`` to return None, which is right for eventsourcing's aggregate
recorders and wrong for its application and process recorders (positions are returned), ours included.
PostgreSQL tests get a fresh schema each, dropped afterwards.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any, ClassVar

import pytest
from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.sqlite import SQLiteDatastore
from eventsourcing.tests.persistence import (
    ApplicationRecorderTestCase,
    NonInterleavingNotificationIDsBaseCase,
    ProcessRecorderTestCase,
    TrackingRecorderTestCase,
)

from oneiros.store._backends import MemoryRecorder, SQLiteRecorder
from oneiros.store._urls import parse_postgres_url
from tests.conftest import PG_HOST, PG_PORT, postgres_url, require_server


class TextIds:
    """Our streams are named by text (golem ids), not UUIDs."""

    def new_originator_id(self) -> str:
        return f"golem-{uuid.uuid4()}"


# -- SQLite ---------------------------------------------------------------------------------------


class OnSQLite(TextIds):
    db_name: ClassVar[str] = ":memory:"
    _tmp: Any = None

    def create_recorder(self) -> Any:
        recorder = SQLiteRecorder(SQLiteDatastore(self.db_name, originator_id_type="text", pool_size=20))
        recorder.create_table()
        return recorder


class OnSQLiteFile(OnSQLite):
    """A file database: concurrent writers really contend for SQLite's write lock."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        # eventsourcing declares db_name a ClassVar, but its recorder tests read it per test: one file each.
        self.db_name = os.path.join(self._tmp.name, "events.db")  # type: ignore[misc]

    def tearDown(self) -> None:
        self._tmp.cleanup()


class TestSQLiteApplication(OnSQLiteFile, ApplicationRecorderTestCase[ApplicationRecorder]):
    pass


class TestSQLiteProcess(OnSQLite, ProcessRecorderTestCase):
    pass


class TestSQLiteTracking(OnSQLite, TrackingRecorderTestCase):
    pass


class TestSQLiteNonInterleaving(OnSQLiteFile, NonInterleavingNotificationIDsBaseCase):
    pass


# -- memory ---------------------------------------------------------------------------------------


class OnMemory(TextIds):
    def create_recorder(self) -> Any:
        return MemoryRecorder()


class TestMemoryApplication(OnMemory, ApplicationRecorderTestCase[ApplicationRecorder]):
    def test_insert_subscribe(self) -> None:
        """The in-memory recorder's subscription, as eventsourcing tests its own."""
        self.optional_test_insert_subscribe()


class TestMemoryProcess(OnMemory, ProcessRecorderTestCase):
    pass


# -- PostgreSQL -----------------------------------------------------------------------------------


@pytest.mark.postgres
class OnPostgres(TextIds):
    """A fresh schema per test, dropped after it, whatever the test did."""

    schema: str = ""
    datastores: list[Any]

    def setUp(self) -> None:
        require_server("PostgreSQL", PG_HOST, PG_PORT)
        self.schema = f"t_{uuid.uuid4().hex[:12]}"
        self.datastores = []

    def tearDown(self) -> None:
        import psycopg

        for datastore in self.datastores:
            datastore.close()
        with psycopg.connect(f"host={PG_HOST} port={PG_PORT} dbname=test user=postgres", autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')

    def create_recorder(self) -> Any:
        from oneiros.store._postgres import PostgresRecorder, postgres_datastore

        datastore = postgres_datastore(parse_postgres_url(postgres_url(self.schema)))
        self.datastores.append(datastore)
        datastore.pool.open()
        datastore.pool.resize(12, 12)  # the concurrency tests run ten writers and two readers
        recorder = PostgresRecorder(datastore)
        recorder.create_table()
        return recorder


class TestPostgresApplication(OnPostgres, ApplicationRecorderTestCase[ApplicationRecorder]):
    def test_insert_subscribe(self) -> None:
        """LISTEN/NOTIFY subscriptions see what our recorder writes, as eventsourcing tests its own."""
        self.optional_test_insert_subscribe()


class TestPostgresProcess(OnPostgres, ProcessRecorderTestCase):
    pass


class TestPostgresTracking(OnPostgres, TrackingRecorderTestCase):
    pass


class TestPostgresNonInterleaving(OnPostgres, NonInterleavingNotificationIDsBaseCase):
    pass


def test_our_recorders_override_no_private_eventsourcing_method() -> None:
    """Our recorders extend eventsourcing through its public API only: no ``_name`` method of ours shadows
    one of eventsourcing's, so an eventsourcing release may change its internals without breaking us."""
    from oneiros.store._postgres import PostgresRecorder

    shadowed = {
        f"{cls.__name__}.{name}"
        for cls in (SQLiteRecorder, MemoryRecorder, PostgresRecorder)
        for name in vars(cls)
        if name.startswith("_") and not name.startswith("__") and name != "_abc_impl"  # abc's own bookkeeping
        if any(name in vars(base) for base in cls.__mro__[1:])
    }
    assert set() == shadowed
