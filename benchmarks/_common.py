"""Shared by the benchmark scripts: timing with medians, and the final JSON line."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

# Trading words the synthetic episodes of the memory and scale benchmarks are made of.
MARKET_WORDS = [
    "eth",
    "btc",
    "sol",
    "oracle",
    "gas",
    "liquidity",
    "funding",
    "basis",
    "vault",
    "bridge",
    "stable",
    "perp",
    "option",
    "spread",
    "whale",
    "breakout",
    "range",
    "dump",
    "pump",
    "drift",
    "squeeze",
    "unwind",
    "rebalance",
    "hedge",
    "fade",
    "chase",
    "exit",
    "entry",
]


def emit(figures: dict[str, Any]) -> None:
    """Print the figures as the script's last line."""
    print(json.dumps(figures, sort_keys=True))


Variant = tuple[Callable[[], Any], Callable[[], Any] | None]


def interleaved(
    variants: dict[str, Variant], runs: int, cpu: dict[str, list[float]] | None = None
) -> dict[str, list[float]]:
    """Wall times of each ``(fn, setup)`` variant, run in turn within each round.

    Interleaving keeps a ratio between two variants honest on a noisy machine: a burst of load
    falls on both sides of one round instead of on all the runs of one side. ``cpu``, if given, is
    filled with each run's CPU time of this process, which other processes on a shared machine
    disturb far less than wall time (but which leaves out waiting for the disk).
    """
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, (fn, setup) in variants.items():
            if setup is not None:
                setup()
            started, cpu_started = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - started)
            if cpu is not None:
                cpu.setdefault(name, []).append(time.process_time() - cpu_started)
    return times


def median_ratio(baseline: list[float], ours: list[float]) -> float:
    """Median over rounds of baseline time over our time: ours as a fraction of the baseline's speed."""
    return round(statistics.median(b / o for b, o in zip(baseline, ours, strict=True)), 3)


def size_arguments(parser: argparse.ArgumentParser, runs: int = 3) -> None:
    """``--sizes`` (comma-separated episode counts, 100k by default) and ``--runs`` (rounds per size)."""
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[100_000])
    parser.add_argument("--runs", type=int, default=runs)
