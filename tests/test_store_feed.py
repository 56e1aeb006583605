"""The PostgreSQL store's subscription: LISTEN and read on the consumer's own thread."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from oneiros.events._types import EventMeta, GolemCreated, ModeChanged
from oneiros.store._store import open_store
from tests.conftest import postgres_url

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _meta(n: int) -> EventMeta:
    return EventMeta(time=T0, event_id=f"e{n}", golem_id="a")


@pytest.mark.postgres
def test_a_postgres_subscription_starts_no_thread_and_sees_what_came_before_its_first_read(pg_schema: str) -> None:
    """Nothing runs between the NOTIFY and the reader: iterating starts no thread. Events appended
    after subscribing but before the first read are delivered, then new ones as they come."""
    store = open_store(postgres_url(pg_schema))
    store.append("a", 0, [(_meta(1), GolemCreated(name="a"))])
    threads = threading.active_count()
    with store.subscribe() as events:
        store.append("a", 1, [(_meta(2), ModeChanged(from_mode="Waking", to_mode="Dreaming"))])
        first = next(events)
        assert threads == threading.active_count()
        store.append("a", 2, [(_meta(3), ModeChanged(from_mode="Dreaming", to_mode="Waking"))])
        second = next(events)
    store.close()
    assert [(2, "e2"), (3, "e3")] == [(r.version, r.meta.event_id) for r in (first, second)]


@pytest.mark.postgres
def test_a_waiting_postgres_subscription_ends_when_stopped_from_another_thread(pg_schema: str) -> None:
    """A consumer blocked waiting for a notification stops iterating soon after ``stop()`` is
    called from another thread, having seen nothing."""
    store = open_store(postgres_url(pg_schema))
    seen: list[object] = []
    with store.subscribe(after=0) as events:
        consumer = threading.Thread(target=lambda: seen.extend(events))
        consumer.start()
        consumer.join(0.3)
        assert consumer.is_alive()  # waiting on the connection: there is nothing to read
        events.stop()
        consumer.join(2)
        assert not consumer.is_alive()
    store.close()
    assert [] == seen
