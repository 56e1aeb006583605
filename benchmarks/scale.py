"""A dream cycle and episode recording as the log grows: 1k to 1M episodes on embedded SQLite.

Each size runs in fresh processes: one records ``n`` episodes (in calls of ``BATCH``, as an agent
would); one runs the golem's first cycle over them ("cold": no snapshot yet, so it folds the
whole stream and leaves a snapshot beside the log); one records another ``BATCH`` (the next
day's episodes); then each timed cycle works on its own copy of that log and its snapshots, in a
process of its own, so its peak RSS is the cycle's alone. That timed cycle is the steady state
of a long-lived agent: a snapshot from its last cycle, a day's events since. The baseline,
measured in the same run on the same log, is one read and decode of the golem's whole stream:
what folding the log from the start costs at best.

    python benchmarks/scale.py                      # 1k, 10k, 100k
    python benchmarks/scale.py --sizes 1000000      # on demand: the million
    python benchmarks/scale.py --sizes 200 --runs 1 # what CI runs (tests/test_scale_benchmark.py)

Prints progress to stderr, then on its LAST line one JSON object: per size the record time, the
cycle's median time and peak RSS, the stream read, their ratio; the growth exponent between
consecutive sizes (1.0 is linear; n log n from 100k to 1M is about 1.08); from 100k episodes on,
the recording exponent measured inside one process (a call's cost at n/10 against at n), which a
busy disk disturbs less than totals from separate processes; and the goals.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import MARKET_WORDS

BATCH = 1_000
WORDS = MARKET_WORDS
GOALS = {"cycle_100k_s": 1.0, "cycle_100k_rss_mb": 300, "cycle_1m_s": 10.0, "cycle_1m_rss_mb": 2048}


def _episode_batches(n: int, first_tick: int = 0, seed: int = 7) -> Iterator[list[object]]:
    from oneiros import Episode, Outcome

    rng = random.Random(seed + first_tick)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for first in range(first_tick, first_tick + n, BATCH):
        yield [
            Episode(
                tick=i,
                summary=" ".join(rng.sample(WORDS, 5)),
                time=start + timedelta(minutes=20 * i),
                regime=rng.choice(("ranging", "trending", "volatile")),
                tags=(rng.choice(WORDS),),
                significance=round(rng.random(), 4),
                arousal=round(rng.random(), 4),
                outcome=Outcome(surprise=round(rng.random(), 4), pnl=round(rng.uniform(-0.05, 0.05), 5)),
            )
            for i in range(first, min(first_tick + n, first + BATCH))
        ]


def _golems(db: Path) -> object:
    from oneiros import Deps, FixedClock, Golems, SequentialIds, open_store

    # Ids of this process's own: each child starts its ids afresh, and the timed cycle must not take
    # the cold cycle's id (its ledger would count that cycle's spend as its own).
    ids = SequentialIds(f"p{os.getpid()}")
    deps = Deps(clock=FixedClock(datetime(2026, 1, 1, tzinfo=UTC)), ids=ids, seed=1)
    return Golems(open_store(f"sqlite:///{db}"), deps=deps)


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def child_record(db: Path, n: int, first: int = 0) -> dict[str, float]:
    golems = _golems(db)
    if not first:
        golems.create("g")  # type: ignore[attr-defined]
    started = time.perf_counter()
    batches: list[float] = []
    for batch in _episode_batches(n, first):
        before = time.perf_counter()
        golems.record_episodes("g", batch)  # type: ignore[attr-defined]
        batches.append(time.perf_counter() - before)
    figures = {"record_s": time.perf_counter() - started, "rss_mb": _rss_mb()}
    if len(batches) >= 100:
        # The cost of one call when the log holds n/10 episodes and when it holds n, in the same
        # process: a call that re-folded the stream would cost ten times more at the end.
        tenth = len(batches) // 10
        figures["batch_at_tenth_s"] = statistics.median(batches[tenth - 10 : tenth])
        figures["batch_at_end_s"] = statistics.median(batches[-10:])
    return figures


def child_cycle(db: Path) -> dict[str, float]:
    from oneiros import InProcessExecutor

    golems = _golems(db)
    started = time.perf_counter()
    result = InProcessExecutor(golems).run_cycle("g")  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    if result.interrupted is not None:
        raise SystemExit(f"cycle interrupted: {result.interrupted}")
    return {"cycle_s": elapsed, "rss_mb": _rss_mb(), "events": result.events_appended}


def child_read(db: Path) -> dict[str, float]:
    from oneiros.store._snapshots import read_stream_paged

    golems = _golems(db)
    started = time.perf_counter()
    # A window at a time, as a fold from the start reads it: a million decoded events at once
    # would measure the allocator, not the read.
    records = sum(1 for _ in read_stream_paged(golems.store, "g"))  # type: ignore[attr-defined]
    return {"read_s": time.perf_counter() - started, "records": records}


def _child(mode: str, db: Path, n: int = 0, first: int = 0) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--db", str(db), "--n", str(n), "--first", str(first)],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def _snapshots(db: Path) -> Path:
    return db.with_name(db.name + ".snapshots")


def _label(n: int) -> str:
    return (
        f"{n // 1_000_000}m"
        if n >= 1_000_000 and n % 1_000_000 == 0
        else (f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n))
    )


def _exponent(n1: int, t1: float, n2: int, t2: float) -> float:
    return round(math.log(max(t2, 1e-9) / max(t1, 1e-9)) / math.log(n2 / n1), 3)


def run(sizes: list[int], runs: int) -> dict[str, object]:
    figures: dict[str, object] = {"sizes": sizes, "runs": runs, "batch": BATCH}
    with tempfile.TemporaryDirectory(prefix="oneiros-scale-") as tmp:
        for n in sizes:
            label = _label(n)
            log = Path(tmp) / f"{label}.db"
            recorded = _child("record", log, n)
            figures[f"record_{label}_s"] = round(recorded["record_s"], 4)
            if "batch_at_end_s" in recorded:
                # Per-call cost growth over the last 10x of the log: 1.0 is linear recording.
                marginal = recorded["batch_at_end_s"] / recorded["batch_at_tenth_s"]
                figures[f"record_marginal_exponent_{label}"] = round(1 + math.log10(max(marginal, 1e-9)), 3)
            cold = _child("cycle", log)
            figures[f"cycle_cold_{label}_s"] = round(cold["cycle_s"], 4)
            figures[f"cycle_cold_{label}_rss_mb"] = cold["rss_mb"]
            _child("record", log, BATCH, first=n)
            reads, cycles, rss, events = [], [], [], 0.0
            for attempt in range(runs):
                copy = Path(tmp) / f"{label}-{attempt}.db"
                shutil.copy(log, copy)
                if _snapshots(log).exists():
                    shutil.copytree(_snapshots(log), _snapshots(copy))
                reads.append(_child("read", copy)["read_s"])
                cycle = _child("cycle", copy)
                cycles.append(cycle["cycle_s"])
                rss.append(cycle["rss_mb"])
                events = cycle["events"]
                copy.unlink()
                shutil.rmtree(_snapshots(copy), ignore_errors=True)
            figures[f"read_{label}_s"] = round(statistics.median(reads), 4)
            figures[f"cycle_{label}_s"] = round(statistics.median(cycles), 4)
            figures[f"cycle_{label}_rss_mb"] = max(rss)
            figures[f"cycle_{label}_events"] = events
            figures[f"cycle_{label}_over_read"] = round(statistics.median(cycles) / statistics.median(reads), 2)
            print(f"{label}: {json.dumps({k: v for k, v in figures.items() if f'_{label}_' in k})}", file=sys.stderr)
            log.unlink()
            shutil.rmtree(_snapshots(log), ignore_errors=True)
    for a, b in itertools.pairwise(sizes):
        la, lb = _label(a), _label(b)
        for what in ("record", "cycle"):
            ta, tb = figures[f"{what}_{la}_s"], figures[f"{what}_{lb}_s"]
            assert isinstance(ta, float)
            assert isinstance(tb, float)
            figures[f"{what}_exponent_{la}_{lb}"] = _exponent(a, ta, b, tb)
    if 100_000 in sizes and 1_000_000 in sizes:
        figures["nlogn_exponent_100k_1m"] = round(math.log(10 * math.log(1e6) / math.log(1e5)) / math.log(10), 3)
    for key, goal in GOALS.items():
        if key in figures:
            actual = figures[key]
            assert isinstance(actual, float | int)
            figures[f"goal_{key}"] = goal
            figures[f"meets_{key}"] = actual <= goal
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated episode counts")
    parser.add_argument("--runs", type=int, default=3, help="cycle runs per size (median)")
    parser.add_argument("--child", choices=("record", "cycle", "read"), help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "record":
        print(json.dumps(child_record(args.db, args.n, args.first)))
    elif args.child == "cycle":
        print(json.dumps(child_cycle(args.db)))
    elif args.child == "read":
        print(json.dumps(child_read(args.db)))
    else:
        sizes = sorted(int(s) for s in args.sizes.split(","))
        print(json.dumps(run(sizes, max(1, args.runs)), sort_keys=True))


if __name__ == "__main__":
    main()
