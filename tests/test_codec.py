"""The codec: every event type round-trips, topics are stable, bad bytes get typed errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import CorruptEvent, UnknownEventType
from oneiros.events._codec import decode_event, encode_event
from oneiros.events._types import Event, EventMeta, registered_events
from tests.strategies import events_of, metas

EVENT_TYPES = sorted(registered_events().items())


@pytest.mark.parametrize(("name", "cls"), EVENT_TYPES, ids=[n for n, _ in EVENT_TYPES])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_event_type_round_trips(name: str, cls: type[Event], data: st.DataObject) -> None:
    """Encoding then decoding any valid event and metadata gives back equal values."""
    event = data.draw(events_of(cls))
    meta = data.draw(metas())
    topic, state = encode_event(meta, event)
    assert f"{name}.v{cls.schema_version}" == topic
    assert (meta, event) == decode_event(topic, state)


def test_type_names_do_not_depend_on_modules() -> None:
    """Stored names are the registered stable names, not Python paths."""
    for name, cls in registered_events().items():
        assert "." not in name
        assert name == cls.type_name


def test_corrupt_bytes_name_the_position_and_topic(meta: EventMeta) -> None:
    """Bytes that are not the event their topic says give CorruptEvent with the position."""
    with pytest.raises(CorruptEvent) as caught:
        decode_event("DreamStart.v1", b'{"meta": {}, "data": 3}', position=17)
    assert 17 == caught.value.position
    assert "DreamStart.v1" == caught.value.topic
    assert str(caught.value).startswith("corrupt event 'DreamStart.v1' at position 17: ")


def test_unknown_topics_are_refused() -> None:
    """A name no event carries, a future version and a malformed topic are all UnknownEventType."""
    for topic in ("NoSuchEvent.v1", "DreamStart.v99", "DreamStart"):
        with pytest.raises(UnknownEventType) as caught:
            decode_event(topic, b"{}", position=4)
        assert f"unknown event type {topic!r} at position 4" == str(caught.value)


@pytest.fixture
def meta() -> EventMeta:
    from datetime import UTC, datetime

    return EventMeta(time=datetime(2026, 1, 1, tzinfo=UTC), event_id="e", golem_id="g")
