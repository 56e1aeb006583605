"""How well outcomes written the way a person writes them find the staged entries they bear on, at
each ``staging.min_relevance``: what the setting's default is chosen from.

Run: ``python benchmarks/outcome_matching.py``. Two golems dream one offline cycle each (seed 0):
the coding agent's week of ``examples/episodes.jsonl`` and the trading week bundled as the sample.
Each then meets a later week of outcomes in a person's words (a summary and its regime, a tag now
and then), every outcome labelled by hand with what it is about (``topics``, tags and regime, never
shown to the matcher). An outcome bears on an entry, for the score, when most of the entry's
criterion (its tags and regime) is among the outcome's topics. For each threshold, over every pair
of an outcome and an active entry the sweep may move: precision, recall, F1, and the entries an
outcome moves on average. The last stdout line is one JSON object: those figures by threshold, the
thresholds with the best F1 and the middle one of them, and what the rule before relevance (every
criterion tag among the outcome's tags and words, and its regime) gave on the same pairs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from _common import emit

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.daemon._catch_up import update
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._staging import OutcomeRecorded
from oneiros.projections._db import open_projection_db
from oneiros.projections._service import Projections
from oneiros.projections._staging import StagedEntry
from oneiros.settings._staging import StagingSettings
from oneiros.validation._match import relevance
from oneiros.validation._staged import terms

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = [round(0.3 + 0.05 * i, 2) for i in range(14)]

# (summary, tags given, regime, topics: what the outcome is about, by a person's judgement)
CODING = [
    ("Shipped the release behind a canary again; error rate stayed flat", (), "routine", "deploy canary"),
    ("Pushed a config tweak straight to prod, no canary; it paged the on-call", (), "incident", "deploy config"),
    ("Friday deploy went bad and we had to roll it back", (), "incident", "deploy rollback"),
    ("Merged without review to make the deadline; the nightly job broke", (), "incident", "review deadline"),
    ("Ran only the tests for the module I touched; CI agreed", (), "routine", "tests focused"),
    ("Read the stack trace before retrying anything; the auth token had expired", ("debugging",), "routine",
     "debugging auth"),
    ("Upstream bumped a dependency and broke our build again", (), "incident", "dependencies build"),
    ("Asked the data owner before dropping an unused table; finance still reads it", (), "routine",
     "data ask-first"),
    ("Waited for a second reviewer even with the deadline close; caught a bad migration", (), "routine",
     "review deadline"),
    ("Rolled out the config change behind a canary this time; nothing broke", ("deploy",), "routine",
     "deploy config canary"),
    ("Hotfix deployed during the outage without review; had to revert it", (), "incident",
     "deploy review rollback"),
    ("Lost an hour on a flaky test before noticing the env var was missing", (), "incident",
     "debugging config tests"),
]  # fmt: skip
TRADING = [
    ("Caught another BTC breakout with a trailing stop; rode it up 4%", (), "trending", "btc breakout momentum"),
    ("Chased an ETH breakout entry and it held", (), "trending", "eth breakout entry"),
    ("Funding flipped negative and longs got liquidated in a cascade; leverage hurt", (), "volatile",
     "funding liquidation leverage"),
    ("The oracle lagged in the crash; liquidations hit before our update landed", (), "volatile",
     "oracle latency liquidation"),
    ("BTC exit filled late because the RPC node was slow", (), "volatile", "btc exit latency"),
    ("Bought ETH at the bottom of the range and it bounced as expected", ("eth",), "ranging",
     "eth mean-reversion entry"),
    ("Provided liquidity in a quiet pool and earned steady fees", (), "quiet", "lp fees"),
    ("Gas spiked mid-rebalance and the swap reverted again", (), "volatile", "gas rebalance execution"),
    ("Sized down on SOL after a bad week; smaller losses", (), "ranging", "sol sizing"),
    ("BTC momentum faded right after the entry; stopped out", ("btc",), "trending", "btc momentum entry stop-loss"),
]  # fmt: skip


def _entries(episodes: Path) -> list[StagedEntry]:
    """The active entries, outside the kinds only a review moves, after one offline cycle."""
    deps = Deps(clock=FixedClock(datetime(2026, 10, 6, tzinfo=UTC), timedelta(seconds=1)), ids=SequentialIds("b"))
    store = open_store("memory://")
    golems = Golems(store, deps=deps)
    golems.create("g")
    golems.record_episodes("g", load_episodes(episodes))
    InProcessExecutor(golems).run_cycle("g")
    projections = Projections(store, open_projection_db("memory://"))
    update(projections)
    review_only = StagingSettings().review_only_kinds
    return [e for e in projections.staging("g") if e.active and e.kind not in review_only]


def _bears(entry: StagedEntry, topics: set[str], regime: str) -> bool:
    """Most of the entry's criterion (its tags and regime) is among what the outcome is about."""
    wanted = [t.lower() for t in entry.criterion.all_of]
    if entry.criterion.regime:
        wanted.append(entry.criterion.regime)
    about = topics | {regime}
    return 2 * sum(w in about for w in wanted) > len(wanted)


def _before(entry: StagedEntry, outcome: OutcomeRecorded) -> bool:
    """The rule before relevance: every criterion tag among the outcome's tags and words, and its regime."""
    criterion = entry.criterion
    if not criterion.all_of or (criterion.regime is not None and outcome.regime != criterion.regime):
        return False
    seen = {t.lower() for t in outcome.tags} | terms(outcome.summary)
    return all(term in seen for term in criterion.all_of)


def _figures(pairs: list[tuple[bool, bool]], outcomes: int) -> dict[str, float]:
    hits = sum(truth and moved for truth, moved in pairs)
    moved = sum(m for _t, m in pairs)
    relevant = sum(t for t, _m in pairs)
    precision = hits / moved if moved else 1.0
    recall = hits / relevant if relevant else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(f1, 3),
        "moved_per_outcome": round(moved / outcomes, 2),
    }


def main() -> None:
    scored: list[tuple[bool, float, bool]] = []  # (bears, relevance, the old rule's answer)
    outcomes = 0
    for path, written in ((ROOT / "examples" / "episodes.jsonl", CODING), (sample_episodes_path(), TRADING)):
        entries = _entries(path)
        for summary, tags, regime, topics in written:
            outcome = OutcomeRecorded(
                golem_id="g", tick=1_000, verdict="confirms", summary=summary, tags=tags, regime=regime
            )
            outcomes += 1
            for entry, match in zip(entries, relevance(outcome, entries), strict=True):
                scored.append((_bears(entry, set(topics.split()), regime), match.relevance, _before(entry, outcome)))
    by_threshold = {
        str(t): _figures([(truth, score >= t) for truth, score, _old in scored], outcomes) for t in THRESHOLDS
    }
    top = max(by_threshold[str(t)]["f1"] for t in THRESHOLDS)
    plateau = [t for t in THRESHOLDS if by_threshold[str(t)]["f1"] == top]
    best = plateau[len(plateau) // 2]  # the middle of the best: robust to a little either way
    emit(
        {
            "pairs": len(scored),
            "outcomes": outcomes,
            "bearing_pairs": sum(truth for truth, _s, _o in scored),
            "by_threshold": by_threshold,
            "best_thresholds": plateau,
            "best_threshold": best,
            "best": by_threshold[str(best)],
            "before_relevance": _figures([(truth, old) for truth, _s, old in scored], outcomes),
        }
    )


if __name__ == "__main__":
    main()
