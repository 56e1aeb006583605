"""The ``schedule`` projection, which ``oneiros should-dream`` and the server's ``/should-dream``
read: at any position it holds, for each golem, the state a fold of that golem's own stream gives."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros.events._micro import MicroConsolidated
from oneiros.events._schedule import (
    ActivityRecorded,
    DreamDecided,
    DreamDirected,
    MessageHeld,
    MessagesReleased,
    SleepRequested,
)
from oneiros.events._types import (
    DreamComplete,
    DreamStart,
    EpisodeRecorded,
    Event,
    EventMeta,
    GolemCreated,
    ModeChanged,
)
from oneiros.projections._db import open_projection_db
from oneiros.projections._runner import ProjectionRunner
from oneiros.projections._schedule import ScheduleProjection, schedule_state
from oneiros.scheduling._schedule_state import fold_schedule
from oneiros.store._store import open_store
from tests.strategies import events_of, metas
from tests.test_cli import run

# The types the schedule fold handles (FatigueWarned and BehavioralPhaseChanged move one flag each).
_TYPES: tuple[type[Event], ...] = (
    GolemCreated, ModeChanged, EpisodeRecorded, ActivityRecorded, DreamStart, DreamComplete, MessageHeld,
    MessagesReleased, DreamDirected, SleepRequested, DreamDecided, MicroConsolidated,
)  # fmt: skip
_STREAMS = ("g", "h", "g:staging")
_appends = st.lists(
    st.tuples(st.sampled_from(_STREAMS), st.sampled_from(_TYPES).flatmap(events_of), st.data()),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(appends=_appends, cut=st.integers(0, 30))
def test_the_projection_at_any_position_is_the_fold_of_each_golems_stream(
    appends: list[tuple[str, Event, st.DataObject]], cut: int
) -> None:
    """Built to any position, the projection's row for each golem is ``fold_schedule`` of that
    golem's stream up to there (None for a golem never created); side streams add nothing."""
    store = open_store("memory://")
    versions = dict.fromkeys(_STREAMS, 0)
    for stream, event, data in appends:
        meta: EventMeta = data.draw(metas(stream))
        store.append(stream, versions[stream], [(meta, event)])
        versions[stream] += 1
    db = open_projection_db("memory://")
    ProjectionRunner(store, db, [ScheduleProjection()]).catch_up(until=cut)

    def folded(golem: str) -> object:
        state = fold_schedule(golem, store.read_stream(golem, until=cut))
        return state if state.mode is not None else None

    assert [folded("g"), folded("h")] == [schedule_state(db, "g"), schedule_state(db, "h")]


def test_should_dream_answers_from_the_projection_what_the_fold_decides(tmp_path: Path) -> None:
    """``oneiros should-dream --json`` reads the projection, brought up at each call: after a cycle,
    and again after 200 more surprising episodes (the projection then folds only those), its
    answer equals ``should_dream`` over a fold of the golem's whole stream."""
    from oneiros.config._load import load_config
    from oneiros.events._types import Episode, Outcome
    from oneiros.fsm._service import Golems
    from oneiros.scheduling._scheduler import should_dream

    url = f"sqlite:///{tmp_path}/events.db"
    at = "2030-01-01T00:00:00+00:00"
    assert 0 == run("dream", "--json", "--sample", "--golem", "g", store=url, cwd=tmp_path).returncode
    config = load_config("/dev/null", environ={})
    answers = []
    for batch in range(2):
        if batch:
            store = open_store(url)
            surprising = [Episode(tick=1000 + i, summary=f"e{i}", outcome=Outcome(surprise=0.9)) for i in range(200)]
            Golems(store).record_episodes("g", surprising)
            store.close()
        result = run("should-dream", "--golem", "g", "--json", "--at", at, store=url, cwd=tmp_path)
        assert 0 == result.returncode, result.stderr
        store = open_store(url)
        decision = should_dream(
            config.schedule,
            fold_schedule("g", store.read_stream("g")),
            datetime.fromisoformat(at),
            tick_seconds=config.daemon.tick_seconds,
        )
        store.close()
        answer = json.loads(result.stdout)
        expected = (decision.dream, decision.urgency, [(c.name, c.passed, c.detail) for c in decision.checks])
        assert expected == (
            answer["dream"],
            answer["urgency"],
            [(c["name"], c["passed"], c["detail"]) for c in answer["checks"]],
        )
        answers.append(answer["urgency"])
    assert answers[0] != answers[1]  # the second batch moved the state the answer comes from
