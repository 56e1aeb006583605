"""Runners in other processes committing mid-read: each outcome still moves an entry once, and
verify compares like with like."""

from __future__ import annotations

from oneiros.events._staging import STAGING_STREAM, ConfidenceChanged, side_stream
from oneiros.store._store import open_store
from oneiros.validation._sweep import StagingProcess
from tests.projections_support import World


def test_a_runner_loading_while_another_commits_does_not_decide_twice() -> None:
    """A sweep that reads its tracked position, then (after another runner committed its decision on
    the next outcome) rebuilds its memory from the log, must not decide that outcome again: the
    position and the memory it loads come from one moment."""
    world = World(open_store("memory://"))
    world.episodes(1)
    world.dream(hypotheses=1)
    (entry_id,) = world.entries()
    world.outcome("confirms", entry_id)

    first = StagingProcess(world.store)
    late = StagingProcess(world.store)
    rebuild = late.rebuild

    def rebuild_after_the_other_commits(tracked: int) -> None:
        if not first.position:
            first.catch_up()  # commits its decision on the outcome between `late`'s two reads
        rebuild(tracked)

    late.rebuild = rebuild_after_the_other_commits  # type: ignore[method-assign]
    late.catch_up()
    assert 0 < first.position <= late.position  # the other runner did commit in the middle

    staging = world.store.read_stream(side_stream(world.golem, STAGING_STREAM))
    moved = [r.event for r in staging if isinstance(r.event, ConfidenceChanged)]
    assert [entry_id] == [e.entry_id for e in moved]


def test_verify_compares_the_live_rows_at_the_position_it_read() -> None:
    """`replay --verify` while another process's runner commits (a daemon following the log): the
    live digest and the position the rebuild goes to are of one moment, so every projection matches."""
    world = World(open_store("memory://"))
    world.episodes(1)
    world.dream(hypotheses=1)
    world.update()
    (entry_id,) = world.entries()
    world.outcome("confirms", entry_id)  # the live projections are now one event behind the log
    projections = world.projections
    digest = projections.db.digest
    moved: list[bool] = []

    def digest_while_a_runner_commits(name: str) -> str:
        if name == "staging" and not moved:  # the projection the outcome's decision changes
            moved.append(True)
            world.update()  # commits the outcome's rows and position after verify read the position
        return digest(name)

    projections.db.digest = digest_while_a_runner_commits  # type: ignore[method-assign, assignment]
    results = projections.verify()
    assert moved
    assert [] == [(r.projection, r.live[:8], r.rebuilt[:8]) for r in results if not r.ok]
