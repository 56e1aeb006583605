"""The three store backends: eventsourcing process recorders, extended only through their public API.

eventsourcing gives each backend its tables, its conflict detection, tracking for projections and
(on PostgreSQL) the LISTEN/NOTIFY subscription. Each recorder here overrides the public
``insert_events`` to write a batch the way its database writes fastest (SQLite ``executemany``,
PostgreSQL binary ``COPY``) and adds two reads that return plain tuples with each event's global
position, which the store decodes in one msgspec pass. ``tests/test_recorders.py`` runs
eventsourcing's own recorder test suites against these classes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar
from uuid import UUID

from eventsourcing.persistence import (
    ApplicationRecorder,
    IntegrityError,
    InternalError,
    Notification,
    OperationalError,
    StoredEvent,
    Subscription,
    Tracking,
)
from eventsourcing.popo import POPOProcessRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteProcessRecorder

from oneiros._errors import InvalidStoreURL
from oneiros.store._rows import (
    EVENTS_TABLE,
    Row,
    Stored,
    StoredRow,
    StoredTuple,
    TallyRow,
    stored_rows,
    tracking_refused,
)
from oneiros.store._urls import PostgresURL, StoreURL

__all__ = [
    "EVENTS_TABLE",
    "Backend",
    "Feed",
    "MemoryRecorder",
    "Recorder",
    "Row",
    "SQLiteRecorder",
    "Stored",
    "StoredRow",
    "StoredTuple",
    "TallyRow",
    "open_backend",
]


class Recorder(Protocol):
    """What the store uses of its eventsourcing process recorder, and the two tuple reads it adds."""

    def insert_events(self, stored_events: Sequence[Stored], **kwargs: Any) -> Sequence[int] | None: ...

    def max_notification_id(self) -> int | None: ...

    def max_tracking_id(self, application_name: str) -> int | None: ...

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]: ...

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]: ...

    def subscribe(self, gt: int | None = None, topics: Sequence[str] = ()) -> Subscription[Any]: ...

    def select_rows(
        self, after: int, limit: int, until: int | None, topics: Sequence[str], skip: Sequence[str] = ()
    ) -> list[Row]: ...

    def select_stream_rows(
        self, originator_id: str, after_version: int, until: int | None, topics: Sequence[str] = ()
    ) -> list[Row]: ...

    def select_tallies(self, after: int, until: int, topics: Sequence[str]) -> list[TallyRow]: ...


class Feed(Protocol):
    """New events as a backend delivers them: eventsourcing ``Notification`` objects, or rows."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> Any: ...

    def stop(self) -> None: ...

    def __next__(self) -> Notification | Row: ...


class Backend(Protocol):
    """What the event store holds: its URL and its recorder."""

    url: str
    read_page: int
    """Rows a paged read of the log fetches at once: what suits the database, not the reader."""

    @property
    def recorder(self) -> Recorder: ...

    def subscribe(self, after: int, topics: Sequence[str], poll_interval: float) -> Feed: ...

    def close(self) -> None: ...


class PollingSubscription(Subscription[ApplicationRecorder]):
    """eventsourcing's subscription for a recorder that cannot notify: it polls every ``interval``."""

    def __init__(
        self, recorder: ApplicationRecorder, gt: int | None = None, topics: Sequence[str] = (), *, interval: float
    ) -> None:
        super().__init__(recorder, gt, topics)
        self.source = recorder
        self.after = gt or 0
        self.wanted = list(topics)
        self.interval = interval
        self.stopped = threading.Event()
        self.pending: deque[Notification] = deque()

    def stop(self) -> None:
        super().stop()
        self.stopped.set()

    def __next__(self) -> Notification:
        while not self.pending:
            if self.stopped.is_set():
                raise StopIteration
            found = self.source.select_notifications(self.after, 500, topics=self.wanted, inclusive_of_start=False)
            if found:
                self.pending.extend(found)
                self.after = found[-1].id
            else:
                self.stopped.wait(self.interval)
        if self.stopped.is_set():
            raise StopIteration
        return self.pending.popleft()


class SQLiteRecorder(SQLiteProcessRecorder):
    """eventsourcing's SQLite process recorder, inserting a batch with one ``executemany``.

    Positions are SQLite rowids. Without AUTOINCREMENT a new rowid is ``max(rowid) + 1``, and the
    write lock is held from the first insert to commit, so a batch's rowids are contiguous and end
    at the maximum read back inside the same transaction.
    """

    def __init__(self, datastore: SQLiteDatastore, *, events_table_name: str = EVENTS_TABLE) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.select_rows_statement = f"SELECT rowid, originator_version, topic, state FROM {events_table_name} "
        self.tallies_statement = (
            f"SELECT originator_id, topic, COUNT(*), MAX(originator_version), MAX(rowid) FROM {events_table_name} "
            "WHERE rowid > ? AND rowid <= ? AND topic IN ({}) GROUP BY originator_id, topic"
        )

    def insert_events(self, stored_events: Sequence[Stored], **kwargs: Any) -> Sequence[int] | None:
        tracking: Tracking | None = kwargs.get("tracking")
        params = stored_rows(stored_events)
        if tracking is not None and not self.datastore.single_row_tracking:
            # The legacy multi-row tracking table: eventsourcing's own path.
            return super().insert_events([StoredEvent(*p) for p in params], **kwargs)
        ids: Sequence[int] = ()
        with self.datastore.transaction(commit=True) as c:
            if params:
                c.executemany(self.insert_events_statement, params)
                c.execute(self.select_max_notification_id_statement)
                last = int(c.fetchone()[0])
                ids = list(range(last - len(params) + 1, last + 1))
            if tracking is not None:
                c.execute(
                    self.insert_tracking_statement,
                    {"application_name": tracking.application_name, "notification_id": tracking.notification_id},
                )
                if c.fetchone() is None:
                    raise tracking_refused(tracking)
        return ids

    def subscribe(
        self, gt: int | None = None, topics: Sequence[str] = (), *, poll_interval: float = 0.05
    ) -> Subscription[ApplicationRecorder]:
        """New events after ``gt``; SQLite cannot notify, so the subscription polls."""
        return PollingSubscription(self, gt, topics, interval=poll_interval)

    def _select_tuples(self, sql: str, params: list[Any]) -> list[Row]:
        with self.datastore.transaction(commit=False) as c:
            # Plain tuples: sqlite3.Row objects (the pool's row factory) cost more than the decode.
            c.sqlite_cursor.row_factory = None
            c.execute(sql, params)
            rows: list[Row] = c.fetchall()
            return rows

    def select_rows(
        self, after: int, limit: int, until: int | None, topics: Sequence[str], skip: Sequence[str] = ()
    ) -> list[Row]:
        """Events after global position ``after`` (up to ``until``, only ``topics`` if any, none of
        ``skip``), oldest first."""
        sql = self.select_rows_statement + "WHERE rowid > ? "
        params: list[Any] = [after]
        if until is not None:
            sql += "AND rowid <= ? "
            params.append(until)
        if topics:
            sql += f"AND topic IN ({','.join('?' * len(topics))}) "
            params.extend(topics)
        if skip:
            sql += f"AND topic NOT IN ({','.join('?' * len(skip))}) "
            params.extend(skip)
        sql += "ORDER BY rowid LIMIT ?"
        params.append(limit)
        return self._select_tuples(sql, params)

    def select_tallies(self, after: int, until: int, topics: Sequence[str]) -> list[TallyRow]:
        """The events of ``topics`` in positions (``after``, ``until``], counted per stream and topic."""
        sql = self.tallies_statement.format(",".join("?" * len(topics)))
        return self._select_tuples(sql, [after, until, *topics])  # type: ignore[return-value]  # the same plain tuples

    def select_stream_rows(
        self, originator_id: str, after_version: int, until: int | None, topics: Sequence[str] = ()
    ) -> list[Row]:
        """One stream's events after ``after_version``, up to global position ``until``, only
        ``topics`` if any."""
        sql = self.select_rows_statement + "WHERE originator_id = ? AND originator_version > ? "
        params: list[Any] = [originator_id, after_version]
        if until is not None:
            sql += "AND rowid <= ? "
            params.append(until)
        if topics:
            sql += f"AND topic IN ({','.join('?' * len(topics))}) "
            params.extend(topics)
        sql += "ORDER BY originator_version"
        return self._select_tuples(sql, params)


class MemoryRecorder(POPOProcessRecorder):
    """eventsourcing's in-memory process recorder, with the store's tuple reads."""

    def insert_events(self, stored_events: Sequence[Stored], **kwargs: Any) -> Sequence[int] | None:
        events = [s if isinstance(s, StoredEvent) else StoredEvent(*s) for s in stored_events]
        ids: Sequence[int] | None = super().insert_events(events, **kwargs)
        return ids

    def select_rows(
        self, after: int, limit: int, until: int | None, topics: Sequence[str], skip: Sequence[str] = ()
    ) -> list[Row]:
        out: list[Row] = []
        # Skipped topics are dropped after the read, so a page may take several reads to fill.
        while len(out) < limit:
            found = self.select_notifications(after, limit, stop=until, topics=topics, inclusive_of_start=False)
            out.extend((n.id, n.originator_version, n.topic, n.state) for n in found if n.topic not in skip)
            if len(found) < limit:
                break
            after = found[-1].id
        return out[:limit]

    def select_tallies(self, after: int, until: int, topics: Sequence[str]) -> list[TallyRow]:
        counted: dict[tuple[str, str], list[int]] = {}
        while found := self.select_notifications(after, 10_000, stop=until, topics=topics, inclusive_of_start=False):
            for n in found:
                entry = counted.setdefault((str(n.originator_id), n.topic), [0, 0, 0])
                entry[0] += 1
                entry[1], entry[2] = n.originator_version, n.id
            after = found[-1].id
        return [(stream, topic, n, version, position) for (stream, topic), (n, version, position) in counted.items()]

    def select_stream_rows(
        self, originator_id: str, after_version: int, until: int | None, topics: Sequence[str] = ()
    ) -> list[Row]:
        # The in-memory recorder keeps no position per stream event; a scan is fine at test sizes.
        out: list[Row] = []
        after = 0
        while found := self.select_notifications(after, 10_000, stop=until, topics=topics, inclusive_of_start=False):
            out.extend(
                (n.id, n.originator_version, n.topic, n.state)
                for n in found
                if n.originator_id == originator_id and n.originator_version > after_version
            )
            after = found[-1].id
        return out


class _Creatable(Protocol):
    def create_table(self) -> None: ...


_R = TypeVar("_R", bound=_Creatable)


def _created(make: Callable[[], _R], attempts: int = 5) -> _R:
    """A recorder whose tables exist, even when other processes create them at the same moment.

    Two races are known on a fresh database: eventsourcing checks for its tracking table, creates the
    tables, then inserts a migration row, so a process that checked before another created them
    inserts that row twice (IntegrityError); and SQLite's switch to WAL mode takes a lock that does
    not wait ("database is locked"). PostgreSQL refuses one of two concurrent ``CREATE ... IF NOT
    EXISTS`` ("tuple concurrently updated", an InternalError). All leave the database whole, so a
    fresh attempt succeeds.
    """
    for attempt in range(1, attempts + 1):
        try:
            recorder = make()
            recorder.create_table()
        except (IntegrityError, InternalError, OperationalError, sqlite3.OperationalError):
            if attempt == attempts:
                raise
            time.sleep(0.02 * attempt)
            continue
        return recorder
    raise AssertionError("unreachable")


class SQLiteBackend:
    # A page of a few megabytes stays in the CPU's cache while it is decoded: 5,000 rows replayed
    # 3% slower than 2,000 against the same raw read (benchmarks/store.py).
    read_page = 2_000

    def __init__(self, url: str, path: str) -> None:
        self.url = url
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.datastore = SQLiteDatastore(path, lock_timeout=30, originator_id_type="text")
        self.recorder: SQLiteRecorder = _created(lambda: SQLiteRecorder(self.datastore))

    def subscribe(self, after: int, topics: Sequence[str], poll_interval: float) -> Subscription[Any]:
        return self.recorder.subscribe(after, topics, poll_interval=poll_interval)

    def close(self) -> None:
        self.datastore.close()


class MemoryBackend:
    read_page = 2_000

    def __init__(self, url: str) -> None:
        self.url = url
        self.recorder = MemoryRecorder()

    def subscribe(self, after: int, topics: Sequence[str], poll_interval: float) -> Subscription[Any]:
        return self.recorder.subscribe(after, topics)

    def close(self) -> None:
        pass


class PostgresBackend:
    # Each page is a round trip, a pooled connection and an index scan started again: 2,000-row
    # pages replayed at 0.82 of one raw SELECT and decode, 5,000-row and larger ones at 0.88
    # (benchmarks/store.py); 5,000 rows of a few hundred bytes still fit a few megabytes.
    read_page = 5_000

    def __init__(self, url: str, parts: PostgresURL) -> None:
        # psycopg comes with the optional postgres extra, so import only when asked for PostgreSQL.
        from oneiros.store._postgres import PostgresRecorder, postgres_datastore  # noqa: PLC0415

        self.url = url
        self.datastore = postgres_datastore(parts)
        self.recorder: PostgresRecorder = _created(lambda: PostgresRecorder(self.datastore))

    def subscribe(self, after: int, topics: Sequence[str], poll_interval: float) -> Feed:
        from oneiros.store._postgres import ListeningFeed  # noqa: PLC0415 - see __init__

        return ListeningFeed(self.recorder, after, topics)

    def close(self) -> None:
        self.datastore.close()


def open_backend(where: StoreURL) -> Backend:
    """A backend for the store ``where`` names."""
    if where.kind == "memory":
        return MemoryBackend(where.url)
    if where.kind == "sqlite":
        if Path(where.path).is_dir():  # sqlite3 opens a directory, then eventsourcing fails on first use
            raise InvalidStoreURL(where.url, f"cannot open SQLite file {where.path!r}: it is a directory")
        try:
            return SQLiteBackend(where.url, where.path)
        except (sqlite3.Error, OSError) as exc:
            raise InvalidStoreURL(where.url, f"cannot open SQLite file {where.path!r}: {exc}") from None
    assert where.postgres is not None  # the parse gives a PostgreSQL URL its parts
    return PostgresBackend(where.url, where.postgres)
