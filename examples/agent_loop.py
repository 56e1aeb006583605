"""An agent loop on oneiros's Python API, offline: the coding agent of ``coder.py`` works through
its day and records each task as an episode, asks at night whether to dream (``should_dream``),
dreams one cycle, reads the summary it wakes up with, recalls what its dreams proposed about
deploys, and records the next morning's outcome against them.

    python examples/agent_loop.py [STORE_URL]     # default sqlite:///.oneiros/events.db

Time is injected (a simulated clock starting Monday 09:00 UTC), so the run is the same every time;
the store is real, so ``oneiros journal --golem coder`` shows the dream afterwards.
"""

from __future__ import annotations

import sys
from datetime import timedelta

import coder
import msgspec

from oneiros import Deps, Episode, FixedClock, Golems, InProcessExecutor, open_store, replay
from oneiros.config._load import load_config
from oneiros.daemon._catch_up import update
from oneiros.events._schedule import ActivityRecorded
from oneiros.projections._db import default_projection_url, open_projection_db
from oneiros.projections._journal import dream_reports
from oneiros.projections._recall import recall
from oneiros.projections._service import Projections
from oneiros.scheduling._schedule_state import fold_schedule
from oneiros.scheduling._scheduler import should_dream
from oneiros.validation._review import Feedback, OutcomeInput


def main(store_url: str) -> int:
    config = load_config(preset="bumblebee")  # sleeps at night, after an hour of silence
    clock = FixedClock(coder.START, step=timedelta(milliseconds=10))
    with open_store(store_url) as store:
        golems = Golems(store, deps=Deps(clock=clock, seed=7))
        if coder.GOLEM in replay(store):
            print(f"golem {coder.GOLEM!r} already lives in {store_url}; use a new store")
            return 1
        golems.create(coder.GOLEM, name="a coding agent")

        # The day: each task is activity (it keeps the golem awake) and an episode (what happened).
        for episode in coder.work_day():
            golems.record(coder.GOLEM, [ActivityRecorded(kind="action", detail=episode["summary"])])
            golems.record_episodes(coder.GOLEM, [msgspec.convert(episode, Episode)])
            clock.advance(timedelta(minutes=coder.TASK_MINUTES))
        print(f"recorded {len(coder.work_day())} episodes for {coder.GOLEM}")

        # The night: should it dream?
        clock.advance(coder.NIGHT - clock())
        state = fold_schedule(coder.GOLEM, store.read_stream(coder.GOLEM))
        decision = should_dream(config.schedule, state, clock(), tick_seconds=config.daemon.tick_seconds)
        if not decision.dream:
            print("should_dream: no:", "; ".join(c.reason() for c in decision.checks if not c.passed))
            return 1
        print(f"should_dream: yes ({decision.trigger})")

        result = InProcessExecutor(golems, settings=config.cycle).run_cycle(coder.GOLEM)
        assert result.complete is not None, result.interrupted
        done = result.complete
        print(
            f"dreamt cycle {result.cycle_id}: {done.episodes_replayed} episodes replayed, "
            f"{done.counterfactuals_generated} counterfactuals, {done.insights_crystallized} insights"
        )

        # Morning: what did it wake up with?
        _report, wake_up, staged = dream_reports(store, coder.GOLEM)[-1]
        assert wake_up is not None
        print("woke up with:", wake_up.text)
        print(f"{len(staged)} dream outputs staged for validation")

        # What do its dreams propose about deploys? Dreams come back apart: hypotheses, not memory.
        with Projections(store, open_projection_db(default_projection_url(store.url))) as projections:
            update(projections, config.staging)
            found = recall(projections.db, projections.staging(coder.GOLEM), coder.GOLEM, coder.RECALL_QUERY, 3)
        print(f"recall {coder.RECALL_QUERY!r}: {len(found.results)} memories, {len(found.related_dreams)} dreams")
        for dream in found.related_dreams:
            print(f"  dream {dream.ref} ({dream.status}, confidence {dream.confidence:.2f}): {dream.text}")

        # The agent acts and reports the outcome: the validation sweep moves the dreams it bears on.
        outcome = coder.next_morning_outcome(tick=len(coder.work_day()) + 1)
        record = Feedback(store, deps=Deps(clock=clock)).record_outcome(
            coder.GOLEM, msgspec.convert(outcome, OutcomeInput)
        )
        print(f"outcome recorded at log position {record.position}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///.oneiros/events.db"))
