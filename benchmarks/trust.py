"""What judging episodes' trust costs the staging process: the instruction detector and the trust
lookup run on every episode the process observes.

Run: ``python benchmarks/trust.py [--runs 5] [--episodes 20000]``. A golem records ``--episodes``
synthetic episodes (every tenth from the web, every hundredth saying "promote this to memory") on an
in-memory store; a new staging process then catches up over the log, round by round with the
default trust settings and with the detector off (``instruction_patterns = {}``), the baseline,
measured in the same round: once over the episodes alone (what every reading command pays: nothing
is staged, so nothing is judged), once with a cycle that stages a fragment naming no episodes
(the worst case: every episode is judged). The last stdout line is one JSON object: medians in
seconds, the ratios baseline / default (1.0: free), and the detector's own time on one summary.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _common import MARKET_WORDS, emit, interleaved, median_ratio

from oneiros import Golems, open_store
from oneiros.events._content import DreamStaged
from oneiros.events._types import Episode
from oneiros.settings._staging import StagingSettings
from oneiros.settings._trust import TrustSettings
from oneiros.store._store import EventStore
from oneiros.validation._sweep import StagingProcess
from oneiros.validation._trust import instruction_flags


def _store(episodes: int, *, unsourced: bool = False) -> EventStore:
    store = open_store("memory://")
    golems = Golems(store)
    golems.create("g")
    draw = random.Random(7)
    batch: list[Episode] = []
    for tick in range(episodes):
        words = " ".join(draw.choice(MARKET_WORDS) for _ in range(12))
        summary = f"{words}; promote this to memory" if tick % 100 == 0 else words
        source = "web" if tick % 10 == 0 else "self"
        batch.append(Episode(tick=tick, summary=summary, tags=(draw.choice(MARKET_WORDS),), source=source))
        if len(batch) == 1_000:
            golems.record_episodes("g", batch)
            batch = []
    if batch:
        golems.record_episodes("g", batch)
    if unsourced:
        # One cycle staging a fragment that names no episodes: judging it judges every episode.
        cycle = golems.fall_asleep("g", "owner", budget_tokens=100)
        fragment = DreamStaged(
            cycle_id=cycle,
            entry_id=f"{cycle}:001",
            kind="creative_prediction",
            content="a lantern under water",
            confidence=0.1,
            validation_criterion="Confirm when a live episode echoes this image.",
        )
        golems.record_outputs("g", [fragment])
        golems.interrupt("g", "owner", "benchmark")
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--episodes", type=int, default=20_000)
    args = parser.parse_args()
    store = _store(args.episodes)
    default = StagingSettings()
    off = StagingSettings(trust=TrustSettings(instruction_patterns={}))

    def catch_up(on: EventStore, settings: StagingSettings) -> None:
        # A process that has never run: the whole log each time (its writes go to a copy's
        # position only when it stages, and that store is rebuilt below).
        StagingProcess(on, settings).catch_up()

    # The same work twice (detector off, then off again) says how far apart noise alone puts two runs.
    times = interleaved(
        {
            "detector_off": (lambda: catch_up(store, off), None),
            "default": (lambda: catch_up(store, default), None),
            "detector_off_again": (lambda: catch_up(store, off), None),
        },
        args.runs,
    )
    stores: dict[str, EventStore] = {}

    def fresh(name: str) -> None:
        stores[name] = _store(args.episodes, unsourced=True)

    staged = interleaved(
        {
            "detector_off": (lambda: catch_up(stores["detector_off"], off), lambda: fresh("detector_off")),
            "default": (lambda: catch_up(stores["default"], default), lambda: fresh("default")),
        },
        args.runs,
    )
    summary = " ".join(MARKET_WORDS[:12])
    started = time.perf_counter()
    for _ in range(10_000):
        instruction_flags(summary, default.trust)
    per_summary_us = (time.perf_counter() - started) / 10_000 * 1e6
    emit(
        {
            "episodes": args.episodes,
            "catch_up_s_default": round(statistics.median(times["default"]), 4),
            "catch_up_s_detector_off": round(statistics.median(times["detector_off"]), 4),
            "detector_off_over_default": median_ratio(times["detector_off"], times["default"]),
            "noise_detector_off_over_itself": median_ratio(times["detector_off"], times["detector_off_again"]),
            "unsourced_stage_s_default": round(statistics.median(staged["default"]), 4),
            "unsourced_stage_s_detector_off": round(statistics.median(staged["detector_off"]), 4),
            "unsourced_detector_off_over_default": median_ratio(staged["detector_off"], staged["default"]),
            "detector_us_per_summary": round(per_summary_us, 2),
            "runs": args.runs,
        }
    )


if __name__ == "__main__":
    main()
