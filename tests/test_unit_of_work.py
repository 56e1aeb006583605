"""A command's unit of work: what it was given to join (an idempotency key) goes with the first
transaction made through it and with no other append, on memory, SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Oneiros, StreamConflict, open_store
from oneiros.config._load import load_config
from oneiros.episodes._fold import episodes_from_dicts
from oneiros.events._idempotency import IdempotencyKeyUsed, idempotency_stream
from oneiros.events._types import EventMeta, GolemCreated, ModeChanged
from oneiros.store._store import EventStore, Recorded, StreamAppend
from oneiros.store._unit import UnitOfWork

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _item(stream: str, n: int = 0) -> tuple[EventMeta, ModeChanged]:
    return EventMeta(time=T0, event_id=f"{stream}-{n}", golem_id=stream), ModeChanged(
        from_mode="Waking", to_mode="Waking"
    )


def _key(stream: str = "g:idempotency:k", own: int = 0) -> StreamAppend:
    meta = EventMeta(time=T0, event_id="key", golem_id=stream)
    return StreamAppend(stream, 0, [(meta, IdempotencyKeyUsed(key="k", request="r", rode=own))])


def _rode(record: Recorded) -> int:
    assert isinstance(record.event, IdempotencyKeyUsed)
    return record.event.rode


def _created(store: EventStore, golem: str) -> None:
    store.append(golem, 0, [(EventMeta(time=T0, event_id=f"{golem}-c", golem_id=golem), GolemCreated(name=""))])


def test_two_appends_in_one_context_without_the_unit_carry_no_key(store: EventStore) -> None:
    """With a key waiting in a unit, an append to the same store not made through the unit, then
    one to another store, both in the same thread, write their own events only; the key goes with
    the unit's own append, in its transaction, just after its events (the context-variable rider
    this replaces gave the key to whichever append came first in the context)."""
    unit = UnitOfWork(store)
    unit.join(_key())
    _created(store, "g")
    other = open_store("memory://")
    other.append("h", 0, [_item("h")])
    assert [] == store.read_stream("g:idempotency:k")
    assert ["h"] == [r.golem_id for r in other.read_all()]
    assert unit.pending
    written = unit.append("g", 1, [_item("g", 1)])
    key = store.read_stream("g:idempotency:k")
    assert not unit.pending
    assert (1, written[-1].position + 1) == (len(key), key[0].position)
    assert ["g"] == [r.golem_id for r in written]  # the key's record is the unit owner's to read


def test_the_key_joins_the_first_transaction_only_and_all_or_none_of_it(store: EventStore) -> None:
    """The unit's first append that loses its version race writes neither its events nor the key,
    which then goes with the next append through the unit, and only with that one."""
    _created(store, "g")
    unit = UnitOfWork(store)
    unit.join(lambda own: _key(own=own))
    head = store.head()
    with pytest.raises(StreamConflict):
        unit.append("g", 0, [_item("g", 1)])
    assert (head, True) == (store.head(), unit.pending)
    unit.append("g", 1, [_item("g", 1), _item("g", 2)])
    unit.append("g", 3, [_item("g", 3)])
    key = store.read_stream("g:idempotency:k")
    assert [2] == [_rode(r) for r in key]
    assert [1, 2, 3, 4] == [r.version for r in store.read_stream("g")]


def test_a_unit_tells_its_listeners_each_position_it_commits(store: EventStore) -> None:
    """Each transaction through the unit tells its listeners the position of the last of its own
    events (never the key's); an append made beside the unit tells them nothing."""
    heard: list[int] = []
    unit = UnitOfWork(store)
    unit.join(_key())
    unit.listen(heard.append)
    first = unit.append("g", 0, [_item("g"), _item("g", 1)])
    _created(store, "beside")
    second = unit.append("g", 2, [_item("g", 2)])
    assert [first[-1].position, second[-1].position] == heard


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=4))
def test_the_key_lies_just_after_the_commands_events_and_counts_them(sizes: list[int]) -> None:
    """For any appends to several streams in one transaction, the key joined to it is the next
    position after the command's events, ``rode`` says how many they are, and the unit returns
    exactly the records a read of those positions gives."""
    with open_store("memory://") as store:
        unit = UnitOfWork(store)
        unit.join(lambda own: _key("k", own))
        appends = [StreamAppend(f"s{i}", 0, [_item(f"s{i}", n) for n in range(size)]) for i, size in enumerate(sizes)]
        written = unit.append_streams(appends)
        own = sum(sizes)
        assert written == [r for r in store.read_all() if r.golem_id != "k"]
        key = store.read_stream("k")
        assert unit.pending is (own == 0)  # an empty transaction takes nothing with it
        if own:
            assert (own, written[-1].position + 1) == (_rode(key[0]), key[0].position)


def test_a_keyed_write_of_the_facade_records_its_key_with_its_events_only(store: EventStore) -> None:
    """``record_episodes`` with a key, then a plain append in the same thread, then the same call
    again: one episode, one key with its answer, and the plain append carries nothing of it."""
    app = Oneiros(store, load_config())
    app.create_golem("g1")
    episodes = episodes_from_dicts([{"tick": 7, "summary": "eth bounced"}])
    first = app.record_episodes("g1", episodes, idempotency_key="k1")
    _created(store, "beside")
    again = app.record_episodes("g1", episodes, idempotency_key="k1")
    key = store.read_stream(idempotency_stream("g1", "k1"))
    assert first == again
    assert [first.position + 1, 1] == [key[0].position, _rode(key[0])]
    assert 2 == len(key)  # the key, then its answer
    assert 1 == len(store.read_stream("beside"))
    app.close()
