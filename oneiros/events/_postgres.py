"""The PostgreSQL backend: eventsourcing's process recorder writing batches with binary ``COPY``.

Imported only when a ``postgresql://`` store is opened, since psycopg comes with the optional
``postgres`` extra.

A write takes eventsourcing's own table lock (``LOCK TABLE ... IN EXCLUSIVE MODE``, the recorder's
``lock_table_statements``) and sends the recorder's ``NOTIFY``, so eventsourcing's subscriptions and
readers see the same log they would with the stock recorder. While that lock is held no other
transaction can take a value from the ``notification_id`` sequence, so a batch's positions are
contiguous and end at the sequence's ``currval`` in this session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent, Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresProcessRecorder
from eventsourcing.utils import retry
from psycopg.rows import tuple_row
from psycopg.sql import SQL, Composed, Identifier, Literal

from oneiros.events._backends import EVENTS_TABLE, Row, tracking_refused
from oneiros.events._urls import PostgresURL

__all__ = ["PostgresRecorder", "postgres_datastore"]

# Below this many events a batch goes as one pipelined INSERT ... RETURNING; from here on, COPY,
# whose fixed cost (one more round trip and the currval query) is repaid by its per-row speed.
COPY_FROM = 16


def postgres_datastore(url: PostgresURL) -> PostgresDatastore:
    """A datastore for ``url``'s schema, created if missing."""
    datastore = PostgresDatastore(
        url.dbname,
        url.host,
        url.port,
        url.user,
        url.password,
        schema=url.schema,
        originator_id_type="text",
        # Two connections stay free for a subscription (its LISTEN and its reads) beside writers.
        pool_size=4,
        max_overflow=4,
        lock_timeout=30,
    )
    if url.schema != "public":
        with datastore.transaction(commit=True) as c:
            c.execute(SQL("CREATE SCHEMA IF NOT EXISTS {}").format(Identifier(url.schema)))
    return datastore


class PostgresRecorder(PostgresProcessRecorder):
    """eventsourcing's PostgreSQL process recorder, writing with binary ``COPY`` and reading tuples."""

    def __init__(self, datastore: PostgresDatastore, *, events_table_name: str = EVENTS_TABLE) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        table = SQL("{}.{}").format(Identifier(datastore.schema), Identifier(events_table_name))
        columns = SQL("(originator_id, originator_version, topic, state)")
        # One simple-protocol round trip: the recorder's lock statements, then its NOTIFY.
        self.begin_insert_statement = SQL("; ").join(
            [*self.lock_table_statements, SQL("NOTIFY {}").format(Identifier(self.channel_name))]
        )
        self.insert_rows_statement = SQL("INSERT INTO {} {} VALUES (%s, %s, %s, %s) RETURNING notification_id").format(
            table, columns
        )
        self.copy_statement = SQL("COPY {} {} FROM STDIN (FORMAT BINARY)").format(table, columns)
        self.last_notification_id_statement = SQL(
            "SELECT currval(pg_get_serial_sequence({}, 'notification_id'))"
        ).format(Literal(f'"{datastore.schema}"."{events_table_name}"'))
        self.select_rows_statement = SQL(
            "SELECT notification_id, originator_id, originator_version, topic, state FROM {} "
        ).format(table)

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        tracking: Tracking | None = kwargs.get("tracking")
        if tracking is not None and not self.datastore.single_row_tracking:
            ids: Sequence[int] | None = super().insert_events(stored_events, **kwargs)  # the legacy table
            return ids
        rows = [(s.originator_id, s.originator_version, s.topic, s.state) for s in stored_events]
        with self.datastore.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
            if rows:
                curs.execute(self.begin_insert_statement, prepare=False)
            if tracking is not None:
                curs.execute(
                    self.insert_tracking_statement,
                    {"application_name": tracking.application_name, "notification_id": tracking.notification_id},
                    prepare=True,
                )
                if curs.fetchone() is None:
                    raise tracking_refused(tracking)
            if not rows:
                return []
            if len(rows) < COPY_FROM:
                # psycopg pipelines the statements of an executemany: one round trip for the batch.
                curs.executemany(self.insert_rows_statement, rows, returning=True)
                returned: list[int] = []
                while True:
                    found = curs.fetchone()
                    assert found is not None
                    returned.append(found["notification_id"])
                    if not curs.nextset():
                        return returned
            with curs.copy(self.copy_statement) as copy:
                copy.set_types([self.datastore.originator_id_type, "int8", "text", "bytea"])
                for row in rows:
                    copy.write_row(row)
            curs.execute(self.last_notification_id_statement, prepare=True)
            last = curs.fetchone()
            assert last is not None
            return list(range(last["currval"] - len(rows) + 1, last["currval"] + 1))

    def _fetch(self, statement: Composed, params: list[Any]) -> list[Row]:
        # Binary results and plain tuples: bytea arrives as bytes, with no hex decoding or dict per row.
        with self.datastore.get_connection() as conn, conn.cursor(binary=True, row_factory=tuple_row) as curs:
            curs.execute(statement, params, prepare=True)
            return curs.fetchall()

    def select_rows(self, after: int, limit: int, until: int | None, topics: Sequence[str]) -> list[Row]:
        """Events after global position ``after`` (up to ``until``, only ``topics`` if any), oldest first."""
        statement = self.select_rows_statement + SQL("WHERE notification_id > %s ")
        params: list[Any] = [after]
        if until is not None:
            statement += SQL("AND notification_id <= %s ")
            params.append(until)
        if topics:
            statement += SQL("AND topic = ANY(%s) ")
            params.append(list(topics))
        statement += SQL("ORDER BY notification_id LIMIT %s")
        params.append(limit)
        return self._fetch(statement, params)

    def select_stream_rows(self, originator_id: str, after_version: int, until: int | None) -> list[Row]:
        """One stream's events after ``after_version``, up to global position ``until``."""
        statement = self.select_rows_statement + SQL("WHERE originator_id = %s AND originator_version > %s ")
        params: list[Any] = [originator_id, after_version]
        if until is not None:
            statement += SQL("AND notification_id <= %s ")
            params.append(until)
        statement += SQL("ORDER BY originator_version")
        return self._fetch(statement, params)
