"""The append-only event store: per-golem streams with contiguous versions and one global order."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

import msgspec
from eventsourcing.persistence import (
    IntegrityError,
    Notification,
    PersistenceError,
    Tracking,
)

from oneiros._errors import ProjectionConflict, StoreError, StreamConflict
from oneiros.events._codec import current_decoder, decode_event, encode_event, split_topic, topics_for
from oneiros.events._types import Event, EventMeta, registered_events
from oneiros.store._backends import Backend, Feed, Row, StoredTuple, open_backend
from oneiros.store._presence import check_reachable, require_store
from oneiros.store._urls import StoreURL

__all__ = [
    "DEFAULT_STORE_URL",
    "Checkpoint",
    "EventStore",
    "LogSubscription",
    "Recorded",
    "StreamAppend",
    "Tally",
    "decode_rows",
    "open_store",
    "record_row",
]

DEFAULT_STORE_URL = "sqlite:///.oneiros/events.db"


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """An event as the log holds it: its global position, its stream version and its metadata."""

    position: int
    version: int
    meta: EventMeta
    event: Event

    @property
    def golem_id(self) -> str:
        return self.meta.golem_id


class Tally(msgspec.Struct, frozen=True, gc=False):
    """The events of one type in one stream over a stretch of the log, counted by the database
    (:meth:`EventStore.tally`): what a read model needs of events it only counts, or whose only
    effect is to move its stream's version, without fetching or decoding them."""

    golem_id: str
    event_type: type[Event]
    count: int
    version: int
    """The stream version of the last of them."""
    position: int
    """The global position of the last of them."""


def record_row(record: Recorded) -> dict[str, Any]:
    """An event as ``oneiros events --json``, the API and the event stream show it."""
    return {
        "position": record.position,
        "golem_id": record.meta.golem_id,
        "version": record.version,
        "type": record.event.type_name,
        "time": record.meta.time.isoformat(),
        "cycle_id": record.meta.cycle_id,
        "payload": msgspec.to_builtins(record.event),
    }


class StreamAppend(msgspec.Struct, frozen=True):
    """Events for one stream, to take versions ``expected_version + 1`` onward."""

    golem_id: str
    expected_version: int
    items: Sequence[tuple[EventMeta, Event]]


class Checkpoint(msgspec.Struct, frozen=True):
    """A process's position in the log, committed in the same transaction as the events it appends.

    ``name`` read the log from after ``start`` up to ``position``; if another runner of ``name``
    committed past ``start`` first, nothing is written and :class:`ProjectionConflict` is raised.
    """

    name: str
    start: int
    position: int


def _decode(position: int, version: int, topic: str, state: bytes) -> Recorded:
    decoder = current_decoder(topic)
    if decoder is None:
        meta, event = decode_event(topic, state, position)
        return Recorded(position, version, meta, event)
    try:
        envelope = decoder.decode(state)
    except (msgspec.DecodeError, msgspec.ValidationError):
        decode_event(topic, state, position)  # raises the typed error naming the position
        raise
    return Recorded(position, version, envelope.meta, envelope.data)


def decode_rows(rows: Sequence[Row]) -> Iterator[Recorded]:
    """Rows as :meth:`EventStore.read_stream_rows` returns them, decoded (older schema versions
    upcast, a damaged row raising :class:`CorruptEvent` naming its position)."""
    return _decoded(rows)


def _decoded(rows: Sequence[Row]) -> Iterator[Recorded]:
    # The hot loop of every replay: one typed msgspec decode per row, decoders looked up by topic in
    # a dict local to the page. A generator, so a reader that drops each record as it goes reuses
    # the memory of the last one: decoding a whole page into a list first costs a third more.
    decoders: dict[str, Any] = {}
    decoder: Any
    for position, version, topic, state in rows:
        decoder = decoders.get(topic)
        if decoder is None:
            decoder = decoders[topic] = current_decoder(topic) or False
        if decoder is False:
            yield _decode(position, version, topic, state)  # an older schema version: upcast
            continue
        try:
            envelope = decoder.decode(state)
        except (msgspec.DecodeError, msgspec.ValidationError):
            decode_event(topic, state, position)  # raises the typed error naming the position
            raise
        yield Recorded(position, version, envelope.meta, envelope.data)


class LogSubscription:
    """New events as they are committed, by any process: a context manager and an iterator.

    Built on the backend's feed: LISTEN/NOTIFY on PostgreSQL (read on the consumer's thread), the
    recorder's eventsourcing subscription in memory, polling on SQLite (which has no notifications).
    :meth:`stop` may be called from another thread; iteration then ends.
    """

    def __init__(self, inner: Feed) -> None:
        self._inner = inner

    def __enter__(self) -> LogSubscription:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)

    def stop(self) -> None:
        self._inner.stop()

    def __iter__(self) -> LogSubscription:
        return self

    def __next__(self) -> Recorded:
        n = next(self._inner)
        if type(n) is tuple:
            return _decode(*n)
        assert isinstance(n, Notification)
        return _decode(n.id, n.originator_version, n.topic, n.state)


class EventStore:
    """Appends and reads events. Nothing is ever updated or deleted in place."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    @property
    def url(self) -> str:
        return self._backend.url

    @property
    def backend(self) -> Backend:
        """The backend, whose eventsourcing ``recorder`` projections use for tracking."""
        return self._backend

    def append(
        self,
        golem_id: str,
        expected_version: int,
        items: Sequence[tuple[EventMeta, Event]],
        *,
        checkpoint: Checkpoint | None = None,
    ) -> list[Recorded]:
        """Append ``items`` to ``golem_id``'s stream in one transaction.

        The events take versions ``expected_version + 1`` onward. If another writer already took
        one of them, nothing is written and :class:`StreamConflict` is raised. A ``checkpoint`` is
        committed in the same transaction (see :class:`Checkpoint`).
        """
        return self.append_streams([StreamAppend(golem_id, expected_version, items)], checkpoint=checkpoint)

    def append_streams(
        self, appends: Sequence[StreamAppend], *, checkpoint: Checkpoint | None = None
    ) -> list[Recorded]:
        """Append to several streams in one transaction: all of it is written, or none of it.

        Every write of the log comes through here (:meth:`append` included), so a subclass that
        wraps it sees them all.
        """
        stored: list[StoredTuple] = []
        add = stored.append
        for append in appends:
            golem_id = append.golem_id
            version = append.expected_version
            for meta, event in append.items:
                if meta.golem_id != golem_id:
                    raise ValueError(f"event metadata names golem {meta.golem_id!r}, not {golem_id!r}")
                version += 1
                # A plain tuple in StoredRow's shape: a NamedTuple costs a Python call per event.
                add((golem_id, version, *encode_event(meta, event)))
        if not stored and checkpoint is None:
            return []
        positions = self._insert(stored, appends, checkpoint)
        return [
            Recorded(position, row[1], meta, event)
            for position, row, (meta, event) in zip(
                positions, stored, (item for append in appends for item in append.items), strict=False
            )
        ]

    def _insert(
        self, stored: Sequence[StoredTuple], appends: Sequence[StreamAppend], checkpoint: Checkpoint | None
    ) -> Sequence[int]:
        recorder = self._backend.recorder
        tracking = None if checkpoint is None else Tracking(checkpoint.name, checkpoint.position)
        try:
            return recorder.insert_events(stored, tracking=tracking) or ()
        except IntegrityError:
            if checkpoint is not None and checkpoint.position > checkpoint.start:
                found = recorder.max_tracking_id(checkpoint.name)
                if (found or 0) > checkpoint.start:
                    raise ProjectionConflict(checkpoint.name, checkpoint.start, found) from None
            raise self._conflict(appends) from None
        except PersistenceError as exc:
            names = ", ".join(repr(a.golem_id) for a in appends)
            raise StoreError(f"append to {names} failed: {exc}") from exc

    def _conflict(self, appends: Sequence[StreamAppend]) -> StreamConflict:
        """The conflict naming the first stream whose next version another writer took."""
        recorder = self._backend.recorder
        for append in appends:
            if append.items and recorder.select_events(append.golem_id, gt=append.expected_version, limit=1):
                return StreamConflict(append.golem_id, append.expected_version)
        # The other writer's events are gone again (nothing is deleted, so only a race with a
        # rolled-back writer gets here): the first stream is the best name for it.
        first = appends[0] if appends else StreamAppend("", 0, ())
        return StreamConflict(first.golem_id, first.expected_version)

    def read_stream(
        self, golem_id: str, after_version: int = 0, until: int | None = None, *, types: Sequence[type[Event]] = ()
    ) -> list[Recorded]:
        """``golem_id``'s events after ``after_version``, up to global position ``until``, optionally
        only ``types`` (chosen by the database: a golem's stream is mostly episodes, and a reader
        after its few cycle events need not fetch or decode them)."""
        return list(_decoded(self.read_stream_rows(golem_id, after_version, until, types=types)))

    def read_stream_rows(
        self, golem_id: str, after_version: int = 0, until: int | None = None, *, types: Sequence[type[Event]] = ()
    ) -> list[Row]:
        """What :meth:`read_stream` reads, undecoded: ``(position, version, topic, state)`` rows,
        for a reader that decodes only part of some events (see :func:`decode_rows` for the rest).
        Every stream read goes through here, so a store that wraps it sees them all."""
        topics = [t for cls in types for t in topics_for(cls)]
        try:
            return self._backend.recorder.select_stream_rows(golem_id, after_version, until, topics)
        except PersistenceError as exc:
            raise StoreError(f"reading stream {golem_id!r} failed: {exc}") from exc

    def read_all(
        self,
        after: int = 0,
        until: int | None = None,
        types: Sequence[type[Event]] = (),
        page: int | None = None,
        *,
        skip: Sequence[type[Event]] = (),
    ) -> Iterator[Recorded]:
        """Every event after global position ``after`` up to ``until``, optionally only ``types``
        and none of ``skip``, read ``page`` rows at a time (by default what suits the backend)."""
        topics = [t for cls in types for t in topics_for(cls)]
        skipped = [t for cls in skip for t in topics_for(cls)]
        page = page or self._backend.read_page
        while True:
            try:
                rows = self._backend.recorder.select_rows(after, page, until, topics, skipped)
            except PersistenceError as exc:
                raise StoreError(f"reading the log after {after} failed: {exc}") from exc
            yield from _decoded(rows)
            if len(rows) < page:
                return
            after = rows[-1][0]

    def tally(self, after: int, until: int, types: Sequence[type[Event]]) -> list[Tally]:
        """The events of ``types`` at positions after ``after`` up to ``until``, counted per stream
        and type by the database: none is fetched or decoded. Older schema versions of a type are
        counted with it."""
        topics = [t for cls in types for t in topics_for(cls)]
        if not topics or until <= after:
            return []
        try:
            found = self._backend.recorder.select_tallies(after, until, topics)
        except PersistenceError as exc:
            raise StoreError(f"counting the log's events after {after} failed: {exc}") from exc
        registry = registered_events()
        merged: dict[tuple[str, type[Event]], Tally] = {}
        for stream, topic, count, version, position in found:
            key = (stream, registry[split_topic(topic)[0]])
            seen = merged.get(key)
            merged[key] = (
                Tally(stream, key[1], count, version, position)
                if seen is None  # else the same type under two schema versions
                else Tally(stream, key[1], count + seen.count, max(version, seen.version), max(position, seen.position))
            )
        return sorted(merged.values(), key=lambda t: t.position)

    def read_stored(self, after: int = 0, page: int | None = None) -> Iterator[tuple[int, str, int, str, bytes]]:
        """Every event after ``after`` exactly as stored: ``(position, golem_id, version, topic, state)``."""
        recorder = self._backend.recorder
        page = page or self._backend.read_page
        while True:
            try:
                found = recorder.select_notifications(after, page, inclusive_of_start=False)
            except PersistenceError as exc:
                raise StoreError(f"reading the log after {after} failed: {exc}") from exc
            for n in found:
                yield n.id, str(n.originator_id), n.originator_version, n.topic, n.state
            if len(found) < page:
                return
            after = found[-1].id

    def stream_version(self, golem_id: str) -> int:
        """The version of the last event in ``golem_id``'s stream, 0 for none, read without
        reading the stream."""
        try:
            last = self._backend.recorder.select_events(golem_id, desc=True, limit=1)
        except PersistenceError as exc:
            raise StoreError(f"reading stream {golem_id!r} failed: {exc}") from exc
        return int(last[0].originator_version) if last else 0

    def head(self) -> int:
        """The global position of the last event, 0 for an empty log."""
        try:
            return self._backend.recorder.max_notification_id() or 0
        except PersistenceError as exc:
            raise StoreError(f"reading the log head failed: {exc}") from exc

    def subscribe(
        self, after: int | None = None, types: Sequence[type[Event]] = (), *, poll_interval: float = 0.05
    ) -> LogSubscription:
        """Events committed after position ``after`` (default: the head), as they come.

        Use as ``with store.subscribe(after) as events: for record in events: ...``. PostgreSQL wakes
        it with LISTEN/NOTIFY; SQLite has no notifications and is polled every ``poll_interval``.
        """
        topics = [t for cls in types for t in topics_for(cls)]
        start = self.head() if after is None else after
        return LogSubscription(self._backend.subscribe(start, topics, poll_interval))

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_store(url: str | None = None, *, create: bool = True) -> EventStore:
    """Open the store at ``url``, else ``$ONEIROS_STORE``, else the embedded SQLite default.

    With ``create=False`` (every command that only reads) a missing store raises :class:`NoStore`
    and nothing is created: no file, directory, schema or table. A PostgreSQL server that does not
    answer within the URL's ``connect_timeout`` (5 s) raises :class:`StoreUnavailable` naming host,
    port and database.
    """
    where = StoreURL.parse(url or os.environ.get("ONEIROS_STORE") or DEFAULT_STORE_URL)
    if not create and where.kind != "memory":
        require_store(where)
    elif where.postgres is not None:
        check_reachable(where.url, where.postgres, where.connect_timeout)
    return EventStore(open_backend(where))
