"""The three store backends, each an eventsourcing process recorder plus the few reads it lacks.

eventsourcing gives the append with its conflict detection, tracking (for projections) and the
PostgreSQL LISTEN/NOTIFY subscription. What it lacks, and we add here per backend, is a batch insert
on SQLite that does not go row by row, and a stream read that carries each event's global position.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from eventsourcing.persistence import IntegrityError, OperationalError, ProcessRecorder, StoredEvent, Tracking
from eventsourcing.popo import POPOProcessRecorder
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteProcessRecorder

from oneiros._errors import InvalidStoreURL

__all__ = ["Backend", "Row", "open_backend"]

EVENTS_TABLE = "oneiros_events"
# (position, golem_id, stream_version, topic, state)
Row = tuple[int, str, int, str, bytes]


class Backend(Protocol):
    """What the event store needs from a backend."""

    url: str

    @property
    def recorder(self) -> ProcessRecorder: ...

    def insert(self, stored: Sequence[StoredEvent]) -> Sequence[int]: ...

    def rows(self, after: int, limit: int, until: int | None, topics: Sequence[str]) -> list[Row]: ...

    def stream_rows(self, golem_id: str, after_version: int, until: int | None) -> list[Row]: ...

    def head(self) -> int: ...

    def close(self) -> None: ...


class _FastSQLiteRecorder(SQLiteProcessRecorder):
    """Inserts a batch with one ``executemany`` instead of one ``execute`` per row.

    Positions are SQLite rowids. Without AUTOINCREMENT a new rowid is ``max(rowid) + 1``, and the
    write lock is held from the first insert to commit, so a batch's rowids are contiguous and end
    at the maximum read back inside the same transaction.
    """

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        params = [(s.originator_id, s.originator_version, s.topic, s.state) for s in stored_events]
        c.executemany(self.insert_events_statement, params)
        c.execute(self.select_max_notification_id_statement)
        last = int(c.fetchone()[0])
        tracking: Tracking | None = kwargs.get("tracking")
        if tracking is not None:
            self._insert_tracking(c, tracking)
        return list(range(last - len(params) + 1, last + 1))


class _Creatable(Protocol):
    def create_table(self) -> None: ...


_R = TypeVar("_R", bound=_Creatable)


def _created(make: Callable[[], _R], attempts: int = 5) -> _R:
    """A recorder whose tables exist, even when other processes create them at the same moment.

    Two races are known on a fresh database: eventsourcing checks for its tracking table, creates the
    tables, then inserts a migration row, so a process that checked before another created them
    inserts that row twice (IntegrityError); and SQLite's switch to WAL mode takes a lock that does
    not wait ("database is locked"). Both leave the database whole, so a fresh attempt succeeds.
    """
    for attempt in range(1, attempts + 1):
        try:
            recorder = make()
            recorder.create_table()
        except (IntegrityError, OperationalError, sqlite3.OperationalError):
            if attempt == attempts:
                raise
            time.sleep(0.02 * attempt)
            continue
        return recorder
    raise AssertionError("unreachable")


class SQLiteBackend:
    def __init__(self, url: str, path: str) -> None:
        self.url = url
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.datastore = SQLiteDatastore(path, lock_timeout=30, originator_id_type="text")
        self.recorder: _FastSQLiteRecorder = _created(
            lambda: _FastSQLiteRecorder(self.datastore, events_table_name=EVENTS_TABLE)
        )
        self._select = f"SELECT rowid, originator_id, originator_version, topic, state FROM {EVENTS_TABLE} "

    def insert(self, stored: Sequence[StoredEvent]) -> Sequence[int]:
        return self.recorder.insert_events(stored) or []

    def _fetch(self, sql: str, params: list[Any]) -> list[Row]:
        with self.datastore.transaction(commit=False) as c:
            # Plain tuples: sqlite3.Row objects (the pool's row factory) cost more than the decode.
            c.sqlite_cursor.row_factory = None
            c.execute(sql, params)
            rows: list[Row] = c.fetchall()
            return rows

    def rows(self, after: int, limit: int, until: int | None, topics: Sequence[str]) -> list[Row]:
        sql = self._select + "WHERE rowid > ? "
        params: list[Any] = [after]
        if until is not None:
            sql += "AND rowid <= ? "
            params.append(until)
        if topics:
            sql += f"AND topic IN ({','.join('?' * len(topics))}) "
            params.extend(topics)
        sql += "ORDER BY rowid LIMIT ?"
        params.append(limit)
        return self._fetch(sql, params)

    def stream_rows(self, golem_id: str, after_version: int, until: int | None) -> list[Row]:
        sql = self._select + "WHERE originator_id = ? AND originator_version > ? "
        params: list[Any] = [golem_id, after_version]
        if until is not None:
            sql += "AND rowid <= ? "
            params.append(until)
        sql += "ORDER BY originator_version"
        return self._fetch(sql, params)

    def head(self) -> int:
        return self.recorder.max_notification_id() or 0

    def close(self) -> None:
        self.datastore.close()


class MemoryBackend:
    def __init__(self, url: str) -> None:
        self.url = url
        self.recorder = POPOProcessRecorder()

    def insert(self, stored: Sequence[StoredEvent]) -> Sequence[int]:
        return self.recorder.insert_events(stored) or []

    def rows(self, after: int, limit: int, until: int | None, topics: Sequence[str]) -> list[Row]:
        found = self.recorder.select_notifications(after, limit, stop=until, topics=topics, inclusive_of_start=False)
        return [(n.id, str(n.originator_id), n.originator_version, n.topic, n.state) for n in found]

    def stream_rows(self, golem_id: str, after_version: int, until: int | None) -> list[Row]:
        # The in-memory recorder keeps no position per stream event; a scan is fine at test sizes.
        out: list[Row] = []
        after = 0
        while batch := self.rows(after, 10_000, until, ()):
            out.extend(r for r in batch if r[1] == golem_id and r[2] > after_version)
            after = batch[-1][0]
        return out

    def head(self) -> int:
        return self.recorder.max_notification_id() or 0

    def close(self) -> None:
        pass


class PostgresBackend:
    def __init__(self, url: str, parts: dict[str, Any]) -> None:
        # psycopg comes with the optional postgres extra, so import only when asked for PostgreSQL.
        from eventsourcing.postgres import PostgresDatastore, PostgresProcessRecorder  # noqa: PLC0415

        self.url = url
        schema = parts["schema"]
        self.datastore = PostgresDatastore(
            parts["dbname"],
            parts["host"],
            parts["port"],
            parts["user"],
            parts["password"],
            schema=schema,
            originator_id_type="text",
            pool_size=4,
            max_overflow=4,
            lock_timeout=30,
        )
        if schema != "public":
            with self.datastore.transaction(commit=True) as c:
                c.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self.recorder = _created(lambda: PostgresProcessRecorder(self.datastore, events_table_name=EVENTS_TABLE))
        self._select = (
            f'SELECT notification_id, originator_id, originator_version, topic, state FROM "{schema}"."{EVENTS_TABLE}" '
        )

    def insert(self, stored: Sequence[StoredEvent]) -> Sequence[int]:
        return self.recorder.insert_events(stored) or []

    def _fetch(self, sql: str, params: list[Any]) -> list[Row]:
        with self.datastore.transaction(commit=False) as c:
            c.execute(sql, params)
            return [
                (r["notification_id"], r["originator_id"], r["originator_version"], r["topic"], bytes(r["state"]))
                for r in c.fetchall()
            ]

    def rows(self, after: int, limit: int, until: int | None, topics: Sequence[str]) -> list[Row]:
        sql = self._select + "WHERE notification_id > %s "
        params: list[Any] = [after]
        if until is not None:
            sql += "AND notification_id <= %s "
            params.append(until)
        if topics:
            sql += "AND topic = ANY(%s) "
            params.append(list(topics))
        sql += "ORDER BY notification_id LIMIT %s"
        params.append(limit)
        return self._fetch(sql, params)

    def stream_rows(self, golem_id: str, after_version: int, until: int | None) -> list[Row]:
        sql = self._select + "WHERE originator_id = %s AND originator_version > %s "
        params: list[Any] = [golem_id, after_version]
        if until is not None:
            sql += "AND notification_id <= %s "
            params.append(until)
        sql += "ORDER BY originator_version"
        return self._fetch(sql, params)

    def head(self) -> int:
        return self.recorder.max_notification_id() or 0

    def close(self) -> None:
        self.datastore.close()


def _postgres_parts(url: str) -> dict[str, Any]:
    split = urlsplit(url)
    dbname = unquote(split.path.lstrip("/"))
    if not dbname:
        raise InvalidStoreURL(url, "no database name after the host, as in postgresql://host/dbname")
    try:
        port = split.port or 5432
    except ValueError:
        raise InvalidStoreURL(url, "the port is not a number") from None
    query = parse_qs(split.query)
    schema = query.get("schema", ["public"])[0]
    if not schema.replace("_", "").isalnum():
        raise InvalidStoreURL(url, f"schema {schema!r} must be letters, digits and underscores")
    try:
        connect_timeout = float(query.get("connect_timeout", ["5"])[0])
    except ValueError:
        raise InvalidStoreURL(url, "connect_timeout must be a number of seconds") from None
    if not 0 < connect_timeout <= 3600:
        raise InvalidStoreURL(url, "connect_timeout must be between 0 and 3600 seconds")
    return {
        "connect_timeout": connect_timeout,
        "dbname": dbname,
        "host": split.hostname or "127.0.0.1",
        "port": port,
        "user": unquote(split.username or "postgres"),
        "password": unquote(split.password or ""),
        "schema": schema,
    }


def locate_store(url: str) -> tuple[str, Any]:
    """``("memory", None)``, ``("sqlite", path)`` or ``("postgresql", parts)`` for a valid store URL."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise InvalidStoreURL(url, "expected scheme://..., one of memory://, sqlite:///PATH, postgresql://...")
    if scheme == "memory":
        return "memory", None
    if scheme == "sqlite":
        if not rest.startswith("/") or rest == "/":
            raise InvalidStoreURL(url, "expected sqlite:///relative/path.db or sqlite:////absolute/path.db")
        return "sqlite", rest[1:]
    if scheme in ("postgresql", "postgres"):
        parts = _postgres_parts(url)
        try:
            import psycopg  # noqa: F401, PLC0415 - the optional extra; see PostgresBackend
        except ImportError:  # pragma: no cover - depends on the install
            raise InvalidStoreURL(url, "PostgreSQL needs the extra: pip install 'oneiros[postgres]'") from None
        return "postgresql", parts
    raise InvalidStoreURL(url, f"unknown scheme {scheme!r}; expected memory, sqlite or postgresql")


def open_backend(url: str) -> Backend:
    """A backend for ``memory://``, ``sqlite:///relative.db``, ``sqlite:////abs.db`` or
    ``postgresql://user:password@host:port/dbname?schema=name&connect_timeout=5``."""
    kind, target = locate_store(url)
    if kind == "memory":
        return MemoryBackend(url)
    if kind == "sqlite":
        try:
            return SQLiteBackend(url, target)
        except (sqlite3.Error, OSError) as exc:
            raise InvalidStoreURL(url, f"cannot open SQLite file {target!r}: {exc}") from None
    return PostgresBackend(url, target)
