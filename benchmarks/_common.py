"""Shared by the benchmark scripts: timing with medians, and the final JSON line."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any


def median_seconds(fn: Callable[[], Any], runs: int, setup: Callable[[], Any] | None = None) -> float:
    """Median wall time of ``fn`` over ``runs`` runs, each after a fresh ``setup``."""
    samples = []
    for _ in range(runs):
        if setup is not None:
            setup()
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def emit(figures: dict[str, Any]) -> None:
    """Print the figures as the script's last line."""
    print(json.dumps(figures, sort_keys=True))
