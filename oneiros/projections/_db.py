"""The projections' own database: eventsourcing tracking recorders with a rows table beside them.

A projection database is an eventsourcing *materialised view*: a :class:`TrackingRecorder`
(``SQLiteTrackingRecorder`` or ``PostgresTrackingRecorder``) whose tracking table holds each
projection's position, plus one table of rows keyed ``(projection, kind, key)`` with the row as
msgspec JSON. A commit writes rows and position in one transaction of the recorder's datastore,
recording the position with the recorder's own tracking insert, so a crash never applies an event
twice or skips one.

What eventsourcing does not give, and this adds: the position moves by compare-and-set (its
tracking insert only refuses to go backwards, which would let a second runner that started from the
same position apply the same events again), and a projection can be dropped.

Beside the rows, a table of **term postings in blocks** ``(projection, golem, term, part, first)``
(``_postings.py``, ``_blocks.py``): what a projection that ranks text (the recall index) writes in the same
transaction as its rows and position, one row per term a commit touched, and reads with
:meth:`ProjectionDB.term_counts` and :meth:`ProjectionDB.term_top` (BM25's top k, pruned by
MaxScore), the same on both engines. A row per posting made catching up an index cost a statement
row per word of every episode (2,400 episodes a second) and a ranking read every posting of every
query term.
"""

from __future__ import annotations

import hashlib
import time
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from eventsourcing.persistence import IntegrityError, OperationalError, Tracking, TrackingRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder

from oneiros._errors import InvalidStoreURL, ProjectionConflict
from oneiros.projections._blocks import Okapi, PostingBlocks
from oneiros.projections._postings import Postings
from oneiros.store._presence import check_reachable
from oneiros.store._urls import PostgresURL, StoreURL

__all__ = ["Commit", "Okapi", "ProjectionDB", "RowWrite", "default_projection_url", "open_projection_db"]

ROWS = "oneiros_projection_rows"
TERMS = "oneiros_projection_postings"
_LEGACY_TERMS = "oneiros_projection_terms"
"""A row per posting, before postings were kept in blocks; the recall index's layout 4 rebuilds
its postings into the blocks, so the old table is dropped when a database is opened."""
# (kind, key, data); data None deletes the row
RowWrite = tuple[str, str, bytes | None]


class Commit(NamedTuple):
    """One projection's part of a commit: its rows and postings written, and its position moved
    from ``expected`` (what it read from) to ``position``."""

    projection: str
    expected: int
    position: int
    writes: Sequence[RowWrite]
    terms: Postings | None = None


class ProjectionDB(TrackingRecorder, PostingBlocks):
    """Rows and positions of projections. The SQL is shared; each engine supplies its datastore's
    transactions, the parameter mark, and the table names."""

    url: str
    mark: ClassVar[str] = "?"
    rows_table: str = ROWS
    terms_table: str = TERMS
    tracking_table: str = "tracking"
    real: ClassVar[str] = "REAL"

    if TYPE_CHECKING:
        # The tracking recorder's own insert and datastore, which both engines' recorders provide.
        insert_tracking_statement: Any
        datastore: Any

    def _sql(self, sql: str) -> str:
        return sql if self.mark == "?" else sql.replace("?", self.mark)

    @contextmanager
    def _transaction(self, *, commit: bool) -> Iterator[Any]:  # pragma: no cover - overridden
        raise NotImplementedError
        yield

    def _lock(self, c: Any, projection: str) -> None:
        """Serialise commits of one projection (PostgreSQL); SQLite's single writer does it already."""

    def _current(self, c: Any, projection: str) -> int:
        c.execute(
            self._sql(f"SELECT MAX(notification_id) AS position FROM {self.tracking_table} WHERE application_name = ?"),
            (projection,),
        )
        row = c.fetchone()
        return int(row["position"] or 0) if row else 0

    def _record_position(self, c: Any, tracking: Tracking) -> None:
        """The recorder's tracking insert, run in the transaction that writes the rows: what its
        ``insert_tracking`` does in a transaction of its own (its public statement and parameters)."""
        c.execute(
            self.insert_tracking_statement,
            {"application_name": tracking.application_name, "notification_id": tracking.notification_id},
        )
        # Single-row tracking returns the row it moved, and nothing when the position would go back.
        if self.datastore.single_row_tracking and c.fetchone() is None:
            name, position = tracking.application_name, tracking.notification_id
            raise IntegrityError(f"Failed to record tracking for {name} {position}")

    def position(self, projection: str) -> int:
        """The last log position the projection's rows include (0 when never built)."""
        return self.max_tracking_id(projection) or 0

    def positions(self, projections: Sequence[str]) -> dict[str, int]:
        """The position of each of ``projections`` (absent: never built), in one query."""
        marks = ", ".join("?" * len(projections))
        sql = self._sql(
            f"SELECT application_name AS name, MAX(notification_id) AS position FROM {self.tracking_table} "
            f"WHERE application_name IN ({marks}) GROUP BY application_name"
        )
        with self._transaction(commit=False) as c:
            c.execute(sql, tuple(projections))
            return {row["name"]: int(row["position"] or 0) for row in c.fetchall()}

    def commit(
        self, projection: str, expected: int, position: int, writes: Sequence[RowWrite], terms: Postings | None = None
    ) -> None:
        """Write ``writes`` (and the postings ``terms``) and move the position from ``expected`` to
        ``position``, all or nothing."""
        self.commit_many([Commit(projection, expected, position, writes, terms)])

    def commit_many(self, commits: Sequence[Commit]) -> None:
        """Several projections' commits in one transaction, all or nothing: ProjectionConflict,
        naming the first projection another runner moved, and nothing written. A follower applies
        each stretch of the log to every projection; one transaction for all of them rather than one
        each made a one-event stretch about three times cheaper (benchmarks/server.py)."""
        ordered = sorted(commits, key=lambda each: each.projection)  # locks taken in one order
        try:
            with self._transaction(commit=True) as c:
                for each in ordered:
                    self._lock(c, each.projection)
                    found = self._current(c, each.projection)
                    if found != each.expected:
                        raise ProjectionConflict(each.projection, each.expected, found)
                for each in ordered:
                    self._write(c, each)
        except OperationalError as exc:
            # SQLite: another process committed between this transaction's read and its write
            # (a stale snapshot cannot be upgraded), which is the same race the check above catches.
            if "locked" not in str(exc) and "busy" not in str(exc).lower():
                raise
            first = ordered[0].projection
            raise ProjectionConflict(first, ordered[0].expected, self.position(first)) from None

    def _write(self, c: Any, commit: Commit) -> None:
        projection, writes = commit.projection, commit.writes
        upsert = self._sql(
            f"INSERT INTO {self.rows_table} (projection, kind, key, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (projection, kind, key) DO UPDATE SET data = excluded.data"
        )
        delete = self._sql(f"DELETE FROM {self.rows_table} WHERE projection = ? AND kind = ? AND key = ?")
        # In key order: SQLite then fills its b-tree page after page rather than all over
        # it, which made writing a projection's rows up to a third faster.
        puts = sorted((projection, k, key, d) for k, key, d in writes if d is not None)
        dels = [(projection, k, key) for k, key, d in writes if d is None]
        if puts:
            c.executemany(upsert, puts)
        if dels:
            c.executemany(delete, dels)
        if commit.terms:
            self._write_terms(c, projection, commit.terms)
        if commit.position > commit.expected:
            self._record_position(c, Tracking(projection, commit.position))

    def get(self, projection: str, kind: str, key: str) -> bytes | None:
        with self._transaction(commit=False) as c:
            c.execute(
                self._sql(f"SELECT data FROM {self.rows_table} WHERE projection = ? AND kind = ? AND key = ?"),
                (projection, kind, key),
            )
            row = c.fetchone()
        return bytes(row["data"]) if row else None

    def get_many(self, projection: str, kind: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The rows of ``keys`` that exist, in one query per 500 keys."""
        found: dict[str, bytes] = {}
        with self._transaction(commit=False) as c:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ", ".join("?" * len(chunk))
                c.execute(
                    self._sql(
                        f"SELECT key, data FROM {self.rows_table} "
                        f"WHERE projection = ? AND kind = ? AND key IN ({marks})"
                    ),
                    [projection, kind, *chunk],
                )
                found.update((str(r["key"]), bytes(r["data"])) for r in c.fetchall())
        return found

    def last_key(self, projection: str, kind: str, prefix: str) -> str | None:
        """The highest key of ``kind`` that starts with ``prefix``, or None when there is none."""
        with self._transaction(commit=False) as c:
            c.execute(
                self._sql(
                    f"SELECT MAX(key) AS key FROM {self.rows_table} "
                    "WHERE projection = ? AND kind = ? AND key >= ? AND key < ?"
                ),
                (projection, kind, prefix, prefix + "\U0010ffff"),
            )
            row = c.fetchone()
        return None if row is None or row["key"] is None else str(row["key"])

    def scan(self, projection: str, kind: str | None = None, prefix: str = "") -> list[tuple[str, str, bytes]]:
        """Rows of ``projection`` (of one ``kind`` if given, with keys starting ``prefix``), ordered
        by kind then key."""
        sql = f"SELECT kind, key, data FROM {self.rows_table} WHERE projection = ?"
        params: list[Any] = [projection]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        if prefix:
            # A range rather than LIKE, so the primary key index serves it on both engines.
            sql += " AND key >= ? AND key < ?"
            params += [prefix, prefix + "\U0010ffff"]
        with self._transaction(commit=False) as c:
            c.execute(self._sql(sql + " ORDER BY kind, key"), params)
            rows = [(str(r["kind"]), str(r["key"]), bytes(r["data"])) for r in c.fetchall()]
        # A PostgreSQL locale collation may order punctuation loosely: keep the exact prefix only.
        return [r for r in rows if r[1].startswith(prefix)] if prefix else rows

    def drop(self, projection: str) -> None:
        """Forget the projection's rows and position, in one transaction."""
        with self._transaction(commit=True) as c:
            self._lock(c, projection)
            c.execute(self._sql(f"DELETE FROM {self.rows_table} WHERE projection = ?"), (projection,))
            c.execute(self._sql(f"DELETE FROM {self.terms_table} WHERE projection = ?"), (projection,))
            # eventsourcing has no way to forget a position; its tracking row is deleted here.
            c.execute(self._sql(f"DELETE FROM {self.tracking_table} WHERE application_name = ?"), (projection,))

    def digest(self, projection: str) -> str:
        """A hash of every row of the projection, stable across engines."""
        h = hashlib.sha256()
        for kind, key, data in self.scan(projection):
            h.update(kind.encode() + b"\0" + key.encode() + b"\0" + data + b"\0")
        # The postings as a list, not as the blocks that hold them: how a term's postings are cut into
        # blocks depends on where commits fell, which a rebuild and a live follower do not share.
        for fields in self.postings(projection):
            h.update(b"\1" + "\0".join(map(str, fields)).encode())
        return h.hexdigest()

    def position_and_digest(self, projection: str) -> tuple[int, str]:
        """The projection's position and the digest of its rows at that position. A runner in
        another process may commit between the reads (a daemon following the log): rows and
        position move together, so the pair is read again until the position held still."""
        while True:
            position = self.position(projection)
            digest = self.digest(projection)
            if self.position(projection) == position:
                return position, digest

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class SQLiteProjectionDB(SQLiteTrackingRecorder, ProjectionDB):
    """A SQLite file (or a private in-memory database) as eventsourcing's SQLite tracking recorder."""

    def __init__(self, url: str, path: str) -> None:
        self.url = url
        if path == ":memory:":
            # A named shared-cache database, so every connection of the pool sees the same one.
            path = f"file:oneiros-projections-{uuid.uuid4().hex}?mode=memory&cache=shared"
        else:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._relaxed: weakref.WeakSet[Any] = weakref.WeakSet()
        super().__init__(SQLiteDatastore(path, lock_timeout=30))
        _create(self)

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            # A rowid table, not WITHOUT ROWID: rows are JSON of a kilobyte or more, and SQLite keeps a
            # WITHOUT ROWID table's whole rows in its key b-tree, which made writing them 3x slower.
            f"CREATE TABLE IF NOT EXISTS {ROWS} (projection TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, "
            "data BLOB NOT NULL, PRIMARY KEY (projection, kind, key))",
            # A rowid table: a block is up to 16 KB, which a WITHOUT ROWID table would keep in its key b-tree.
            f"CREATE TABLE IF NOT EXISTS {TERMS} ({_TERM_COLUMNS.format(blob='BLOB')})",
            f"DROP TABLE IF EXISTS {_LEGACY_TERMS}",
        ]

    @contextmanager
    def _transaction(self, *, commit: bool) -> Iterator[Any]:
        with self.datastore.get_connection(commit=commit) as conn:
            if commit and conn not in self._relaxed:
                # Projections are rebuildable, so a commit need not wait for the disk: in WAL mode
                # NORMAL still keeps rows and position atomic, and may only lose the last commits
                # on power loss (the runner then redoes them). FULL made each catch-up commit an
                # fsync. Only settable outside a transaction, hence once per pooled connection here.
                conn.cursor().execute("PRAGMA synchronous=NORMAL")
                # SQLite's default page cache (2 MB) is what made a catch-up's cost per episode grow
                # with the index: past it, each batch's upserts into the rows' and blocks' b-trees
                # read and wrote pages back and forth (300k episodes: a third of the wall time was
                # waiting for pages). 64 MB per writing connection holds the b-trees' inner pages
                # far past a million episodes.
                conn.cursor().execute(f"PRAGMA cache_size={_CACHE_KIB}")
                self._relaxed.add(conn)
            with conn.transaction(commit=commit) as c:
                yield c

    def close(self) -> None:
        self.datastore.close()


_CACHE_KIB = -64 * 1024
"""SQLite's page cache of a writing connection: negative is in KiB (64 MB), as SQLite's pragma reads it."""

_TERM_COLUMNS = (
    "projection TEXT NOT NULL, golem TEXT NOT NULL, term TEXT NOT NULL, part INTEGER NOT NULL, first BIGINT NOT NULL, "
    "lo BIGINT NOT NULL, hi BIGINT NOT NULL, n INTEGER NOT NULL, max_tf INTEGER NOT NULL, min_len INTEGER NOT NULL, "
    "data {blob} NOT NULL, PRIMARY KEY (projection, golem, term, part, first)"
)


def _create(recorder: TrackingRecorder, attempts: int = 5) -> None:
    """Create the tables even when other processes do so at the same moment: eventsourcing checks
    for its tracking table, creates it, then inserts a migration row, so two processes that both
    checked first collide on that row (IntegrityError), and SQLite's switch to WAL takes a lock that
    does not wait. Both leave the database whole, so another attempt succeeds."""
    for attempt in range(1, attempts + 1):
        try:
            recorder.create_table()  # type: ignore[attr-defined]
        except (IntegrityError, OperationalError):
            if attempt == attempts:
                raise
            time.sleep(0.02 * attempt)
        else:
            return


def _postgres_projection_db(url: str, parts: PostgresURL) -> ProjectionDB:
    # psycopg comes with the optional postgres extra, so it is imported only when asked for.
    from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder  # noqa: PLC0415
    from psycopg.sql import SQL, Identifier  # noqa: PLC0415

    schema = parts.schema
    # The pool below would wait its own timeout and end in eventsourcing's OperationalError (a
    # traceback through every reading command); a server that does not answer is one line.
    check_reachable(url, parts, parts.connect_timeout)

    class PostgresProjectionDB(PostgresTrackingRecorder, ProjectionDB):
        mark = "%s"
        real = "DOUBLE PRECISION"

        def __init__(self) -> None:
            self.url = url
            datastore = PostgresDatastore(
                parts.dbname,
                parts.host,
                parts.port,
                parts.user,
                parts.password,
                schema=schema,
                pool_size=2,
                max_overflow=4,
                lock_timeout=30,
            )
            with datastore.transaction(commit=True) as c:
                c.execute(SQL("CREATE SCHEMA IF NOT EXISTS {0}").format(Identifier(schema)))
            super().__init__(datastore)
            self.rows_table = f'"{schema}".{ROWS}'
            self.terms_table = f'"{schema}".{TERMS}'
            self.tracking_table = f'"{schema}"."{self.tracking_table_name}"'
            self.sql_create_statements.append(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {0}.{1} (projection TEXT NOT NULL, kind TEXT NOT NULL, "
                    "key TEXT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (projection, kind, key))"
                ).format(Identifier(schema), Identifier(ROWS))
            )
            self.sql_create_statements.append(
                SQL("CREATE TABLE IF NOT EXISTS {0}.{1} (" + _TERM_COLUMNS.format(blob="BYTEA") + ")").format(
                    Identifier(schema), Identifier(TERMS)
                )
            )
            self.sql_create_statements.append(
                SQL("DROP TABLE IF EXISTS {0}.{1}").format(Identifier(schema), Identifier(_LEGACY_TERMS))
            )
            _create(self)

        @contextmanager
        def _transaction(self, *, commit: bool) -> Iterator[Any]:
            with self.datastore.transaction(commit=commit) as c:
                yield c

        def _snapshot(self, c: Any) -> None:
            # READ COMMITTED takes a snapshot per statement; a ranking reads a term's blocks in several.
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")

        def _lock(self, c: Any, projection: str) -> None:
            # Two runners that both saw no tracking row would otherwise both insert one; the
            # second's upsert would then move the position forward over the first's rows.
            c.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"oneiros.projection:{projection}",))

        def close(self) -> None:
            self.datastore.close()

    return PostgresProjectionDB()


def default_projection_url(store_url: str) -> str:
    """Where a store's projections live unless told otherwise: a sibling SQLite file, a sibling
    PostgreSQL schema, or memory for an in-memory store (:meth:`StoreURL.projections`)."""
    return StoreURL.parse(store_url).projections()


def open_projection_db(url: str) -> ProjectionDB:
    """``memory://``, ``sqlite:///path.db`` or ``postgresql://user@host:port/db?schema=name``."""
    where = StoreURL.parse(url)
    if where.kind == "memory":
        return SQLiteProjectionDB(url, ":memory:")
    if where.kind == "sqlite":
        try:
            return SQLiteProjectionDB(url, where.path)
        except (OperationalError, OSError) as exc:
            raise InvalidStoreURL(url, f"cannot open SQLite file {where.path!r}: {exc}") from None
    assert where.postgres is not None  # the parse gives a PostgreSQL URL its parts
    return _postgres_projection_db(url, where.postgres)
