"""Projections that take counts for the events they only count (``golems`` and ``schedule``): caught
up on their own they are handed :class:`~oneiros.store._store.Tally` counts from the database; their rows
must be what folding each golem's stream event by event gives, and what the same projections
caught up together (one event at a time) give."""

from __future__ import annotations

import tempfile
from typing import cast

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros.events._types import (
    DreamStart,
    EpisodeRecorded,
    Event,
    EventMeta,
    GolemCreated,
    ModeChanged,
    registered_events,
)
from oneiros.fsm._golem import GolemState, fold
from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.projections._golems import GolemsProjection
from oneiros.projections._runner import ProjectionRunner, RunnerSettings
from oneiros.projections._schedule import ScheduleProjection
from oneiros.scheduling._schedule_state import ScheduleState, fold_schedule
from oneiros.store._store import EventStore, open_store
from tests.strategies import events_of, metas

_STREAMS = ("g", "h", "g:staging")
# Every registered type: the ones each state handles, the dream outputs golems counts, and the
# many that only move a version, which the tallies carry. Half the draws are episodes (what a
# stream mostly is, counted by golems) or the events that create and move a golem.
_types = st.one_of(
    st.sampled_from((EpisodeRecorded, GolemCreated, ModeChanged, DreamStart)),
    st.sampled_from(sorted(registered_events().values(), key=lambda c: c.type_name)),
)
_appends = st.lists(
    st.tuples(st.sampled_from(_STREAMS), _types.flatmap(lambda cls: events_of(cast(type[Event], cls))), st.data()),
    min_size=1,
    max_size=30,
)


def _logged(store: EventStore, appends: list[tuple[str, Event, st.DataObject]]) -> None:
    versions = dict.fromkeys(_STREAMS, 0)
    for stream, event, data in appends:
        meta: EventMeta = data.draw(metas(stream))
        store.append(stream, versions[stream], [(meta, event)])
        versions[stream] += 1


def _row(db: ProjectionDB, projection: str, golem: str, cls: type[msgspec.Struct]) -> object:
    data = db.get(projection, "state", golem)
    return None if data is None else msgspec.json.decode(data, type=cls)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(appends=_appends, cut=st.integers(0, 35), batch=st.integers(1, 7), kept=st.integers(0, 2))
def test_tallied_rows_are_the_fold_of_each_stream(
    backend: str, appends: list[tuple[str, Event, st.DataObject]], cut: int, batch: int, kept: int
) -> None:
    """For any mix of every event type on two golems and a side stream, ``golems`` and ``schedule``
    caught up each on its own to any position, committing every ``batch`` positions (forgetting
    their rows past ``kept``), hold for each golem the fold of its stream up to there (a golem with
    no event yet has no row), and the same rows as the two caught up together, which apply each
    event."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_store("memory://" if backend == "memory" else f"sqlite:///{folder}/events.db")
        try:
            _check(store, appends, cut, batch, kept)
        finally:
            store.close()


def _check(store: EventStore, appends: list[tuple[str, Event, st.DataObject]], cut: int, batch: int, kept: int) -> None:
    _logged(store, appends)
    alone, together = open_projection_db("memory://"), open_projection_db("memory://")
    runner_settings = RunnerSettings(batch_events=batch, kept_rows=kept)
    for projection in (GolemsProjection(), ScheduleProjection()):
        ProjectionRunner(store, alone, [projection], runner_settings).catch_up(until=cut)
    ProjectionRunner(store, together, [GolemsProjection(), ScheduleProjection()], runner_settings).catch_up(until=cut)

    def folded(golem: str) -> tuple[object, object]:
        records = store.read_stream(golem, until=cut)
        if not records:
            return None, None
        return fold(golem, records), fold_schedule(golem, records)

    expected = [folded("g"), folded("h")]
    for db in (alone, together):
        got = [(_row(db, "golems", g, GolemState), _row(db, "schedule", g, ScheduleState)) for g in ("g", "h")]
        assert expected == got
    assert (None, None) == (
        _row(alone, "golems", "g:staging", GolemState),
        _row(alone, "schedule", "g:staging", ScheduleState),
    )
    store.close()
