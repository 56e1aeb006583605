"""Recall-driven promotion (OpenClaw's deep phase): a staged entry that the golem keeps recalling,
under different queries, is promoted once its weighted score, its recall count and its distinct
queries all pass their gates (``staging.recall``; the ``openclaw`` preset turns it on).

The evidence is the log's ``MemoryRecalled`` events (the server's recall route and MCP tool record
one per query): every proposed or reinforced entry a recall returned among its related dreams
counts one recall, under that query, with that score, at that time. The staging process folds them
and decides on each recall, so a promotion is an ``EntryPromoted`` (``by="recall"``) written with
the process's tracking position, exactly once. A quarantined entry is never promoted this way.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from oneiros._text import content_word_set
from oneiros.events._recall import MemoryRecalled
from oneiros.events._staging import EntryPromoted
from oneiros.events._types import Event
from oneiros.projections._staging import StagedEntry
from oneiros.settings._trust import RecallPromotionSettings

__all__ = ["RecallScore", "RecallStats", "observe_recall", "recall_promotions", "recall_score"]

_DAY_S = 86_400.0


@dataclass
class RecallStats:
    """Every recall of one staged entry: the query, the score and the time of each."""

    queries: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    times: list[datetime] = field(default_factory=list)

    @property
    def recalls(self) -> int:
        return len(self.queries)

    @property
    def distinct_queries(self) -> int:
        return len(set(self.queries))

    def add(self, query: str, score: float, time: datetime) -> None:
        # "ETH  Range" and "eth range" are one query asked twice, not two.
        self.queries.append(" ".join(query.lower().split()))
        self.scores.append(min(1.0, score))
        self.times.append(time)


class RecallScore(msgspec.Struct, frozen=True, kw_only=True):
    """An entry's weighted score and the six signals it is made of, each in [0, 1]."""

    score: float
    relevance: float
    frequency: float
    query_diversity: float
    recency: float
    consolidation: float
    conceptual_richness: float
    recalls: int
    distinct_queries: int

    def passes(self, settings: RecallPromotionSettings) -> bool:
        return (
            self.score >= settings.min_score
            and self.recalls >= settings.min_recalls
            and self.distinct_queries >= settings.min_distinct_queries
        )


def _share(value: int, full: int) -> float:
    return 1.0 if full <= 0 else min(1.0, value / full)


def recall_score(stats: RecallStats, text: str, now: datetime, settings: RecallPromotionSettings) -> RecallScore:
    """The entry's deep-phase score as of ``now`` (the deciding recall's time)."""
    w = settings.weights
    n = stats.recalls
    half_life_s = settings.half_life_days * _DAY_S
    ages = [max(0.0, (now - t).total_seconds()) for t in stats.times]
    signals = {
        "relevance": sum(stats.scores) / n if n else 0.0,
        "frequency": _share(n, settings.min_recalls),
        "query_diversity": _share(stats.distinct_queries, settings.min_distinct_queries),
        "recency": sum(math.pow(0.5, age / half_life_s) for age in ages) / n if n else 0.0,
        "consolidation": _share(len({t.date() for t in stats.times}), settings.consolidation_days),
        "conceptual_richness": _share(len(content_word_set(text)), settings.richness_words),
    }
    score = sum(getattr(w, name) * value for name, value in signals.items())
    return RecallScore(
        score=round(score, 4),
        **{name: round(value, 4) for name, value in signals.items()},
        recalls=n,
        distinct_queries=stats.distinct_queries,
    )


def observe_recall(stats: dict[str, RecallStats], event: MemoryRecalled, time: datetime) -> None:
    """Count the recall for every staged entry it returned as a related dream."""
    for hit in event.related_dreams:
        if hit.kind == "dream":
            stats.setdefault(hit.ref, RecallStats()).add(event.query, hit.score, time)


def recall_promotions(  # noqa: PLR0913 - the sweep's state and the recall; the rest keyword-only
    entries: dict[str, StagedEntry],
    stats: dict[str, RecallStats],
    event: MemoryRecalled,
    *,
    time: datetime,
    settings: RecallPromotionSettings,
    review_only: Collection[str] = (),
) -> list[Event]:
    """The promotions this recall earns: each active, unquarantined entry it returned whose score,
    recalls and distinct queries now all pass."""
    out: list[Event] = []
    for ref in dict.fromkeys(h.ref for h in event.related_dreams if h.kind == "dream"):
        entry = entries.get(ref)
        if entry is None or not entry.active or entry.quarantine is not None or entry.kind in review_only:
            continue
        if ref not in stats:
            continue
        score = recall_score(stats[ref], entry.text, time, settings)
        if score.passes(settings):
            out.append(
                EntryPromoted(
                    golem_id=entry.golem_id,
                    entry_id=entry.entry_id,
                    cycle_id=entry.cycle_id,
                    confidence_pct=entry.confidence_pct,
                    by="recall",
                    reason=(
                        f"recall score {score.score:.2f} from {score.recalls} recalls "
                        f"under {score.distinct_queries} distinct queries"
                    ),
                )
            )
    return out
