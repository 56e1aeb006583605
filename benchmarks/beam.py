"""What a reader pays for on BEAM (issue 36; ``oneiros eval beam``, docs/evaluation.md).

Each BEAM chat is lived by a golem in two arms (``none``: no dream; ``dream``: the configured
generator, offline by default, as the bumblebee schedule allows between exchanges), then every
probing question that names its evidence (abstention left out) is asked through recall. Figures per
arm: evidence recall@5 and @10 per ability and overall, evidence recall at 250, 500, 1,000 and
2,000 tokens (characters / 4), the share of knowledge updates whose current fact ranks above the
outdated one, the dream outputs' text quality, tokens, outputs, cycles and seconds. Then both arms
are scored again from their kept logs (no generator) and ``identical_on_rerun`` says whether every
figure came out the same. The baseline is the ``none`` arm of the same run: ``dream_over_none``
is the dream arm's overall recall over it, at @10 and at 2,000 tokens. The recall figures are
deterministic (a rerun gives them exactly), so one run is their value; the seconds are one run's.

BEAM publishes no licence: its chats are read where they lie, never copied into the repository.

Usage: ``python benchmarks/beam.py [DIR] [--chats 1,2]`` (default ``/work/beam/100K``, BEAM's
``chats/100K`` folder; without it, one line says the benchmark was skipped). The last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from oneiros.config._load import load_config
from oneiros.lab._beam import beam_conversations
from oneiros.lab._eval import Arm, ArmReport, EvalSettings, evaluate

DEFAULT = Path("/work/beam/100K")
BUDGETS = (250, 500, 1000, 2000)


def _figures(r: ArmReport) -> dict[str, object]:
    return {
        "recall@5": r.recall[5],
        "recall@10": r.recall[10],
        **{f"recall@{b}tokens": r.budget_recall[b] for b in BUDGETS},
        **{f"items@{b}tokens": r.budget_items[b] for b in BUDGETS},
        "current_first": r.current_first,
        "updates": r.updates,
        "quality": {
            "outputs": r.quality.outputs,
            "cut": r.quality.cut,
            "markup": r.quality.markup,
            "ungrammatical": r.quality.ungrammatical,
            "flawed": r.quality.flawed,
        },
        "tokens": r.tokens,
        "usd": r.usd,
        "outputs": r.outputs,
        "cycles": r.cycles,
        "seconds": r.seconds,
        "source_turns@10": r.source_turns[10],
    }


def _scored(r: ArmReport) -> tuple[object, ...]:
    return (r.recall, r.budget_recall, r.current_first, r.quality, r.tokens, r.outputs, r.cycles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--chats", default="", help="comma-separated chat folders (default all)")
    args = parser.parse_args()
    if not args.directory.is_dir():
        print(json.dumps({"skipped": f"no BEAM folder at {args.directory}: give chats/100K's path"}))
        return
    chats = [c.strip() for c in args.chats.split(",") if c.strip()] or None
    conversations = beam_conversations(args.directory, chats)
    config = load_config(preset="bumblebee", environ={})
    settings = EvalSettings(budgets=BUDGETS)
    arms: tuple[Arm, ...] = ("none", "dream")
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        first = evaluate(conversations, Path(scratch), config, settings, arms)
        total = time.perf_counter() - started
        again = evaluate(conversations, Path(scratch), config, settings, arms, rescore=True)
    none, dream = first["none"], first["dream"]
    figures = {
        "directory": str(args.directory),
        "chats": len(conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "left_out": sum(c.skipped for c in conversations),
        "arms": {name: _figures(r) for name, r in first.items()},
        "seconds_total": round(total, 2),
        "identical_on_rerun": all(_scored(r) == _scored(again[n]) for n, r in first.items()),
        "rerun_generator_calls": sum(r.generator_calls for r in again.values()),
        "dream_over_none": {
            "recall@10": round(dream.recall[10]["overall"] / none.recall[10]["overall"], 3),
            "recall@2000tokens": round(dream.budget_recall[2000]["overall"] / none.budget_recall[2000]["overall"], 3),
        },
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
