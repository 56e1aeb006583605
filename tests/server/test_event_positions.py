"""The event stream's messages against the log they come from: one message a log position, with
that position as its id, in log order; a cycle's dream_complete after its last progress; and a
stream resumed after any id repeats nothing and misses nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from oneiros.server._auth import LOCAL
from oneiros.server._events import StreamFilter, _Progress, sse_messages
from oneiros.store._store import EventStore, open_store
from tests.test_cli import run


@pytest.fixture(scope="module")
def dreamt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EventStore]:
    """A store where golem 'golem' recorded the sample episodes and dreamt twice."""
    url = f"sqlite:///{tmp_path_factory.mktemp('dreamt') / 'events.db'}"
    for _ in range(2):
        assert 0 == run("dream", "--sample", store=url).returncode
    with open_store(url) as store:
        yield store


def _messages(store: EventStore, after: int, raw: bool) -> list[tuple[str, int, dict[str, Any]]]:
    """(event, id, data) of every message a stream from ``after`` sends, parsed from its bytes."""
    chosen = StreamFilter(raw=raw)
    out = []
    for message in sse_messages(store.read_all(after=after), LOCAL, chosen, _Progress(store)):
        lines = dict(line.split(": ", 1) for line in message.decode().strip().split("\n"))
        out.append((lines["event"], int(lines["id"]), json.loads(lines["data"])))
    return out


@pytest.mark.parametrize("raw", [False, True], ids=["bardo", "raw"])
def test_one_message_a_position_with_its_id_in_log_order(dreamt: EventStore, raw: bool) -> None:
    """Every message has an id, no id twice, ids rising; with raw=1 every position is exactly one
    message (before, a phase's position was two, only the second with an id), its Bardo event
    carrying the log row where it has one."""
    messages = _messages(dreamt, 0, raw)
    ids = [i for _, i, _ in messages]
    assert sorted(set(ids)) == ids
    if raw:
        assert list(range(1, dreamt.head() + 1)) == ids
        phases = [data for name, _, data in messages if name == "dream_progress"]
        assert {"DreamPhase"} == {data["log_event"]["type"] for data in phases}


def test_dream_complete_follows_the_last_phase_s_progress(dreamt: EventStore) -> None:
    """Each cycle streams onset, nrem, rem, integration, return, then dream_complete and the mode
    change back to waking (before, dream_complete came before the return phase's progress: the log
    completes a cycle before it returns)."""
    named = [
        data.get("phase") or data.get("mode") or name
        for name, _, data in _messages(dreamt, 0, raw=False)
        if name != "mode_change" or data["mode"] != "dreaming"
    ]
    cycle = ["onset", "nrem", "rem", "integration", "return", "dream_complete", "waking"]
    assert cycle * 2 == named


@pytest.mark.parametrize("raw", [False, True], ids=["bardo", "raw"])
def test_a_stream_resumed_after_any_id_is_the_rest_of_the_whole(dreamt: EventStore, raw: bool) -> None:
    """For every id a client could have seen last (and any position between), a stream resumed
    after it sends exactly the messages the whole stream sent after it: nothing repeated, nothing
    missed, the held dream_complete included."""
    whole = _messages(dreamt, 0, raw)
    for after in range(dreamt.head() + 1):
        assert [m for m in whole if m[1] > after] == _messages(dreamt, after, raw), after
