"""Following the log live: eventsourcing's ``recorder.subscribe()``, batched for the consumers.

A subscription yields every notification after a position and blocks when there is none; on
PostgreSQL it is woken by the NOTIFY eventsourcing's recorder sends on every insert, in memory by the
recorder's listeners. eventsourcing's SQLite recorder has no subscription, so
:class:`PollingSubscription` gives it one: eventsourcing's own pull loop
(``ListenNotifySubscription``), woken by a timer that looks at the head instead of by a NOTIFY.

A pump thread iterates the subscription into a queue; the follower takes whatever has arrived, up to
a batch, and hands it to every consumer, which applies it and records its position in one
transaction. Several consumers (the validation sweep and the projections) share one subscription.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Protocol

from eventsourcing.persistence import (
    ApplicationRecorder,
    ListenNotifySubscription,
    Notification,
    Subscription,
)

from oneiros._errors import ProjectionConflict
from oneiros.events import EventStore

__all__ = ["LogConsumer", "PollingSubscription", "follow_log", "subscribe"]


class PollingSubscription(ListenNotifySubscription[ApplicationRecorder]):
    """``recorder.subscribe()`` for a recorder without one: pulls when the head has moved, looking
    every ``interval`` seconds."""

    def __init__(
        self, recorder: ApplicationRecorder, gt: int | None = None, topics: Sequence[str] = (), *, interval: float
    ) -> None:
        super().__init__(recorder=recorder, gt=gt, topics=topics)
        self._interval = interval
        self._stopping = threading.Event()
        self._poll_thread = threading.Thread(target=self._poll, name="oneiros-poll", daemon=True)
        self._poll_thread.start()

    def stop(self) -> None:
        self._stopping.set()
        super().stop()

    def __exit__(self, *args: object, **kwargs: object) -> None:
        try:
            super().__exit__(*args, **kwargs)
        finally:
            self._poll_thread.join()

    def _poll(self) -> None:
        while not self._stopping.wait(self._interval):
            try:
                head = self._recorder.max_notification_id() or 0
            except Exception as exc:  # the pull thread reports it the same way
                self._thread_error = exc
                self.stop()
                return
            if head > (self._last_notification_id or 0):
                self._has_been_notified.set()


def subscribe(store: EventStore, gt: int, poll_interval_s: float) -> Subscription[ApplicationRecorder]:
    """The store recorder's own subscription, or a polling one where it has none (SQLite)."""
    recorder = store.backend.recorder
    try:
        return recorder.subscribe(gt=gt)
    except NotImplementedError:
        return PollingSubscription(recorder, gt, interval=poll_interval_s)


class LogConsumer(Protocol):
    """Something that follows the log from a position of its own."""

    def catch_up(self, until: int | None = None) -> object:
        """Read the log from its position up to ``until`` (the head if None) and record it."""
        ...

    def low_position(self) -> int:
        """The lowest position it has recorded: a subscription for it starts after this."""
        ...

    def take(self, batch: Sequence[Notification]) -> None:
        """Apply ``batch`` (every event in a stretch of the log, ascending) and record its end."""
        ...


class _Pump:
    """Iterates a subscription on its own thread so the follower can take what has arrived."""

    def __init__(self, subscription: Subscription[ApplicationRecorder]) -> None:
        self._subscription = subscription
        self._queue: queue.Queue[Notification | BaseException] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="oneiros-follow", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for notification in self._subscription:
                self._queue.put(notification)
        except BaseException as exc:  # handed to the follower, which raises it
            self._queue.put(exc)

    def take(self, limit: int, timeout: float) -> list[Notification]:
        """What has arrived (at most ``limit``), waiting up to ``timeout`` for the first."""
        batch: list[Notification] = []
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


def _caught_up(consumer: LogConsumer) -> None:
    while True:
        try:
            consumer.catch_up()
        except ProjectionConflict:
            continue  # another runner committed first; start again from its position
        return


def follow_log(
    store: EventStore,
    consumers: Sequence[LogConsumer],
    stop: threading.Event,
    *,
    batch_events: int = 5_000,
    poll_interval_s: float = 0.01,
    wake_s: float = 0.1,
) -> None:
    """Catch every consumer up, then feed them the log as it grows until ``stop`` is set.

    Consumers run in order on each batch, so events one of them appends (the validation sweep's
    decisions) reach the others in a later batch of the same subscription.
    """
    for consumer in consumers:
        _caught_up(consumer)
    gt = min(c.low_position() for c in consumers)
    with subscribe(store, gt, poll_interval_s) as subscription, _Pump(subscription) as pump:
        while not stop.is_set():
            batch = pump.take(batch_events, timeout=wake_s)
            if batch:
                for consumer in consumers:
                    consumer.take(batch)
