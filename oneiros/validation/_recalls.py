"""Recording what a recall found, so how often and under how many distinct queries an entry is
recalled is known from the log (OpenClaw's deep-phase promotion reads these counts)."""

from __future__ import annotations

from collections.abc import Sequence

from oneiros._deps import Deps
from oneiros.events._recall import RECALL_STREAM, MemoryRecalled, RecallHit
from oneiros.projections._recall import RecallItem, RecallResult
from oneiros.store._store import EventStore, Recorded
from oneiros.validation._review import append_side

__all__ = ["record_recall"]


def record_recall(store: EventStore, golem_id: str, result: RecallResult, deps: Deps | None = None) -> Recorded:
    """Append the recall to the golem's ``recall`` side stream: the query and what it returned."""

    def hits(items: Sequence[RecallItem]) -> tuple[RecallHit, ...]:
        return tuple(RecallHit(kind=i.kind, ref=i.ref, score=i.score) for i in items)

    event = MemoryRecalled(
        golem_id=golem_id,
        query=result.query,
        hits=hits(result.results),
        related_dreams=hits(result.related_dreams),
    )
    return append_side(store, deps or Deps(), golem_id, RECALL_STREAM, [event])[0]
