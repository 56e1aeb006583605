"""One command's unit of work: the store its writes go through, and what goes with them.

A command that must record something beside its own events in the same transaction (a request's
idempotency key) is handed a :class:`UnitOfWork` and appends through it, as eventsourcing's process
applications hand each policy a ``ProcessingEvent`` that collects its events and tracking record
for one ``insert_events``. What the unit holds joins the first transaction made through it, after
the command's own events, all of it or none of it; an append made any other way (the store itself,
another unit, another thread) goes alone. Nothing is picked up from the context: a write carries
the key only where the command was handed the unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from oneiros.events._types import Event
from oneiros.store._backends import Row
from oneiros.store._store import Checkpoint, EventStore, LogSubscription, Recorded, StreamAppend, Tally

__all__ = ["Joined", "UnitOfWork"]

Joined = StreamAppend | Callable[[int], StreamAppend]
"""An append that joins a unit's first transaction: as it is, or made once the number of the
command's own events before it is known (they lie just before it in the log)."""


class UnitOfWork(EventStore):
    """The store one command writes through: it reads as ``store`` does, and each append it makes
    is one transaction of ``store``, the first of them with what the unit was given to join it
    (:meth:`join`). Each transaction's last position of the command's own is told to those
    listening (:meth:`listen`): how a use case knows what its reads must include.

    One unit serves one command in one thread, and is dropped with it."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store.backend)
        self.store = store
        """The store the unit writes to (itself maybe a wrapper: a traced store stays traced)."""
        self._joined: list[Joined] = []
        self._listeners: list[Callable[[int], None]] = []

    def join(self, append: Joined) -> None:
        """``append`` joins the next transaction made through this unit, after its own events."""
        self._joined.append(append)

    @property
    def pending(self) -> bool:
        """Whether something joined is still waiting for a transaction to go with."""
        return bool(self._joined)

    def listen(self, heard: Callable[[int], None]) -> None:
        """``heard`` gets the log position of the last of the command's own events of each
        transaction this unit commits from now on (not a joined append's)."""
        self._listeners.append(heard)

    # -- writes: through the unit ----------------------------------------------------------------

    def append_streams(
        self, appends: Sequence[StreamAppend], *, checkpoint: Checkpoint | None = None
    ) -> list[Recorded]:
        """Append ``appends`` (and what was joined, the first time) to the store in one transaction;
        the records of ``appends`` alone: a joined append's records are the unit owner's to read."""
        own = sum(len(append.items) for append in appends)
        joined = self._joined
        if joined and own:
            appends = [*appends, *(make(own) if callable(make) else make for make in joined)]
        recorded = self.store.append_streams(appends, checkpoint=checkpoint)
        if joined and own:
            joined.clear()  # written: the next transaction goes alone
        if own:
            for heard in self._listeners:
                heard(recorded[own - 1].position)
        return recorded[:own]

    # -- reads: the store's own, so a store that wraps its reads sees the unit's -----------------

    def read_stream_rows(
        self, golem_id: str, after_version: int = 0, until: int | None = None, *, types: Sequence[type[Event]] = ()
    ) -> list[Row]:
        return self.store.read_stream_rows(golem_id, after_version, until, types=types)

    def read_all(
        self,
        after: int = 0,
        until: int | None = None,
        types: Sequence[type[Event]] = (),
        page: int | None = None,
        *,
        skip: Sequence[type[Event]] = (),
    ) -> Iterator[Recorded]:
        return self.store.read_all(after, until, types, page, skip=skip)

    def tally(self, after: int, until: int, types: Sequence[type[Event]]) -> list[Tally]:
        return self.store.tally(after, until, types)

    def stream_version(self, golem_id: str) -> int:
        return self.store.stream_version(golem_id)

    def head(self) -> int:
        return self.store.head()

    def subscribe(
        self, after: int | None = None, types: Sequence[type[Event]] = (), *, poll_interval: float = 0.05
    ) -> LogSubscription:
        return self.store.subscribe(after, types, poll_interval=poll_interval)

    def close(self) -> None:
        """Nothing: the store is its owner's to close."""
