"""Snapshots beside the log: a fold's state as of one event, so a reader folds only what came after.

A snapshot is a cache, never a truth. It names the event it was taken at (version, global position
and event id); a reader reads the stream from that event on and uses the snapshot only if the log
still holds that very event there. A snapshot that fails its checksum, was written by another
format, or disagrees with the log is ignored and the stream is folded from the start, so deleting
every snapshot loses nothing. Only the latest snapshot of each (stream, kind) is kept.

Where they live: beside an SQLite file in ``<file>.snapshots/`` (one file each, replaced
atomically), in a ``oneiros_snapshots`` table of the same PostgreSQL schema, and in memory for
``memory://`` stores (one per EventStore object).
"""

from __future__ import annotations

import logging
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar
from urllib.parse import quote

import msgspec
from eventsourcing.persistence import PersistenceError

from oneiros._errors import OneirosError
from oneiros.events._codec import decode_event, encode_event
from oneiros.events._types import DreamStart, Event
from oneiros.store._backends import PostgresBackend, Row, SQLiteBackend
from oneiros.store._store import EventStore, Recorded, decode_rows
from oneiros.store._urls import parse_postgres_url

__all__ = [
    "Sealed",
    "Snapshot",
    "SnapshotKind",
    "SnapshotStore",
    "decode_records",
    "encode_records",
    "open_snapshots",
    "read_from_snapshot",
    "read_stream_paged",
    "read_stream_pages",
    "seal",
    "seal_parts",
    "unseal",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A fold's ``body`` as of the event at ``version`` (``position``, ``event_id``) of ``stream``."""

    kind: str
    format: int
    stream: str
    version: int
    position: int
    event_id: str
    event: memoryview
    """That event as the log stores it: a snapshot is used only where the log holds this very event."""
    body: memoryview
    """Read without a copy: a view into the bytes the snapshot was read from."""

    @classmethod
    def of(cls, kind: str, format: int, last: Recorded, body: bytes) -> Snapshot:
        """A snapshot of ``body``, a fold as of ``last``."""
        topic, state = encode_event(last.meta, last.event)
        return cls(
            kind=kind,
            format=format,
            stream=last.golem_id,
            version=last.version,
            position=last.position,
            event_id=last.meta.event_id,
            event=memoryview(msgspec.msgpack.encode((topic, state))),
            body=memoryview(body),
        )

    def taken_at(self, record: Recorded) -> bool:
        """True if ``record`` is the very event this snapshot was taken at."""
        if (record.version, record.position, record.meta.event_id) != (self.version, self.position, self.event_id):
            return False
        return msgspec.msgpack.encode(encode_event(record.meta, record.event)) == self.event


Sealed = Sequence[bytes | memoryview]
"""A sealed snapshot as the buffers to write one after the other (see :func:`seal_parts`)."""
_PREFIX = struct.Struct("!II")


def seal_parts(snapshot: Snapshot) -> Sealed:
    """The snapshot as buffers laid end to end: a CRC-32 of what follows it (it finds damage;
    nothing here is secret) and the header's length, the header (the snapshot without its body),
    then the body as it is. The body is most of a snapshot (a million episodes' columns), so it
    is never copied into another buffer on its way to the disk."""
    header = msgspec.msgpack.encode(msgspec.structs.replace(snapshot, body=memoryview(b"")))
    crc = zlib.crc32(snapshot.body, zlib.crc32(header))
    return (_PREFIX.pack(crc, len(header)), header, snapshot.body)


def seal(snapshot: Snapshot) -> bytes:
    """:func:`seal_parts` as one bytes object."""
    return b"".join(seal_parts(snapshot))


def unseal(data: bytes | None) -> Snapshot | None:
    """The snapshot ``seal`` wrote, or None when ``data`` is missing, damaged or not one. The body
    is a view into ``data``, not a copy."""
    if data is None or len(data) < _PREFIX.size:
        return None
    view = memoryview(data)
    crc, length = _PREFIX.unpack_from(view)
    if _PREFIX.size + length > len(view) or zlib.crc32(view[_PREFIX.size :]) != crc:
        return None
    try:
        header = msgspec.msgpack.decode(view[_PREFIX.size : _PREFIX.size + length], type=Snapshot)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return msgspec.structs.replace(header, body=view[_PREFIX.size + length :])


def _skipped(stream: str, kind: str, exc: Exception) -> None:
    # A snapshot is a cache: one that cannot be written (a read-only folder or database user)
    # costs the next reader a longer fold, never the command that tried.
    _log.warning("snapshot %s of %s not written: %s", kind, stream, exc)


class SnapshotStore(Protocol):
    def get(self, stream: str, kind: str) -> bytes | None: ...

    def put(self, stream: str, kind: str, data: Sealed) -> None: ...


class MemorySnapshots:
    def __init__(self) -> None:
        self._items: dict[tuple[str, str], bytes] = {}

    def get(self, stream: str, kind: str) -> bytes | None:
        return self._items.get((stream, kind))

    def put(self, stream: str, kind: str, data: Sealed) -> None:
        self._items[(stream, kind)] = b"".join(data)


class FileSnapshots:
    """One file per (stream, kind) in a directory; a write replaces the file atomically, so a
    reader sees the old snapshot or the new one, never half of one."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, stream: str, kind: str) -> Path:
        return self.directory / f"{quote(stream, safe='')}.{kind}.snapshot"

    def get(self, stream: str, kind: str) -> bytes | None:
        try:
            return self._path(stream, kind).read_bytes()
        except OSError:
            return None

    def put(self, stream: str, kind: str, data: Sealed) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_file(self._path(stream, kind), data)
        except OSError as exc:
            _skipped(stream, kind, exc)


class PostgresSnapshots:
    """A ``oneiros_snapshots`` table in the store's own schema, made on first use."""

    def __init__(self, backend: PostgresBackend) -> None:
        self._datastore = backend.datastore
        schema = parse_postgres_url(backend.url).schema
        self._table = f'"{schema}"."oneiros_snapshots"'
        self._ready = False

    def _create(self) -> None:
        if not self._ready:
            with self._datastore.transaction(commit=True) as c:
                c.execute(
                    f"CREATE TABLE IF NOT EXISTS {self._table} "
                    "(stream text NOT NULL, kind text NOT NULL, body bytea NOT NULL, PRIMARY KEY (stream, kind))"
                )
            self._ready = True

    def get(self, stream: str, kind: str) -> bytes | None:
        # A reader never creates the table: without one there is simply no snapshot yet.
        try:
            with self._datastore.transaction(commit=False) as c:
                c.execute(f"SELECT body FROM {self._table} WHERE stream = %s AND kind = %s", [stream, kind])
                row = c.fetchone()
        except PersistenceError:
            return None
        return None if row is None else bytes(row["body"])

    def put(self, stream: str, kind: str, data: Sealed) -> None:
        try:
            self._create()
            with self._datastore.transaction(commit=True) as c:
                c.execute(
                    f"INSERT INTO {self._table} (stream, kind, body) VALUES (%s, %s, %s) "
                    "ON CONFLICT (stream, kind) DO UPDATE SET body = EXCLUDED.body",
                    [stream, kind, b"".join(data)],
                )
        except PersistenceError as exc:
            _skipped(stream, kind, exc)


def replace_file(target: Path, data: bytes | Sealed) -> None:
    """Write ``data`` (bytes, or buffers one after the other) to ``target`` whole or not at all: a
    reader in another process sees the old file or the new one, never a part (a temporary file in
    the same folder, then a rename)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in (data,) if isinstance(data, bytes) else data:
                out.write(part)
        os.replace(tmp, target)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise


def beside_file(store: EventStore, suffix: str) -> Path | None:
    """``<file>.<suffix>`` next to an SQLite store's file (what a store keeps beside its log);
    None for any other store."""
    backend = store.backend
    if isinstance(backend, SQLiteBackend):
        path = backend.url.partition("://")[2][1:]
        if path != ":memory:":
            return Path(f"{path}.{suffix}")
    return None


def open_snapshots(store: EventStore) -> SnapshotStore:
    """Where ``store``'s snapshots live (see the module docstring)."""
    backend = store.backend
    folder = beside_file(store, "snapshots")
    if folder is not None:
        return FileSnapshots(folder)
    if isinstance(backend, PostgresBackend):
        return PostgresSnapshots(backend)
    return MemorySnapshots()


def encode_records(records: Sequence[Recorded]) -> bytes:
    """Records as the log stores them (topic and state), with their position and version."""
    rows = []
    for record in records:
        topic, state = encode_event(record.meta, record.event)
        rows.append((record.position, record.version, topic, state))
    return msgspec.msgpack.encode(rows)


def decode_records(data: bytes | memoryview) -> list[Recorded]:
    rows = msgspec.msgpack.decode(data, type=list[tuple[int, int, str, bytes]])
    out = []
    for position, version, topic, state in rows:
        meta, event = decode_event(topic, state, position)
        out.append(Recorded(position, version, meta, event))
    return out


def read_stream_paged(store: EventStore, stream: str, after_version: int = 0, page: int = 50_000) -> Iterator[Recorded]:
    """``stream``'s events after ``after_version``, about ``page`` at a time, so folding a long
    stream from the start never holds all of it decoded at once (see :func:`read_stream_pages`)."""
    for rows in read_stream_pages(store, stream, after_version, page):
        yield from decode_rows(rows)


def read_stream_pages(  # noqa: PLR0913 - a paged read: range and page size, the rest keyword-only
    store: EventStore,
    stream: str,
    after_version: int = 0,
    page: int = 50_000,
    *,
    until: int | None = None,
    types: Sequence[type[Event]] = (),
) -> Iterator[list[Row]]:
    """``stream``'s stored rows after ``after_version`` up to position ``until`` (the head if None),
    only ``types`` if any (``store.read_stream_rows``), about ``page`` at a time, for a fold that
    decodes only what it needs of each event.

    Pages are windows of global positions; where the stream is sparse among other streams' events
    the window doubles, so a stream that is a thin share of the log costs a few more reads, not
    one per ``page`` positions of the log."""
    head = store.head() if until is None else min(until, store.head())
    end, window = 0, page
    while True:
        end += window
        # The last page reads to the end (events appended since the head was read included) unless
        # the caller set an end of its own.
        bound = end if end < head else (None if until is None else head)
        rows = store.read_stream_rows(stream, after_version=after_version, until=bound, types=types)
        if rows:
            yield rows
        if end >= head:
            return
        if rows:
            after_version = rows[-1][1]
        if len(rows) < page // 2:
            window *= 2


class _CycleOf(msgspec.Struct, frozen=True, gc=False):
    cycle_id: str | None = None


class _MetaOnly(msgspec.Struct, frozen=True, gc=False):
    meta: _CycleOf


# Any stored event (every schema version has the same envelope), reduced to its cycle id.
_cycle_of = msgspec.json.Decoder(_MetaOnly)


def read_cycle(store: EventStore, golem_id: str, cycle_id: str) -> list[Recorded]:
    """Cycle ``cycle_id``'s events in ``golem_id``'s stream (those whose metadata names it), in
    order; none if it never started there.

    A cycle is a few hundred events of a stream that may hold millions of episodes. Its events lie
    between its ``DreamStart`` and the next cycle's (a golem dreams one cycle at a time), found by
    a typed read; the rows between are paged, decoded only as far as their cycle id, and only the
    cycle's own events decoded whole."""
    starts = store.read_stream(golem_id, types=(DreamStart,))
    index = next((i for i, r in enumerate(starts) if r.event.cycle_id == cycle_id), None)  # type: ignore[attr-defined]
    if index is None:
        return []
    start = starts[index]
    until = starts[index + 1].position - 1 if index + 1 < len(starts) else None
    out: list[Recorded] = []
    for rows in read_stream_pages(store, golem_id, after_version=start.version - 1, until=until):
        out.extend(decode_rows([row for row in rows if _cycle_of.decode(row[3]).meta.cycle_id == cycle_id]))
    return out


class SnapshotKind(NamedTuple):
    """Which snapshots a reader takes: its kind, and the format of the body it writes."""

    kind: str
    format: int


def read_from_snapshot(
    store: EventStore,
    snapshots: SnapshotStore,
    stream: str,
    what: SnapshotKind,
    restore: Callable[[Snapshot, Recorded], _T],
) -> tuple[_T | None, Iterable[Recorded]]:
    """What the latest good snapshot of ``stream`` (of kind and format ``what``) restores to
    (``restore`` is given it and the record it was taken at), and the records after it; or None
    and the whole stream, when there is no snapshot the log agrees with. One stream read either way,
    except when a snapshot turns out stale (then a second, full one)."""
    kind, format = what
    snapshot = unseal(snapshots.get(stream, kind))
    if snapshot is not None and snapshot.kind == kind and snapshot.format == format and snapshot.stream == stream:
        records = store.read_stream(stream, after_version=snapshot.version - 1)
        first = records[0] if records else None
        if first is not None and snapshot.taken_at(first):
            try:
                restored = restore(snapshot, first)
            except (ValueError, TypeError, KeyError, IndexError, msgspec.MsgspecError, OneirosError):
                restored = None  # written by another version, or damaged past the checksum: refold
            if restored is not None:
                return restored, records[1:]
    return None, read_stream_paged(store, stream)
