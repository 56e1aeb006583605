"""Distant-pair selection over 1k, 10k and 100k episodes, and a full deterministic cycle over 10k.

Prints progress, then on its LAST line one JSON object of figures: medians of several runs, how
selection grows from 1k to 100k next to n log n, and its ratio to one matrix-vector pass over the
same 100k embeddings (the baseline, measured in the same run).
"""

from __future__ import annotations

import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import MARKET_WORDS
from oneiros import Deps, Episode, FixedClock, Golems, InProcessExecutor, Outcome, SequentialIds, open_store
from oneiros.episodes._fold import episode_seconds
from oneiros.episodes._vectors import HashingEmbedder, episode_text
from oneiros.phases._pairs import select_distant_pairs
from oneiros.settings._cycle import CycleBudget, CycleSettings, PairSettings

RUNS = 7
HARDENED = CycleSettings(budget=CycleBudget(tier="hardened"))
WORDS = MARKET_WORDS


def episodes(n: int, seed: int = 1) -> list[Episode]:
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        Episode(
            tick=i,
            summary=" ".join(rng.sample(WORDS, 5)),
            time=start + timedelta(minutes=20 * i),
            regime=rng.choice(("ranging", "trending", "volatile")),
            significance=rng.random(),
            arousal=rng.random(),
            outcome=Outcome(surprise=rng.random(), pnl=rng.uniform(-0.05, 0.05)),
        )
        for i in range(n)
    ]


def median_time(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    figures: dict[str, float] = {}
    embedder = HashingEmbedder()
    prepared = {}
    for n in (1_000, 10_000, 100_000):
        eps = episodes(n)
        started = time.perf_counter()
        vectors = embedder.embed([episode_text(e) for e in eps])
        figures[f"embed_{n // 1000}k_s"] = round(time.perf_counter() - started, 4)
        prepared[n] = (
            episode_seconds(eps),
            np.fromiter((e.significance for e in eps), dtype=np.float64, count=n),
            vectors,
        )
        print(f"prepared {n} episodes", file=sys.stderr)
    for n, (seconds, significance, vectors) in prepared.items():
        draws = iter(range(10_000))
        figures[f"distant_pairs_{n // 1000}k_s"] = round(
            median_time(
                lambda s=seconds, g=significance, v=vectors, d=draws: select_distant_pairs(
                    s, g, v, PairSettings(), np.random.default_rng(next(d))
                )
            ),
            5,
        )
        figures[f"fallback_pairs_{n // 1000}k_s"] = round(
            median_time(
                lambda s=seconds, g=significance, d=draws: select_distant_pairs(
                    s, g, None, PairSettings(), np.random.default_rng(next(d))
                )
            ),
            5,
        )
        print(f"pairs over {n}: {figures[f'distant_pairs_{n // 1000}k_s']} s", file=sys.stderr)
    seconds, significance, vectors = prepared[100_000]
    figures["baseline_matvec_100k_s"] = round(median_time(lambda: vectors @ vectors[0]), 5)
    figures["pairs_100k_over_matvec"] = round(figures["distant_pairs_100k_s"] / figures["baseline_matvec_100k_s"], 2)
    figures["growth_10k_over_1k"] = round(figures["distant_pairs_10k_s"] / figures["distant_pairs_1k_s"], 2)
    figures["growth_100k_over_10k"] = round(figures["distant_pairs_100k_s"] / figures["distant_pairs_10k_s"], 2)
    figures["nlogn_growth_per_10x"] = round(10 * math.log(100_000) / math.log(10_000), 2)

    eps10k = episodes(10_000, seed=2)
    for name, settings in (("cycle_10k", CycleSettings()), ("cycle_10k_hardened", HARDENED)):
        cycle_times, events = [], 0
        for _ in range(3):
            deps = Deps(clock=FixedClock(datetime(2026, 1, 1, tzinfo=UTC)), ids=SequentialIds(), seed=1)
            golems = Golems(open_store("memory://"), deps=deps)
            golems.create("g")
            golems.record_episodes("g", eps10k)
            started = time.perf_counter()
            result = InProcessExecutor(golems, settings=settings).run_cycle("g")
            cycle_times.append(time.perf_counter() - started)
            events = result.events_appended
        figures[f"{name}_s"] = round(statistics.median(cycle_times), 4)
        figures[f"{name}_events"] = events
        print(f"{name}: {figures[f'{name}_s']} s, {events} events", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
