"""Re-running a recorded cycle against running it: the cost of ``oneiros rerun``.

Run: ``python benchmarks/rerun.py [--runs 5] [--episodes 500]``. A golem with the sample episodes
(repeated to ``--episodes``) dreams one offline cycle on an in-memory store, then that cycle is
re-run (scratch copy, every response read from the log, events compared). Round by round the
baseline is the original cycle's own run time, measured in the same round on a fresh store. The
last stdout line is one JSON object: medians in seconds and the ratio rerun / cycle; plus the
cost of hashing one request (the key recorded answers are matched on) against encoding it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta

import msgspec

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest, request_hash, request_shape
from oneiros.lab._rerun import rerun_cycle
from oneiros.settings._cycle import CycleSettings


def _golems(episodes: int) -> Golems:
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=1),
    )
    golems.create("g")
    sample = load_episodes(sample_episodes_path())
    many = [
        msgspec.structs.replace(
            e,
            tick=e.tick + 100_000 * round_,
            time=(e.time or datetime(2026, 10, 1, tzinfo=UTC)) + timedelta(days=round_),
        )
        for round_ in range(episodes // len(sample) + 1)
        for e in sample
    ][:episodes]
    golems.record_episodes("g", many)
    return golems


def _round(episodes: int) -> tuple[float, float, bool]:
    golems = _golems(episodes)
    start = time.perf_counter()
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=1)).run_cycle("g").cycle_id
    cycle_s = time.perf_counter() - start
    start = time.perf_counter()
    report = rerun_cycle(golems.store, cycle, CycleSettings(), shape_of=OfflineGenerator(seed=1), seed=1)
    return cycle_s, time.perf_counter() - start, report.identical


def _hash_cost(n: int = 20_000) -> tuple[float, float]:
    generator = OfflineGenerator()
    request = GenerationRequest(call_key="c:rem:1", phase="rem", task="pattern", prompt="x" * 1500, system="s" * 200)
    encoder = msgspec.json.Encoder()
    start = time.perf_counter()
    for _ in range(n):
        request_hash(request_shape(generator, request))
    hashed = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        encoder.encode(request)
    encoded = (time.perf_counter() - start) / n
    return hashed, encoded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--episodes", type=int, default=500)
    args = parser.parse_args()
    _round(50)  # warm imports and caches
    cycles, reruns, identical = [], [], True
    for _ in range(args.runs):
        cycle_s, rerun_s, same = _round(args.episodes)
        cycles.append(cycle_s)
        reruns.append(rerun_s)
        identical = identical and same
    hashed, encoded = _hash_cost()
    cycle_median, rerun_median = statistics.median(cycles), statistics.median(reruns)
    print(
        json.dumps(
            {
                "episodes": args.episodes,
                "runs": args.runs,
                "cycle_s": round(cycle_median, 4),
                "rerun_s": round(rerun_median, 4),
                "rerun_vs_cycle": round(rerun_median / cycle_median, 2),
                "identical": identical,
                "request_hash_us": round(hashed * 1e6, 2),
                "request_encode_us": round(encoded * 1e6, 2),
                "hash_vs_encode": round(hashed / encoded, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
