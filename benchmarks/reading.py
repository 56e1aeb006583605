"""What a reading command pays for the validation sweep on a long-lived golem's log.

Every reading command (``journal``, ``staging``, ``report``, the server's routes) first brings the
validation sweep to the log's head, so that what it shows includes the sweep's decisions. The
sweep's memory is a fold of the whole log. This measures, each in a fresh process as a command
runs, on embedded SQLite with ``n`` episodes and one dream cycle:

* ``idle``: the sweep with nothing new to decide (a second command after the first);
* ``after_cycle``: the first command after a new dream cycle, restoring the sweep's snapshot and
  folding what came after it;
* ``after_cycle_whole``: the same, with the sweep's snapshots off: the whole-log fold every command
  paid before snapshots, measured in the same run as the baseline (``*_vs_whole`` is its time
  over ours).

Each variant works on its own copy of the same log and snapshots. Prints progress to stderr and,
on its last line, one JSON object: per size the seconds and peak RSS of each variant (medians of
``--runs``).

    python benchmarks/reading.py                       # 100k episodes
    python benchmarks/reading.py --sizes 1000000       # on demand: the million
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import emit, size_arguments
from benchmarks.scale import BATCH, _child, _rss_mb, _snapshots


def child_sweep(db: Path, every: int) -> dict[str, float]:
    from oneiros import open_store
    from oneiros.projections._runner import RunnerSettings
    from oneiros.validation._sweep import StagingProcess

    started = time.perf_counter()
    StagingProcess(open_store(f"sqlite:///{db}"), runner=RunnerSettings(snapshot_every=every)).catch_up()
    return {"s": time.perf_counter() - started, "rss_mb": _rss_mb()}


def _sweep(db: Path, every: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--db", str(db), "--every", str(every)],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def _copy(log: Path, to: Path) -> Path:
    shutil.copy(log, to)
    if _snapshots(log).exists():
        shutil.copytree(_snapshots(log), _snapshots(to))
    return to


def run(sizes: list[int], runs: int) -> dict[str, object]:
    figures: dict[str, object] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp_dir:
            tmp = Path(tmp_dir)
            log = tmp / "events.db"
            print(f"{n} episodes: recording", file=sys.stderr)
            _child("record", log, n)
            _child("cycle", log)
            _sweep(log, 10_000)  # the first reader after the first cycle: folds all, writes the snapshot
            _child("record", log, BATCH, first=n)
            _child("cycle", log)
            results: dict[str, list[dict[str, float]]] = {"idle": [], "after_cycle": [], "after_cycle_whole": []}
            for run_no in range(runs):
                print(f"  run {run_no + 1}/{runs}", file=sys.stderr)
                baseline = _copy(log, tmp / f"whole-{run_no}.db")
                results["after_cycle_whole"].append(_sweep(baseline, 0))
                ours = _copy(log, tmp / f"ours-{run_no}.db")
                results["after_cycle"].append(_sweep(ours, 10_000))
                results["idle"].append(_sweep(ours, 10_000))
            row: dict[str, float] = {}
            for name, values in results.items():
                row[f"{name}_s"] = round(statistics.median(v["s"] for v in values), 3)
                row[f"{name}_rss_mb"] = round(statistics.median(v["rss_mb"] for v in values), 1)
            whole = results["after_cycle_whole"]
            for name in ("after_cycle", "idle"):
                ratios = [w["s"] / o["s"] for w, o in zip(whole, results[name], strict=True)]
                row[f"{name}_vs_whole"] = round(statistics.median(ratios), 2)
            figures[str(n)] = row
            print(f"  {row}", file=sys.stderr)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    size_arguments(parser)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--db", type=Path)
    parser.add_argument("--every", type=int, default=10_000)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child_sweep(args.db, args.every)))
        return
    emit({"sizes": run(args.sizes, args.runs), "runs": args.runs})


if __name__ == "__main__":
    main()
