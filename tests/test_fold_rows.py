"""The cycle reader's fold from stored rows (a fresh process with no snapshot) gives what folding the
decoded stream event by event gives, however the stream is paged, and a damaged episode row fails
the same way the store's own read fails."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import open_store
from oneiros._errors import CorruptEvent
from oneiros.episodes._fold import EpisodeMemory
from oneiros.events._types import Episode, Outcome
from oneiros.runtime import _golem_log as _log
from oneiros.runtime._golem_log import GolemLog, GolemLogs
from oneiros.store._snapshots import read_stream_pages
from tests.test_snapshots import _fold, _golems, _history, _view


def _stored_history() -> object:
    store = open_store("memory://")
    for record in _history():
        store.append("g", record.version - 1, [(record.meta, record.event)])
    return store


@settings(max_examples=30, deadline=None)
@given(page=st.integers(min_value=1, max_value=400), piece=st.integers(min_value=1, max_value=100))
def test_folding_rows_in_pages_of_any_size_equals_folding_each_event(page: int, piece: int) -> None:
    """Pages (and the slices a run of episodes is decoded in) cut runs of episodes anywhere; the
    fold from rows still equals the event-by-event fold in every field a phase reads, and its
    episode memory snapshots to the same bytes."""
    store = _stored_history()
    log = GolemLog("g")
    slices = _log._EPISODE_SLICE
    _log._EPISODE_SLICE = piece
    try:
        log.fold_rows(read_stream_pages(store, "g", page=page))  # type: ignore[arg-type]
    finally:
        _log._EPISODE_SLICE = slices
    expected = _fold(_history())
    assert _view(expected) == _view(log)
    assert expected.memory.to_bytes() == log.memory.to_bytes()


def test_encoded_episodes_give_the_columns_their_objects_give() -> None:
    """Episodes given as JSON (naive and aware times, no time, embeddings, a replaced tick) land in
    the same columns, in the same order, as the same episodes added one by one."""
    episodes = [
        Episode(tick=1, summary="a", regime="ranging", significance=0.2, arousal=0.9),
        Episode(tick=2, summary="b", time=datetime(2024, 1, 1, 0, 0, 1, 500_000, tzinfo=timezone(timedelta(hours=2)))),
        Episode(tick=5, summary="naive", time=datetime(2024, 1, 2, 3, 4, 5, 6)),
        Episode(tick=3, summary="c", outcome=Outcome(pnl=0.5, surprise=0.25, regret=0.125), dream_priority="high"),
        Episode(tick=4, summary="d", embedding=(1.0, 0.0), prediction_error=0.75, regime="volatile"),
        Episode(tick=2, summary="b again", regime="ranging"),
    ]
    by_objects, by_bytes = EpisodeMemory(), EpisodeMemory()
    by_objects.add(episodes[0])
    by_bytes.add(episodes[0])
    for episode in episodes[1:]:
        by_objects.add(episode)
    by_bytes.add_encoded([msgspec.json.encode(e) for e in episodes[1:]])
    assert by_objects.to_bytes() == by_bytes.to_bytes()
    assert by_objects.episodes() == by_bytes.episodes()


def test_a_damaged_episode_row_fails_the_fold_as_it_fails_the_read(tmp_path: Path) -> None:
    """An episode whose stored JSON breaks its schema (a negative tick) stops a fresh fold with the
    store's CorruptEvent naming the row, not a half-built memory."""
    url = f"sqlite:///{tmp_path}/events.db"
    golems = _golems(url)
    golems.create("g")
    golems.record_episodes("g", [Episode(tick=t, summary=f"episode {t}") for t in range(1, 6)])
    with sqlite3.connect(tmp_path / "events.db") as conn:
        conn.execute(
            "UPDATE oneiros_events SET state = replace(state, '\"tick\":3', '\"tick\":-3') "
            "WHERE topic LIKE 'EpisodeRecorded.%' AND originator_version = 4"
        )
    with pytest.raises(CorruptEvent) as read:
        open_store(url).read_stream("g")
    with pytest.raises(CorruptEvent) as folded:
        GolemLogs.of(_golems(url)).read("g")
    assert str(read.value) == str(folded.value)


@pytest.mark.parametrize("beyond", [0, 5, 10_000])
def test_a_held_log_far_behind_catches_up_as_a_fresh_fold_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, beyond: int
) -> None:
    """A process that holds a golem's log while another records episodes and a cycle catches up
    (from stored rows in pages once it is more than ``_ROWS_BEYOND`` events behind, from decoded
    events otherwise) to what a process folding the whole stream afresh gets."""
    monkeypatch.setattr(_log, "_ROWS_BEYOND", beyond)
    url = f"sqlite:///{tmp_path}/events.db"
    history = _history()
    store = open_store(url)
    cut = len(history) // 3
    for record in history[:cut]:
        store.append("g", record.version - 1, [(record.meta, record.event)])
    held = GolemLogs.of(_golems(url))
    held.read("g")
    for record in history[cut:]:
        store.append("g", record.version - 1, [(record.meta, record.event)])
    caught_up = held.read("g")
    fresh = GolemLogs.of(_golems(url)).read("g")
    assert (_view(fresh), fresh.memory.to_bytes()) == (_view(caught_up), caught_up.memory.to_bytes())


@settings(max_examples=30, deadline=None)
@given(page=st.integers(min_value=1, max_value=400), until=st.integers(min_value=0, max_value=500))
def test_pages_up_to_a_position_and_of_some_types_are_that_stream_read(page: int, until: int) -> None:
    """Paged reads with an end and event types, as lineage reads a golem's episodes, give the rows of
    one ``read_stream_rows`` with the same end and types, in order, whatever the page size."""
    from oneiros.events._types import EpisodeRecorded
    from oneiros.store._store import EventStore

    store: EventStore = _stored_history()  # type: ignore[assignment]
    pages = read_stream_pages(store, "g", page=page, until=until, types=(EpisodeRecorded,))
    paged = [row for rows in pages for row in rows]
    assert store.read_stream_rows("g", until=until, types=(EpisodeRecorded,)) == paged
    assert (until >= 2) == bool(paged)  # the first episode is at position 2
