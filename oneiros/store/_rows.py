"""The rows the store's recorders write and read, shared by every backend: the SQLite and memory
recorders in ``_backends`` and the PostgreSQL one in ``_postgres``, which must not import each other
(``_backends`` loads ``_postgres`` only when a PostgreSQL URL is opened)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple
from uuid import UUID

from eventsourcing.persistence import IntegrityError, StoredEvent, Tracking

__all__ = [
    "EVENTS_TABLE",
    "Row",
    "Stored",
    "StoredRow",
    "StoredTuple",
    "TallyRow",
    "stored_rows",
    "tracking_refused",
]

EVENTS_TABLE = "oneiros_events"
# (position, stream_version, topic, state): what a read decodes. The stream's name is in the
# event's metadata, so it is not fetched again (a column more costs a quarter of a read's time).
Row = tuple[int, int, str, bytes]
# (stream, topic, count, last stream_version, last position): a stretch of the log counted per
# stream and topic by the database, with no row fetched or decoded.
TallyRow = tuple[str, str, int, int, int]


class StoredRow(NamedTuple):
    """A stored event as the store hands it to its recorder: eventsourcing's ``StoredEvent`` fields in
    a tuple, which sqlite3's ``executemany`` and psycopg's ``COPY`` take as a row without copying it
    (eventsourcing's own ``PgStoredEvent`` is the same idea). Its frozen dataclass costs more to build
    than the row costs to insert."""

    originator_id: str
    originator_version: int
    topic: str
    state: bytes


# What a recorder here takes: StoredRow or a plain tuple of its shape (the store's own appends), or
# eventsourcing's StoredEvent (its own callers, its test suites).
StoredTuple = tuple[str, int, str, bytes]
Stored = StoredEvent | StoredTuple


def stored_rows(stored: Sequence[Stored]) -> Sequence[StoredTuple]:
    """``stored`` as rows, converting only what is not a row already (eventsourcing's own callers)."""
    if all(type(s) is tuple or type(s) is StoredRow for s in stored):
        return stored  # type: ignore[return-value]  # checked just above, element by element
    return [
        s
        if isinstance(s, tuple)
        else StoredRow(
            s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id,
            s.originator_version,
            s.topic,
            s.state,
        )
        for s in stored
    ]


def tracking_refused(tracking: Tracking) -> IntegrityError:
    # The words of eventsourcing's own recorders, so callers see one message whichever path refused.
    return IntegrityError(f"Failed to record tracking for {tracking.application_name} {tracking.notification_id}")
