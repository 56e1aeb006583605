"""A follower told to stop during a long first catch-up (after a large import) keeps what it built:
the sweep records its decisions and position at its next progress step, each projection at its
next commit; a later catch-up goes on from there and ends where one uninterrupted run ends."""

from __future__ import annotations

import threading

from oneiros.projections._db import open_projection_db as open_db
from oneiros.projections._runner import ProjectionRunner, RunnerSettings
from oneiros.projections._service import ProjectionSettings, make_projections
from oneiros.store._store import EventStore, open_store
from oneiros.validation._sweep import StagingProcess
from tests.projections_support import World

_EPISODES = 12_000  # more than two of the sweep's progress steps (5,000 inputs each)


def _imported() -> EventStore:
    """A golem with a large import between two cycles, and an outcome: the same
    log, ids included, every time it is built."""
    world = World(open_store("memory://"))
    world.dream(hypotheses=2, insights=1)
    world.episodes(*range(1, _EPISODES + 1))
    world.dream(hypotheses=2)
    world.outcome("confirms")
    return world.store


def _stopped() -> threading.Event:
    stop = threading.Event()
    stop.set()
    return stop


def test_a_stopped_sweep_keeps_its_work_and_the_next_one_ends_where_one_run_does() -> None:
    """With ``stop`` set, the sweep stops after its first 5,000 inputs with its position recorded
    there (short of the head); a fresh sweep then goes on from it, and the staging side stream ends
    event for event as one uninterrupted sweep of the same log leaves it."""
    store, whole = _imported(), _imported()
    stopped_at = StagingProcess(store).catch_up(stop=_stopped())
    tracked = store.backend.recorder.max_tracking_id("oneiros.staging")
    assert (True, stopped_at) == (0 < stopped_at < store.head(), tracked)

    StagingProcess(store).catch_up()
    StagingProcess(whole).catch_up()

    def decisions(on: EventStore) -> list[tuple[int, str, bytes]]:
        return [(r.version, type(r.event).__name__, r.meta.event_id.encode()) for r in on.read_stream("g1:staging")]

    assert decisions(whole) == decisions(store)
    assert decisions(store)  # the cycles staged entries: there was something to decide


def test_stopped_projections_keep_their_commits_and_catch_up_to_one_run() -> None:
    """With ``stop`` set, the projections stop at their first commit (``batch_events`` reads) with
    that position recorded; a later catch-up leaves every projection's rows as one run does."""
    store = _imported()
    StagingProcess(store).catch_up()
    projections = make_projections(ProjectionSettings())
    settings = RunnerSettings(batch_events=1_000)
    stepped, once = open_db("memory://"), open_db("memory://")
    positions = ProjectionRunner(store, stepped, projections, settings).catch_up(stop=_stopped())
    assert {p.name: 1_000 for p in projections} == positions
    ProjectionRunner(store, stepped, projections, settings).catch_up()
    ProjectionRunner(store, once, projections, settings).catch_up()
    assert [(p.name, once.position(p.name), once.digest(p.name)) for p in projections] == [
        (p.name, stepped.position(p.name), stepped.digest(p.name)) for p in projections
    ]
