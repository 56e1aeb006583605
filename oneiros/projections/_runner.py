"""The projection runner: catch up from the last tracked position, then follow the log live.

A projection declares the event types it reads and applies them to a :class:`Rows` buffer; the
runner commits the buffer and the new position in one transaction of the projection database.
Events of other types are never read but still advance the position: the runner reads up to a head
it measured first, so the position moves to that head even when nothing in between concerned the
projection (a projection waiting on a position must never wait on events it ignores).

Following is by polling on SQLite and in memory (eventsourcing has no SQLite subscription) and by
LISTEN/NOTIFY on PostgreSQL, where the store's recorder notifies on every insert.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import msgspec

from oneiros._errors import ProjectionConflict
from oneiros.events import Event, EventStore, Recorded, parse_postgres_url
from oneiros.projections._db import ProjectionDB, RowWrite

__all__ = ["LogWaiter", "Projection", "ProjectionRunner", "Rows", "RunnerSettings"]

_T = TypeVar("_T", bound=msgspec.Struct)
_encoder = msgspec.json.Encoder()
_MISSING: Any = object()


class RunnerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How a runner batches and waits."""

    batch_events: int = 5_000
    """Events applied per transaction while catching up."""
    poll_interval_s: float = 0.01
    """Sleep between looks at the head when following by polling (SQLite, memory)."""
    listen_timeout_s: float = 1.0
    """Longest wait for a PostgreSQL notification before looking at the head anyway."""


class Rows:
    """A projection's rows as one batch sees them: read through to the database, written back at
    commit. Values are mutable Structs; call :meth:`put` after changing one."""

    def __init__(self, db: ProjectionDB, projection: str, *, empty: bool = False) -> None:
        self._db = db
        self._projection = projection
        self._empty = empty
        self._cache: dict[tuple[str, str], Any] = {}
        self._dirty: set[tuple[str, str]] = set()

    def get(self, kind: str, key: str, cls: type[_T]) -> _T | None:
        k = (kind, key)
        value: _T | None = self._cache.get(k, _MISSING)
        if value is not _MISSING:
            return value
        # A projection built from position 0 has no rows in the database (drop removes rows and
        # position together), so a rebuild never pays a query for a row it has not written.
        data = None if self._empty else self._db.get(self._projection, kind, key)
        found = None if data is None else msgspec.json.decode(data, type=cls)
        self._cache[k] = found
        return found

    def put(self, kind: str, key: str, value: msgspec.Struct) -> None:
        self._cache[(kind, key)] = value
        self._dirty.add((kind, key))

    def delete(self, kind: str, key: str) -> None:
        self._cache[(kind, key)] = None
        self._dirty.add((kind, key))

    def writes(self) -> list[RowWrite]:
        out: list[RowWrite] = []
        for kind, key in sorted(self._dirty):
            value = self._cache[(kind, key)]
            out.append((kind, key, None if value is None else _encoder.encode(value)))
        return out

    def committed(self) -> None:
        self._dirty.clear()


class Projection(Protocol):
    """A read model: a name, the event types it reads, and how one event changes its rows."""

    name: str
    types: tuple[type[Event], ...]

    def apply(self, record: Recorded, rows: Rows) -> None: ...


class LogWaiter:
    """Blocks until the log may have grown: a PostgreSQL notification, else a short sleep."""

    def __init__(self, store: EventStore, settings: RunnerSettings) -> None:
        self._settings = settings
        self._conn: Any = None
        recorder = store.backend.recorder
        channel = getattr(recorder, "channel_name", None)
        if channel is not None and store.url.startswith(("postgresql://", "postgres://")):
            import psycopg  # noqa: PLC0415 - PostgreSQL is an optional extra

            self._conn = psycopg.connect(parse_postgres_url(store.url).conninfo, autocommit=True)
            self._conn.execute(f'LISTEN "{channel}"')

    @property
    def listening(self) -> bool:
        return self._conn is not None

    def wait(self, stop: threading.Event) -> None:
        if self._conn is None:
            stop.wait(self._settings.poll_interval_s)
            return
        # One notification is enough; those that piled up meanwhile are drained so they do not
        # each cost a pointless catch-up.
        for _ in self._conn.notifies(timeout=self._settings.listen_timeout_s, stop_after=1):
            pass
        for _ in self._conn.notifies(timeout=0.0):
            pass

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


CommitListener = Callable[[str, int], None]


class ProjectionRunner:
    """Keeps projections in ``db`` up to date with ``store``."""

    def __init__(
        self,
        store: EventStore,
        db: ProjectionDB,
        projections: Sequence[Projection],
        settings: RunnerSettings | None = None,
        on_commit: CommitListener | None = None,
    ) -> None:
        self.store = store
        self.db = db
        self.projections = list(projections)
        self.settings = settings or RunnerSettings()
        self.on_commit = on_commit

    def position(self, name: str) -> int:
        return self.db.position(name)

    def catch_up(self, until: int | None = None) -> dict[str, int]:
        """Bring every projection to the head (or to ``until``); returns their positions."""
        head = self.store.head()
        target = head if until is None else min(until, head)
        return {p.name: self._advance(p, target) for p in self.projections}

    def _advance(self, projection: Projection, target: int) -> int:
        start = self.db.position(projection.name)
        if start >= target:
            return start
        rows = Rows(self.db, projection.name, empty=start == 0)
        committed = start
        batch = self.settings.batch_events
        records = self.store.read_all(after=start, until=target, types=projection.types)
        for applied, record in enumerate(records, start=1):
            projection.apply(record, rows)
            if applied % batch == 0:
                self._commit(projection.name, committed, record.position, rows)
                committed = record.position
        self._commit(projection.name, committed, target, rows)
        return target

    def _commit(self, name: str, expected: int, position: int, rows: Rows) -> None:
        self.db.commit(name, expected, position, rows.writes())
        rows.committed()
        if self.on_commit is not None:
            self.on_commit(name, position)

    def rebuild(self, name: str | None = None, until: int | None = None) -> dict[str, int]:
        """Drop projection ``name`` (every one if None) and build it again, to ``until`` if given."""
        chosen = [p for p in self.projections if name is None or p.name == name]
        for p in chosen:
            self.db.drop(p.name)
        head = self.store.head()
        target = head if until is None else min(until, head)
        return {p.name: self._advance(p, target) for p in chosen}

    def follow(self, stop: threading.Event, *, on_idle: Callable[[], None] | None = None) -> None:
        """Catch up, then keep up with new events until ``stop`` is set.

        A conflict means another runner committed the same projection; this runner re-reads the
        position and carries on from there rather than applying anything twice.
        """
        with self.waiter() as waiter:
            while not stop.is_set():
                try:
                    self.catch_up()
                except ProjectionConflict:
                    continue
                if on_idle is not None:
                    on_idle()
                waiter.wait(stop)

    @contextmanager
    def waiter(self) -> Iterator[LogWaiter]:
        waiter = LogWaiter(self.store, self.settings)
        try:
            yield waiter
        finally:
            waiter.close()


def wait_for(predicate: Callable[[], bool], timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass; True if it became true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
