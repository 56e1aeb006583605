"""The append-only store: eventsourcing recorders for SQLite, PostgreSQL and memory, snapshots, leases and
history files.

No name here is public: the modules are private and import each other directly.
What a user needs is :func:`oneiros.open_store`, :class:`oneiros.EventStore` and :class:`oneiros.Recorded`.
"""

__all__: list[str] = []
