"""OneirosStore (LangGraph's BaseStore over oneiros) against the oneiros calls it stands on.

Each figure is the median time of one call, over ``--ops`` calls a round and ``--runs`` rounds,
on a SQLite store of its own already holding ``--items`` items, interleaved round by round with
its baseline measured in the same run:

- ``put``: a new item (an ``ItemKept`` and its episode in one append), against
  ``Oneiros.record_episodes`` of one episode, the floor of any write that feeds recall;
- ``get``: one item, against LangGraph's own ``InMemoryStore.get`` (what a graph gets without oneiros);
- ``search_query``: ``search(query=...)``, against ``Oneiros.recall`` of the same query (``record=False``).

Run: ``python benchmarks/langgraph_store.py [--items 200] [--ops 20] [--runs 3]``. The last stdout
line is one JSON object: seconds per call, and each figure's ratio to its baseline (ours over theirs).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from _common import MARKET_WORDS, emit
from langgraph.store.memory import InMemoryStore

from oneiros import Episode, Oneiros
from oneiros.integrations.langgraph import OneirosStore, StoreSettings

NS = ("bench", "memories")


def _text(i: int) -> str:
    words = [MARKET_WORDS[(i * k) % len(MARKET_WORDS)] for k in (1, 3, 7, 11)]
    return f"note {i}: {' '.join(words)}"


def _per_call(fn: Callable[[int], object], ops: int, counter: Iterator[int]) -> float:
    times = []
    for _ in range(ops):
        n = next(counter)
        started = time.perf_counter()
        fn(n)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--ops", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ours = OneirosStore(f"sqlite:///{Path(folder) / 'store.db'}", StoreSettings(record_recalls=False))
        floor = Oneiros(f"sqlite:///{Path(folder) / 'floor.db'}")
        memory = InMemoryStore()
        floor.create_golem("bench")
        for i in range(args.items):
            ours.put(NS, f"k{i}", {"text": _text(i)})
            floor.record_episodes("bench", [Episode(tick=i, summary=_text(i))])
            memory.put(NS, f"k{i}", {"text": _text(i)})
        fresh = itertools.count(args.items)
        known = itertools.cycle(range(args.items))
        rows: dict[str, list[float]] = {}
        cases: dict[str, tuple[Callable[[int], object], Iterator[int]]] = {
            "put": (lambda n: ours.put(NS, f"k{n}", {"text": _text(n)}), fresh),
            "put_floor": (lambda n: floor.record_episodes("bench", [Episode(tick=n, summary=_text(n))]), fresh),
            "get": (lambda n: ours.get(NS, f"k{n}"), known),
            "get_inmemory": (lambda n: memory.get(NS, f"k{n}"), known),
            "search_query": (lambda n: ours.search(NS, query=MARKET_WORDS[n % len(MARKET_WORDS)], limit=10), known),
            "recall": (lambda n: floor.recall("bench", MARKET_WORDS[n % len(MARKET_WORDS)], 10, record=False), known),
        }
        for _ in range(args.runs):
            for name, (fn, counter) in cases.items():
                rows.setdefault(name, []).append(_per_call(fn, args.ops, counter))
        ours.close()
        floor.close()
    medians = {name: statistics.median(times) for name, times in rows.items()}
    figures: dict[str, float | int] = {f"{name}_s": round(value, 6) for name, value in medians.items()}
    figures["put_vs_record_episodes"] = round(medians["put"] / medians["put_floor"], 2)
    figures["get_vs_inmemory"] = round(medians["get"] / medians["get_inmemory"], 1)
    figures["search_query_vs_recall"] = round(medians["search_query"] / medians["recall"], 2)
    figures |= {"items": args.items, "ops": args.ops, "runs": args.runs}
    emit(figures)


if __name__ == "__main__":
    main()
