"""The sleep-delta benchmark of issue 29 on LoCoMo (``oneiros eval locomo``, docs/evaluation.md).

Each conversation is lived by a golem in three arms (``none``: no dream; ``dream``: the configured
generator, offline by default, one cycle a night as the bumblebee schedule allows; ``reference``:
LoCoMo's own observations recorded as each night's dream outputs), then every question of
categories 1-4 is asked through the recall the REST route and MCP tool serve. Figures: evidence
recall@5 and @10 per category and overall, what each arm's dreams made and cost, how long each arm
took, and evidence recall at 250, 500 and 1,000 tokens of context (characters / 4: the ranking's
prefix that fits, so an item standing for several turns pays for its length); then the arms are
scored again from their kept logs (no generator) and ``identical_on_rerun``
says whether every figure came out the same. ``vs_issue_bm25`` is the ``none`` arm's recall@10 over
the plain BM25 row issue 29 reports, per category (each at least 1 is the goal); ``goals`` says, at
each k, whether the dream arm is at least the reference in multi-hop, temporal and single-hop and at
least ``none`` in every category (issue 29's goals). ``dream_at_least_none_at_budgets`` says, at
each budget, whether the dream arm is at least ``none`` in every category (issue 36's goal).

The data set is read where it lies (CC BY-NC 4.0: never copied into the repository).

Usage: ``python benchmarks/locomo.py [FILE]`` (default ``../shared/data/locomo/locomo-dev.json``
beside the repository). The last line is one JSON object.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from oneiros.config._load import load_config
from oneiros.lab._eval import ARMS, ArmReport, EvalSettings, evaluate
from oneiros.lab._locomo import locomo_conversations

ISSUE_BM25_AT_10 = {"multi-hop": 0.261, "temporal": 0.736, "open-domain": 0.273, "single-hop": 0.648}
BUDGETS = (250, 500, 1000)
DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def _goals(reports: dict[str, ArmReport], k: int) -> bool:
    dream, none, reference = (reports[a].recall[k] for a in ("dream", "none", "reference"))
    above_reference = all(dream[c] >= reference[c] for c in ("multi-hop", "temporal", "single-hop"))
    return above_reference and all(dream[c] >= none[c] for c in none)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    conversations = locomo_conversations(path)
    config = load_config(preset="bumblebee", environ={})
    settings = EvalSettings(budgets=BUDGETS)
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        first = evaluate(conversations, Path(scratch), config, settings, ARMS)
        total = time.perf_counter() - started
        again = evaluate(conversations, Path(scratch), config, settings, ARMS, rescore=True)
    arms = {
        name: {
            "recall@5": r.recall[5],
            "recall@10": r.recall[10],
            "tokens": r.tokens,
            "usd": r.usd,
            "outputs": r.outputs,
            "cycles": r.cycles,
            "seconds": r.seconds,
            "source_turns@5": r.source_turns[5],
            "source_turns@10": r.source_turns[10],
            **{f"recall@{b}tokens": r.budget_recall[b] for b in BUDGETS},
            **{f"items@{b}tokens": r.budget_items[b] for b in BUDGETS},
            "quality_flawed": r.quality.flawed,
        }
        for name, r in first.items()
    }
    identical = all(
        (r.recall, r.budget_recall, r.tokens, r.usd, r.outputs, r.cycles)
        == (again[n].recall, again[n].budget_recall, again[n].tokens, again[n].usd, again[n].outputs, again[n].cycles)
        for n, r in first.items()
    )
    none = first["none"].recall[10]
    figures = {
        "file": path.name,
        "questions": sum(len(c.questions) for c in conversations),
        "arms": arms,
        "seconds_total": round(total, 2),
        "identical_on_rerun": identical,
        "rerun_generator_calls": sum(r.generator_calls for r in again.values()),
        "vs_issue_bm25": {c: round(none[c] / v, 3) for c, v in ISSUE_BM25_AT_10.items()},
        "goals": {f"@{k}": _goals(first, k) for k in settings.ks},
        "dream_at_least_none_at_budgets": {
            b: all(first["dream"].budget_recall[b][c] >= first["none"].budget_recall[b][c] for c in none)
            for b in BUDGETS
        },
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
