"""Read models built from the log: the dream journal, the staging buffer, and the output sinks; the
runner that keeps them exactly-once and rebuildable on eventsourcing's tracking recorders and
subscriptions.

Read models only: what appends events (the validation sweep, review decisions) is
``oneiros.validation``. The golem states themselves are rebuilt by :func:`oneiros.replay`.

No name here is public: the modules are private and import each other directly.
From Python the read models are read through :class:`oneiros.Oneiros` (``journal``, ``entries``,
``memory``, ``recall``...).
"""

__all__: list[str] = []
