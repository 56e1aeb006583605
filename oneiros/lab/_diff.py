"""What a cycle produced, side by side with another: the dream lab's ``diff``.

Two cycles of one log, or a cycle and its fork in a branch store, are summarised the same way
(hypotheses, counterfactuals, staged entries, quality, tokens, cost, calls) and compared item by
item, so a person sees what another model, prompt or setting changed.
"""

from __future__ import annotations

import msgspec

from oneiros._errors import InputError, masked_url
from oneiros.events._content import (
    BudgetOverrun,
    DreamQualityAssessed,
    DreamStaged,
    GenerationFailed,
    StrategyHypothesis,
)
from oneiros.events._types import CycleEvent, DreamCounterfactual, DreamHypothesis, DreamStart, GenerationRecorded
from oneiros.runtime._budget import Ledger
from oneiros.store._snapshots import read_cycle
from oneiros.store._store import EventStore, Recorded

__all__ = ["CycleDiff", "CycleSummary", "cycle_start", "diff_cycles", "summarize_cycle"]


class CycleSummary(msgspec.Struct, frozen=True, kw_only=True):
    store: str
    golem_id: str
    cycle_id: str
    hypotheses: tuple[str, ...] = ()
    counterfactuals: tuple[str, ...] = ()
    staged: tuple[str, ...] = ()
    """``kind (confidence): content`` of each staged entry."""
    quality: float | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    failed_calls: int = 0
    overruns: int = 0
    models: tuple[str, ...] = ()


class CycleDiff(msgspec.Struct, frozen=True, kw_only=True):
    a: CycleSummary
    b: CycleSummary
    only_a: dict[str, tuple[str, ...]]
    """Per section (hypotheses, counterfactuals, staged), what only ``a`` has."""
    only_b: dict[str, tuple[str, ...]]
    changed: dict[str, tuple[object, object]]
    """Figures that differ: quality, tokens, cost_usd, calls, failed_calls, overruns, models."""

    @property
    def same(self) -> bool:
        return not (any(self.only_a.values()) or any(self.only_b.values()) or self.changed)


_SECTIONS = ("hypotheses", "counterfactuals", "staged")
_FIGURES = ("quality", "tokens", "cost_usd", "calls", "failed_calls", "overruns", "models")


def cycle_start(store: EventStore, cycle_id: str) -> Recorded:
    """The DreamStart of ``cycle_id`` (whose golem and position locate the cycle)."""
    starts = store.read_all(types=[DreamStart])
    start = next((r for r in starts if isinstance(r.event, DreamStart) and r.event.cycle_id == cycle_id), None)
    if start is None:
        raise InputError(f"no cycle {cycle_id!r} in the log at {masked_url(store.url)}")
    return start


def summarize_cycle(store: EventStore, cycle_id: str) -> CycleSummary:
    """``cycle_id``'s outputs and spend, read from ``store``."""
    start = cycle_start(store, cycle_id)
    # The cycle's own events, and the ledger's types for its spend: not the golem's whole stream.
    history = read_cycle(store, start.golem_id, cycle_id)
    hypotheses: list[str] = []
    counterfactuals: list[str] = []
    staged: list[str] = []
    quality: float | None = None
    calls = failed = overruns = 0
    models: set[str] = set()
    for record in history:
        event = record.event
        if not isinstance(event, CycleEvent) or event.cycle_id != cycle_id:
            continue
        match event:
            case DreamHypothesis(hypothesis=hypothesis) | StrategyHypothesis(hypothesis=hypothesis):
                hypotheses.append(hypothesis)
            case DreamCounterfactual(hypothesis=hypothesis, outcome=outcome):
                counterfactuals.append(f"{hypothesis} -> {outcome}")
            case DreamStaged(kind=kind, confidence=confidence, content=content):
                staged.append(f"{kind} ({confidence:.2f}): {content}")
            case DreamQualityAssessed(score=score):
                quality = score
            case GenerationRecorded(requested_model=requested, model=model):
                calls += 1
                models.add(requested or model)
            case GenerationFailed():
                calls += 1
                failed += 1
            case BudgetOverrun():
                overruns += 1
    spent = Ledger.from_records(store.read_stream(start.golem_id, types=(DreamStart, *Ledger.reads))).spent(
        cycle_id=cycle_id
    )
    return CycleSummary(
        store=store.url,
        golem_id=start.golem_id,
        cycle_id=cycle_id,
        hypotheses=tuple(hypotheses),
        counterfactuals=tuple(counterfactuals),
        staged=tuple(staged),
        quality=quality,
        tokens=spent.tokens,
        cost_usd=round(spent.usd, 8),
        calls=calls,
        failed_calls=failed,
        overruns=overruns,
        models=tuple(sorted(models)),
    )


def diff_cycles(a: CycleSummary, b: CycleSummary) -> CycleDiff:
    """What each side has that the other lacks, section by section, and the figures that differ."""
    only_a: dict[str, tuple[str, ...]] = {}
    only_b: dict[str, tuple[str, ...]] = {}
    for section in _SECTIONS:
        left, right = getattr(a, section), getattr(b, section)
        only_a[section] = tuple(x for x in left if x not in right)
        only_b[section] = tuple(x for x in right if x not in left)
    changed = {name: (getattr(a, name), getattr(b, name)) for name in _FIGURES if getattr(a, name) != getattr(b, name)}
    return CycleDiff(a=a, b=b, only_a=only_a, only_b=only_b, changed=changed)
