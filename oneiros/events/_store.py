"""The append-only event store: per-golem streams with contiguous versions and one global order."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

import msgspec
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent

from oneiros._errors import StoreError, StreamConflict
from oneiros.events._backends import Backend, Row, locate_store, open_backend
from oneiros.events._codec import current_decoder, decode_event, encode_event, topics_for
from oneiros.events._presence import check_reachable, require_store
from oneiros.events._types import Event, EventMeta

__all__ = ["DEFAULT_STORE_URL", "EventStore", "Recorded", "open_store", "record_row"]

DEFAULT_STORE_URL = "sqlite:///.oneiros/events.db"
_PAGE = 5_000


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """An event as the log holds it: its global position, its stream version and its metadata."""

    position: int
    version: int
    meta: EventMeta
    event: Event

    @property
    def golem_id(self) -> str:
        return self.meta.golem_id


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


def _decode_rows(rows: list[Row]) -> Iterator[Recorded]:
    for position, _golem, version, topic, state in rows:
        decoder = current_decoder(topic)
        if decoder is not None:
            try:
                envelope = decoder.decode(state)
            except (msgspec.DecodeError, msgspec.ValidationError):
                decode_event(topic, state, position)  # raises the typed error naming the position
                raise
            yield Recorded(position, version, envelope.meta, envelope.data)
        else:
            meta, event = decode_event(topic, state, position)
            yield Recorded(position, version, meta, event)


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

    def append(self, golem_id: str, expected_version: int, items: Sequence[tuple[EventMeta, Event]]) -> list[Recorded]:
        """Append ``items`` to ``golem_id``'s stream in one transaction.

        The events take versions ``expected_version + 1`` onward. If another writer already took
        one of them, nothing is written and :class:`StreamConflict` is raised.
        """
        if not items:
            return []
        stored: list[StoredEvent] = []
        for offset, (meta, event) in enumerate(items, start=1):
            if meta.golem_id != golem_id:
                raise ValueError(f"event metadata names golem {meta.golem_id!r}, not {golem_id!r}")
            topic, state = encode_event(meta, event)
            stored.append(StoredEvent(golem_id, expected_version + offset, topic, state))
        try:
            positions = self._backend.insert(stored)
        except IntegrityError:
            raise StreamConflict(golem_id, expected_version) from None
        except PersistenceError as exc:
            raise StoreError(f"append to {golem_id!r} failed: {exc}") from exc
        return [
            Recorded(position, expected_version + offset, meta, event)
            for offset, (position, (meta, event)) in enumerate(zip(positions, items, strict=True), start=1)
        ]

    def read_stream(self, golem_id: str, after_version: int = 0, until: int | None = None) -> list[Recorded]:
        """``golem_id``'s events after ``after_version``, up to global position ``until``."""
        try:
            rows = self._backend.stream_rows(golem_id, after_version, until)
        except PersistenceError as exc:
            raise StoreError(f"reading stream {golem_id!r} failed: {exc}") from exc
        return list(_decode_rows(rows))

    def read_all(
        self,
        after: int = 0,
        until: int | None = None,
        types: Sequence[type[Event]] = (),
        page: int = _PAGE,
    ) -> Iterator[Recorded]:
        """Every event after global position ``after`` up to ``until``, optionally only ``types``."""
        topics = [t for cls in types for t in topics_for(cls)]
        while True:
            try:
                rows = self._backend.rows(after, page, until, topics)
            except PersistenceError as exc:
                raise StoreError(f"reading the log after {after} failed: {exc}") from exc
            yield from _decode_rows(rows)
            if len(rows) < page:
                return
            after = rows[-1][0]

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
            return self._backend.head()
        except PersistenceError as exc:
            raise StoreError(f"reading the log head failed: {exc}") from exc

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
    resolved = url or os.environ.get("ONEIROS_STORE") or DEFAULT_STORE_URL
    kind, target = locate_store(resolved)
    if not create and kind != "memory":
        require_store(resolved, kind, target, timeout=target["connect_timeout"] if kind == "postgresql" else 5.0)
    elif kind == "postgresql":
        check_reachable(resolved, target, target["connect_timeout"])
    return EventStore(open_backend(resolved))
