"""The projections' own database: a SQLite file or a PostgreSQL schema, apart from the log.

Every projection keeps its rows in one table, keyed ``(projection, kind, key)`` with the row as
msgspec JSON, and its position in a tracking table. Rows and position change in one transaction,
and the position moves by compare-and-set, so a crash never applies an event twice or skips one and
two runners of the same projection cannot both commit the same stretch of the log.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from oneiros._errors import InvalidStoreURL, ProjectionConflict
from oneiros.events._backends import _postgres_parts

__all__ = ["Cursor", "ProjectionDB", "RowWrite", "default_projection_url", "open_projection_db"]

TRACKING = "oneiros_projection_tracking"
ROWS = "oneiros_projection_rows"
# (kind, key, data); data None deletes the row
RowWrite = tuple[str, str, bytes | None]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchone(self) -> Any: ...


class ProjectionDB:
    """SQL shared by both engines; subclasses supply the connection and the parameter mark."""

    url: str
    mark = "?"

    def _sql(self, sql: str) -> str:
        return sql if self.mark == "?" else sql.replace("?", self.mark)

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Cursor]:  # pragma: no cover - overridden
        raise NotImplementedError
        yield

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _create(self, blob: str) -> None:
        with self.transaction() as c:
            c.execute(f"CREATE TABLE IF NOT EXISTS {TRACKING} (projection TEXT PRIMARY KEY, position BIGINT NOT NULL)")
            c.execute(
                f"CREATE TABLE IF NOT EXISTS {ROWS} (projection TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, "
                f"data {blob} NOT NULL, PRIMARY KEY (projection, kind, key))"
            )

    def position(self, projection: str) -> int:
        """The last log position the projection's rows include (0 when never built)."""
        with self.transaction(write=False) as c:
            c.execute(self._sql(f"SELECT position FROM {TRACKING} WHERE projection = ?"), (projection,))
            row = c.fetchone()
        return int(row[0]) if row else 0

    def commit(self, projection: str, expected: int, position: int, writes: Sequence[RowWrite]) -> None:
        """Write ``writes`` and move the position from ``expected`` to ``position``, all or nothing."""
        upsert = self._sql(
            f"INSERT INTO {ROWS} (projection, kind, key, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (projection, kind, key) DO UPDATE SET data = excluded.data"
        )
        delete = self._sql(f"DELETE FROM {ROWS} WHERE projection = ? AND kind = ? AND key = ?")
        with self.transaction() as c:
            if expected == 0:
                c.execute(
                    self._sql(f"INSERT INTO {TRACKING} (projection, position) VALUES (?, 0) ON CONFLICT DO NOTHING"),
                    (projection,),
                )
            c.execute(
                self._sql(f"UPDATE {TRACKING} SET position = ? WHERE projection = ? AND position = ?"),
                (position, projection, expected),
            )
            if c.rowcount != 1:
                c.execute(self._sql(f"SELECT position FROM {TRACKING} WHERE projection = ?"), (projection,))
                found = c.fetchone()
                raise ProjectionConflict(projection, expected, int(found[0]) if found else None)
            puts = [(projection, k, key, d) for k, key, d in writes if d is not None]
            dels = [(projection, k, key) for k, key, d in writes if d is None]
            if puts:
                c.executemany(upsert, puts)
            if dels:
                c.executemany(delete, dels)

    def get(self, projection: str, kind: str, key: str) -> bytes | None:
        with self.transaction(write=False) as c:
            c.execute(
                self._sql(f"SELECT data FROM {ROWS} WHERE projection = ? AND kind = ? AND key = ?"),
                (projection, kind, key),
            )
            row = c.fetchone()
        return bytes(row[0]) if row else None

    def get_many(self, projection: str, kind: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The rows of ``keys`` that exist, in one query per 500 keys."""
        found: dict[str, bytes] = {}
        with self.transaction(write=False) as c:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ", ".join("?" * len(chunk))
                c.execute(
                    self._sql(f"SELECT key, data FROM {ROWS} WHERE projection = ? AND kind = ? AND key IN ({marks})"),
                    [projection, kind, *chunk],
                )
                found.update((str(key), bytes(data)) for key, data in c.fetchall())
        return found

    def scan(self, projection: str, kind: str | None = None, prefix: str = "") -> list[tuple[str, str, bytes]]:
        """Rows of ``projection`` (of one ``kind`` if given, with keys starting ``prefix``), ordered
        by kind then key."""
        sql = f"SELECT kind, key, data FROM {ROWS} WHERE projection = ?"
        params: list[Any] = [projection]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        if prefix:
            # A range rather than LIKE, so the primary key index serves it on both engines.
            sql += " AND key >= ? AND key < ?"
            params += [prefix, prefix + "\U0010ffff"]
        with self.transaction(write=False) as c:
            c.execute(self._sql(sql + " ORDER BY kind, key"), params)
            rows = [(str(k), str(key), bytes(d)) for k, key, d in c.fetchall()]
        # A PostgreSQL locale collation may order punctuation loosely: keep the exact prefix only.
        return [r for r in rows if r[1].startswith(prefix)] if prefix else rows

    def drop(self, projection: str) -> None:
        """Forget the projection's rows and position, in one transaction."""
        with self.transaction() as c:
            c.execute(self._sql(f"DELETE FROM {ROWS} WHERE projection = ?"), (projection,))
            c.execute(self._sql(f"DELETE FROM {TRACKING} WHERE projection = ?"), (projection,))

    def digest(self, projection: str) -> str:
        """A hash of every row of the projection, stable across engines."""
        h = hashlib.sha256()
        for kind, key, data in self.scan(projection):
            h.update(kind.encode() + b"\0" + key.encode() + b"\0" + data + b"\0")
        return h.hexdigest()


class SQLiteDB(ProjectionDB):
    def __init__(self, url: str, path: str) -> None:
        self.url = url
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode with explicit BEGIN IMMEDIATE: the write lock is taken up front, so a
        # commit never fails half-way on a lock upgrade.
        self._conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
        self._lock = threading.Lock()
        if path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._create("BLOB")

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Cursor]:
        # One connection, so one transaction at a time: a reader thread waits for a follower's commit.
        with self._lock:
            c = self._conn.cursor()
            # A writer takes the lock up front so its commit never fails on a lock upgrade; a reader
            # takes none and, under WAL, never holds up the follower.
            c.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield c
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                c.execute("COMMIT")
            finally:
                c.close()

    def close(self) -> None:
        self._conn.close()


class PostgresDB(ProjectionDB):
    mark = "%s"

    def __init__(self, url: str, conninfo: str, schema: str) -> None:
        import psycopg  # noqa: PLC0415 - PostgreSQL is an optional extra

        self.url = url
        self._conn = psycopg.connect(conninfo, autocommit=True)
        self._lock = threading.Lock()
        self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self._conn.execute(f'SET search_path TO "{schema}"')
        self._create("BYTEA")

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Cursor]:
        with self._lock, self._conn.transaction(), self._conn.cursor() as c:
            yield c

    def close(self) -> None:
        self._conn.close()


def default_projection_url(store_url: str) -> str:
    """Where a store's projections live unless told otherwise: a sibling SQLite file, a sibling
    PostgreSQL schema, or memory for an in-memory store."""
    scheme, _, rest = store_url.partition("://")
    if scheme == "sqlite":
        path = Path(rest[1:])
        return f"sqlite:///{path.with_name(path.stem + '.projections.db')}"
    if scheme in ("postgresql", "postgres"):
        base, _, query = store_url.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        schema = params.get("schema", "public")
        params["schema"] = "oneiros_projections" if schema == "public" else f"{schema}_proj"
        return base + "?" + "&".join(f"{k}={v}" for k, v in params.items())
    return "memory://"


def open_projection_db(url: str) -> ProjectionDB:
    """``memory://``, ``sqlite:///path.db`` or ``postgresql://user@host:port/db?schema=name``."""
    scheme, sep, rest = url.partition("://")
    if scheme == "memory" and sep:
        return SQLiteDB(url, ":memory:")
    if scheme == "sqlite" and rest.startswith("/") and rest != "/":
        try:
            return SQLiteDB(url, rest[1:])
        except (sqlite3.Error, OSError) as exc:
            raise InvalidStoreURL(url, f"cannot open SQLite file {rest[1:]!r}: {exc}") from None
    if scheme in ("postgresql", "postgres"):
        parts = _postgres_parts(url)
        conninfo = f"host={parts['host']} port={parts['port']} dbname={parts['dbname']} user={parts['user']}" + (
            f" password={parts['password']}" if parts["password"] else ""
        )
        return PostgresDB(url, conninfo, parts["schema"])
    raise InvalidStoreURL(url, "expected memory://, sqlite:///PATH or postgresql://... for the projections")
