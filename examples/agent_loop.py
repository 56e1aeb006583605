"""An agent loop on oneiros's Python API (``oneiros.Oneiros``), offline: the coding agent of ``coder.py`` works through
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

from oneiros import Deps, Episode, FixedClock, Oneiros
from oneiros.app import OutcomeInput
from oneiros.config import load_config


def main(store_url: str) -> int:
    config = load_config(preset="bumblebee")  # sleeps at night, after an hour of silence
    clock = FixedClock(coder.START, step=timedelta(milliseconds=10))
    with Oneiros(store_url, config, deps=Deps(clock=clock, seed=7)) as app:
        if app.golem_exists(coder.GOLEM):
            print(f"golem {coder.GOLEM!r} already lives in {store_url}; use a new store")
            return 1
        app.create_golem(coder.GOLEM, name="a coding agent")

        # The day: each task is activity (it keeps the golem awake) and an episode (what happened).
        for episode in coder.work_day():
            app.record_activity(coder.GOLEM, "action", episode["summary"])
            app.record_episodes(coder.GOLEM, [msgspec.convert(episode, Episode)])
            clock.advance(timedelta(minutes=coder.TASK_MINUTES))
        print(f"recorded {len(coder.work_day())} episodes for {coder.GOLEM}")

        # The night: should it dream?
        clock.advance(coder.NIGHT - clock())
        decision = app.should_dream(coder.GOLEM, at=clock())
        if not decision.dream:
            print("should_dream: no:", "; ".join(c.detail for c in decision.checks if not c.passed))
            return 1
        print(f"should_dream: yes ({decision.trigger})")

        run = app.dream(coder.GOLEM)
        assert run.complete is not None, run.interrupted
        done = run.complete
        print(
            f"dreamt cycle {run.cycle_id}: {done.episodes_replayed} episodes replayed, "
            f"{done.counterfactuals_generated} counterfactuals, {done.insights_crystallized} insights"
        )

        # Morning: what did it wake up with?
        woke = app.report(coder.GOLEM)
        assert woke.wake_up is not None
        print("woke up with:", woke.wake_up.text)
        print(f"{len(woke.staged)} dream outputs staged for validation")

        # What do its dreams propose about deploys? Dreams come back apart: hypotheses, not memory.
        found = app.recall(coder.GOLEM, coder.RECALL_QUERY, 3)
        print(f"recall {coder.RECALL_QUERY!r}: {len(found.results)} memories, {len(found.related_dreams)} dreams")
        for dream in found.related_dreams:
            print(f"  dream {dream.ref} ({dream.status}, confidence {dream.confidence:.2f}): {dream.text}")

        # The agent acts and reports the outcome: the validation sweep moves the dreams it bears on.
        outcome = coder.next_morning_outcome(tick=len(coder.work_day()) + 1)
        moved = app.record_outcome(coder.GOLEM, msgspec.convert(outcome, OutcomeInput))
        print(f"outcome recorded at log position {moved.position}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///.oneiros/events.db"))
