"""Declares the content events as dream outputs and how DreamComplete counts them."""

from __future__ import annotations

from oneiros.events import (
    BudgetExhausted,
    BudgetReserved,
    CreditAssigned,
    DreamFragments,
    DreamJournalEntry,
    DreamQualityAssessed,
    DreamReport,
    DreamStaged,
    DreamSuppressed,
    EpisodeDepotentiated,
    EpisodeTriaged,
    Event,
    GenerationFailed,
    HypnagogicPrediction,
    ReplayStrengthened,
    StepFailed,
    StrategyHypothesis,
    ThreatSimulated,
    WakeUpSummary,
    WakingResidue,
)
from oneiros.fsm import CycleCounts, register_cycle_output

__all__: list[str] = []


def _depotentiated(counts: CycleCounts, _event: Event) -> None:
    counts.episodes_depotentiated += 1


def _heuristic(counts: CycleCounts, _event: Event) -> None:
    counts.heuristics_proposed += 1


def _staged(counts: CycleCounts, event: Event) -> None:
    if isinstance(event, DreamStaged) and event.kind == "playbook_revision":
        counts.playbook_edits += 1


register_cycle_output(EpisodeDepotentiated, _depotentiated)
register_cycle_output(StrategyHypothesis, _heuristic)
register_cycle_output(DreamStaged, _staged)
for _cls in (
    BudgetExhausted,
    BudgetReserved,
    CreditAssigned,
    DreamFragments,
    DreamJournalEntry,
    DreamQualityAssessed,
    DreamReport,
    DreamSuppressed,
    EpisodeTriaged,
    GenerationFailed,
    HypnagogicPrediction,
    ReplayStrengthened,
    StepFailed,
    ThreatSimulated,
    WakeUpSummary,
    WakingResidue,
):
    register_cycle_output(_cls)
