"""The append-only store: eventsourcing recorders for SQLite, PostgreSQL and memory, snapshots, leases and
history files."""

from oneiros.store._backends import Row
from oneiros.store._history import export_history, import_history
from oneiros.store._leases import Lease, LeaseStore, open_leases
from oneiros.store._snapshots import (
    Sealed,
    Snapshot,
    SnapshotStore,
    decode_records,
    encode_records,
    open_snapshots,
    read_cycle,
    read_from_snapshot,
    read_stream_paged,
    read_stream_pages,
    seal,
    seal_parts,
    unseal,
)
from oneiros.store._store import (
    DEFAULT_STORE_URL,
    Checkpoint,
    EventStore,
    LogSubscription,
    Recorded,
    StreamAppend,
    Tally,
    decode_rows,
    open_store,
    record_row,
)
from oneiros.store._urls import PostgresURL, parse_postgres_url

__all__ = [
    "DEFAULT_STORE_URL",
    "Checkpoint",
    "EventStore",
    "Lease",
    "LeaseStore",
    "LogSubscription",
    "PostgresURL",
    "Recorded",
    "Row",
    "Sealed",
    "Snapshot",
    "SnapshotStore",
    "StreamAppend",
    "Tally",
    "decode_records",
    "decode_rows",
    "encode_records",
    "export_history",
    "import_history",
    "open_leases",
    "open_snapshots",
    "open_store",
    "parse_postgres_url",
    "read_cycle",
    "read_from_snapshot",
    "read_stream_paged",
    "read_stream_pages",
    "record_row",
    "seal",
    "seal_parts",
    "unseal",
]
