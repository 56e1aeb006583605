"""Following the log live: the store's subscription (eventsourcing's ``recorder.subscribe()``),
taken in batches by the consumers.

A subscription yields every event after a position and blocks when there is none; on PostgreSQL it
is woken by the NOTIFY eventsourcing's recorder sends on every insert, in memory by the recorder's
listeners, on SQLite (no notifications) by polling. A pump thread iterates it into a queue; the
follower takes whatever has arrived, up to a batch, and hands it to every consumer, which applies it
and records its position in one transaction. Several consumers (the validation sweep and the
projections) share one subscription.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Protocol

from oneiros._errors import ProjectionConflict
from oneiros.store._store import EventStore, LogSubscription, Recorded

__all__ = ["LogConsumer", "follow_log"]


class LogConsumer(Protocol):
    """Something that follows the log from a position of its own."""

    def catch_up(self, until: int | None = None, stop: threading.Event | None = None) -> object:
        """Read the log from its position up to ``until`` (the head if None) and record it; once
        ``stop`` is set, record how far it got at its next commit and return."""
        ...

    def low_position(self) -> int:
        """The lowest position it has recorded: a subscription for it starts after this."""
        ...

    def take(self, batch: Sequence[Recorded]) -> None:
        """Apply ``batch`` (every event in a stretch of the log, ascending) and record its end."""
        ...


class _Pump:
    """Iterates a subscription on its own thread so the follower can take what has arrived."""

    def __init__(self, subscription: LogSubscription) -> None:
        self._subscription = subscription
        self._queue: queue.Queue[Recorded | BaseException] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="oneiros-follow", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for record in self._subscription:
                self._queue.put(record)
        except BaseException as exc:  # handed to the follower, which raises it
            self._queue.put(exc)

    def take(self, limit: int, timeout: float) -> list[Recorded]:
        """What has arrived (at most ``limit``), waiting up to ``timeout`` for the first."""
        batch: list[Recorded] = []
        try:
            item = self._queue.get(timeout=timeout)
            while True:
                if isinstance(item, BaseException):
                    raise item
                batch.append(item)
                if len(batch) >= limit:
                    break
                item = self._queue.get_nowait()
        except queue.Empty:
            pass
        return batch

    def __enter__(self) -> _Pump:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._subscription.stop()
        self._thread.join()


def _caught_up(consumer: LogConsumer, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            consumer.catch_up(stop=stop)
        except ProjectionConflict:
            continue  # another runner committed first; start again from its position
        return


def follow_log(  # noqa: PLR0913 - keyword-only tuning knobs, each defaulted
    store: EventStore,
    consumers: Sequence[LogConsumer],
    stop: threading.Event,
    *,
    batch_events: int = 50_000,
    poll_interval_s: float = 0.01,
    wake_s: float = 0.1,
    on_batch: Callable[[], None] | None = None,
) -> None:
    """Catch every consumer up, then feed them the log as it grows until ``stop`` is set.

    Consumers run in order on each batch, so events one of them appends (the validation sweep's
    decisions) reach the others in a later batch of the same subscription. ``on_batch`` is
    called after the first catch-up and after every batch all consumers applied (readers waiting
    for a position look again).
    """
    # After a large import the first catch-up is the long part (seconds per million events):
    # each consumer keeps what it built when ``stop`` comes, and the rest is skipped.
    for consumer in consumers:
        _caught_up(consumer, stop)
    if stop.is_set():
        return
    if on_batch is not None:
        on_batch()
    gt = min(c.low_position() for c in consumers)
    with store.subscribe(gt, poll_interval=poll_interval_s) as subscription, _Pump(subscription) as pump:
        while not stop.is_set():
            batch = pump.take(batch_events, timeout=wake_s)
            if batch:
                for consumer in consumers:
                    consumer.take(batch)
                if on_batch is not None:
                    on_batch()
