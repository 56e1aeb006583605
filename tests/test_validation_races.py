"""Two runners of the validation sweep at once: each outcome still moves an entry once."""

from __future__ import annotations

from oneiros.events import STAGING_STREAM, ConfidenceChanged, open_store, side_stream
from oneiros.validation import StagingProcess
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

    staging = world.store.read_stream(side_stream(world.golem, STAGING_STREAM))
    moved = [r.event for r in staging if isinstance(r.event, ConfidenceChanged)]
    assert [entry_id] == [e.entry_id for e in moved]
