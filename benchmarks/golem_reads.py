"""What reading one thing about a long-lived golem costs, against reading its whole stream.

Commands that answer about one golem (``should-dream``, ``dream --wait``, ``diff``, ``lineage``)
used to decode the golem's whole stream, which at a million episodes is seconds and two gigabytes
every call. On embedded SQLite with ``n`` episodes, a cycle, 1 000 more episodes and a second
cycle, each variant runs in a fresh process, as a command does, and is measured against the
whole-stream read it replaced, in the same run:

* ``should_dream``: the ``schedule`` projection brought to the head and read (after a first call
  built it; ``should_dream_first`` is that first call), against ``fold_schedule`` over the stream;
* ``cycle``: ``read_cycle`` of the first cycle, against the whole stream filtered by cycle id;
* ``lineage``: ``entry_lineage`` of an entry of the first cycle drawn from episodes, against the
  whole-stream read its old code started with.

``*_vs_whole`` is the whole read's time over ours (medians of ``--runs`` rounds, each variant and
its baseline back to back). Progress goes to stderr; the last line is one JSON object.

    python benchmarks/golem_reads.py                      # 100k episodes
    python benchmarks/golem_reads.py --sizes 1000000      # on demand: the million
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import emit, median_ratio, size_arguments
from benchmarks.reading import _sweep
from benchmarks.scale import BATCH, _child, _rss_mb

_VARIANTS = ("should_dream", "cycle", "lineage")


def _store(db: Path) -> Any:
    from oneiros import open_store

    return open_store(f"sqlite:///{db}", create=False)


def _first_cycle(store: Any) -> str:
    from oneiros.events._types import DreamStart

    return str(store.read_stream("g", types=[DreamStart])[0].event.cycle_id)


def _sourced_entry(store: Any, cycle_id: str) -> str:
    from oneiros.events._staging import EntryStaged

    return next(
        r.event.entry_id
        for r in store.read_all(types=[EntryStaged])
        if r.event.lineage.cycle_id == cycle_id and r.event.lineage.source_episode_ticks
    )


def _ours(variant: str, db: Path) -> int:
    """The narrow read; returns how many things it found, so nothing is optimised away."""
    from oneiros.projections._lineage import entry_lineage
    from oneiros.projections._service import Projections
    from oneiros.store._snapshots import read_cycle

    store = _store(db)
    if variant == "should_dream":
        with Projections(store) as projections:  # beside the store, as the CLI keeps it
            projections.update(["schedule"])
            state = projections.schedule("g")
        return state.episodes if state is not None else 0
    cycle_id = _first_cycle(store)
    if variant == "cycle":
        return len(read_cycle(store, "g", cycle_id))
    return len(entry_lineage(store, _sourced_entry(store, cycle_id)).source_episodes)


def _whole(variant: str, db: Path) -> int:
    """The whole-stream read the narrow one replaced."""
    from oneiros.scheduling._schedule_state import fold_schedule

    store = _store(db)
    if variant == "should_dream":
        return fold_schedule("g", store.read_stream("g")).episodes
    cycle_id = _first_cycle(store)
    if variant == "cycle":
        return len([r for r in store.read_stream("g") if r.meta.cycle_id == cycle_id])
    _sourced_entry(store, cycle_id)
    return len(store.read_stream("g"))


def child(variant: str, whole: bool, db: Path) -> dict[str, float]:
    # Loaded before the clock starts, as the CLI has them by then.
    import oneiros.projections._lineage
    import oneiros.projections._service
    import oneiros.scheduling._schedule_state  # noqa: F401

    started = time.perf_counter()
    found = (_whole if whole else _ours)(variant, db)
    return {"s": time.perf_counter() - started, "rss_mb": _rss_mb(), "found": found}


def _measure(variant: str, whole: bool, db: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", variant, "--db", str(db), *(["--whole"] if whole else [])],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def run(sizes: list[int], runs: int) -> dict[str, object]:
    figures: dict[str, object] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp_dir:
            log = Path(tmp_dir) / "events.db"
            print(f"{n} episodes: recording", file=sys.stderr)
            _child("record", log, n)
            _child("cycle", log)
            _child("record", log, BATCH, first=n)
            _child("cycle", log)
            _sweep(log, 10_000)  # stages the cycles' entries, which lineage reads
            row: dict[str, float] = {"should_dream_first_s": round(_measure("should_dream", False, log)["s"], 3)}
            for variant in _VARIANTS:
                ours: list[dict[str, float]] = []
                whole: list[dict[str, float]] = []
                for run_no in range(runs):
                    print(f"  {variant} {run_no + 1}/{runs}", file=sys.stderr)
                    whole.append(_measure(variant, True, log))
                    ours.append(_measure(variant, False, log))
                row[f"{variant}_s"] = round(statistics.median(o["s"] for o in ours), 3)
                row[f"{variant}_rss_mb"] = round(statistics.median(o["rss_mb"] for o in ours), 1)
                row[f"{variant}_whole_s"] = round(statistics.median(w["s"] for w in whole), 3)
                row[f"{variant}_whole_rss_mb"] = round(statistics.median(w["rss_mb"] for w in whole), 1)
                row[f"{variant}_vs_whole"] = median_ratio([w["s"] for w in whole], [o["s"] for o in ours])
            figures[str(n)] = row
            print(f"  {row}", file=sys.stderr)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    size_arguments(parser)
    parser.add_argument("--child", choices=_VARIANTS)
    parser.add_argument("--whole", action="store_true")
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.whole, args.db)))
        return
    emit({"sizes": run(args.sizes, args.runs), "runs": args.runs})


if __name__ == "__main__":
    main()
