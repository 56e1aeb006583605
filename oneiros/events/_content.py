"""The dream cycle's content: what each phase did to the episodes and what it produced.

Every effect of a dream is one of these events (DESIGN.md, contract 1): replay strength and
depotentiation written back to episodes, triage decisions, hypnagogic predictions, threats, staged
outputs with their validation criterion, budget reservations and exhaustion, failed generation
steps, the journal entry and the DreamReport the agent reads on waking.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from oneiros.events._types import DreamOutput, DreamPhaseName, event_type
from oneiros.settings._vocabulary import StagedKind

__all__ = [
    "STAGED_KINDS",
    "BudgetExhausted",
    "BudgetOverrun",
    "BudgetReserved",
    "CreativeMode",
    "CreditAssigned",
    "DreamFragments",
    "DreamJournal",
    "DreamJournalEntry",
    "DreamQualityAssessed",
    "DreamReport",
    "DreamStaged",
    "DreamSuppressed",
    "EpisodeDepotentiated",
    "EpisodeTriaged",
    "GenerationFailed",
    "HypnagogicPrediction",
    "IntegrationSummary",
    "NremSummary",
    "RemSummary",
    "ReplayStrengthened",
    "StagedKind",
    "StepFailed",
    "StrategyHypothesis",
    "ThreatSimulated",
    "TriageCounts",
    "TriageDecision",
    "WakeUpSummary",
    "WakingResidue",
]

Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Count = Annotated[int, msgspec.Meta(ge=0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]

TriageDecision = Literal["preserve", "abstract", "forget"]
CreativeMode = Literal["combinational", "exploratory", "transformational"]
# Bardo "Dream output classification", plus the onset's creative predictions.
STAGED_KINDS: tuple[StagedKind, ...] = (
    "confirmed_pattern",
    "novel_insight",
    "strategy_hypothesis",
    "threat",
    "playbook_revision",
    "contradiction",
    "creative_prediction",
)


# -- hypnagogic onset ----------------------------------------------------------------------------


@event_type("WakingResidue")
class WakingResidue(DreamOutput, frozen=True, kw_only=True):
    """What the golem fell asleep holding: its latest episodes and the incubation theme."""

    episode_ticks: tuple[int, ...]
    theme: str = ""


@event_type("HypnagogicPrediction")
class HypnagogicPrediction(DreamOutput, frozen=True, kw_only=True):
    """A partial completion that the low-temperature judge found novel enough to keep."""

    fragment: NonEmpty
    novelty: Unit
    confidence: Unit


# -- NREM ----------------------------------------------------------------------------------------


@event_type("ReplayStrengthened")
class ReplayStrengthened(DreamOutput, frozen=True, kw_only=True):
    """A replayed episode's memory strength grew by ``delta`` (to ``strength``)."""

    episode_tick: int
    delta: float
    strength: float


@event_type("CreditAssigned")
class CreditAssigned(DreamOutput, frozen=True, kw_only=True):
    """Reverse replay traced an outcome back to the decision that earned it."""

    episode_tick: int
    credit: float
    chain: tuple[str, ...]


@event_type("EpisodeTriaged")
class EpisodeTriaged(DreamOutput, frozen=True, kw_only=True):
    """Memory triage of one replayed episode (Stickgold and Walker, via Bardo)."""

    episode_tick: int
    decision: TriageDecision
    utility: float
    reason: str = ""


# -- REM -----------------------------------------------------------------------------------------


@event_type("StrategyHypothesis")
class StrategyHypothesis(DreamOutput, frozen=True, kw_only=True):
    """A strategy from creative recombination in one of Boden's three modes."""

    mode: CreativeMode
    hypothesis: NonEmpty
    test: str = ""
    seed_episode_ticks: tuple[int, ...] = ()
    confidence: Unit = 0.2


@event_type("ThreatSimulated")
class ThreatSimulated(DreamOutput, frozen=True, kw_only=True):
    """A rehearsed failure mode and the response to it."""

    kind: NonEmpty
    scenario: NonEmpty
    response: str
    severity: Unit
    seed_episode_ticks: tuple[int, ...] = ()


@event_type("EpisodeDepotentiated")
class EpisodeDepotentiated(DreamOutput, frozen=True, kw_only=True):
    """REM separated what happened from how it felt; the episode's arousal fell."""

    episode_tick: int
    arousal_before: Unit
    arousal_after: Unit
    lesson: str = ""


@event_type("DreamFragments")
class DreamFragments(DreamOutput, frozen=True, kw_only=True):
    """Stochastic activation over distant memory pairs: FRAGMENTS and the THREAD between them."""

    pairs: tuple[tuple[int, int], ...]
    fragments: tuple[str, ...]
    thread: str
    fallback: bool = False
    """True when the pairs were drawn by the random temporal fallback (no embeddings)."""


# -- integration ---------------------------------------------------------------------------------


@event_type("DreamStaged", version=2)
class DreamStaged(DreamOutput, frozen=True, kw_only=True):
    """One classified dream output entering the staging buffer. Never active knowledge by itself.

    v2 names the generator call its content came from (``call_key``), as the engine that made the
    source output recorded it (``OutputsSourced``): lineage's exact link to ``GenerationRecorded``."""

    entry_id: NonEmpty
    kind: StagedKind
    content: NonEmpty
    confidence: Unit
    validation_criterion: NonEmpty
    source: str = ""
    """The event type the output came from."""
    source_episode_ticks: tuple[int, ...] = ()
    related_entry: str | None = None
    """The earlier entry a confirmed pattern confirms or a contradiction contradicts."""
    status: Literal["staged", "flagged"] = "staged"
    """Contradictions are flagged for review and never resolved automatically."""
    call_key: str = ""
    """The generator call the source output was made from; "" for an output no call made (and in
    v1 records)."""


class TriageCounts(msgspec.Struct, frozen=True, kw_only=True):
    preserve: Count = 0
    abstract: Count = 0
    forget: Count = 0


class NremSummary(msgspec.Struct, frozen=True, kw_only=True):
    episodes_replayed: Count = 0
    patterns_found: tuple[str, ...] = ()
    triage_decisions: TriageCounts = TriageCounts()
    credit_assignments: Count = 0


class RemSummary(msgspec.Struct, frozen=True, kw_only=True):
    counterfactuals_generated: Count = 0
    creative_hypotheses: tuple[str, ...] = ()
    threats_simulated: tuple[str, ...] = ()
    emotional_episodes_processed: Count = 0


class IntegrationSummary(msgspec.Struct, frozen=True, kw_only=True):
    grimoire_updates: tuple[str, ...] = ()
    """Entries of confirmed patterns and novel insights."""
    playbook_revisions_staged: tuple[str, ...] = ()
    contradictions_flagged: tuple[str, ...] = ()


class DreamJournal(msgspec.Struct, frozen=True, kw_only=True):
    """Bardo's DreamJournalEntry fields."""

    phase1_summary: NremSummary
    phase2_summary: RemSummary
    phase3_summary: IntegrationSummary
    total_cost_usd: NonNegative = 0.0
    tokens_spent: Count = 0
    dream_duration_ticks: Count = 0
    """Log versions the cycle spanned up to the journal entry (the log is the dream's clock)."""
    dream_quality_score: Unit = 0.0


@event_type("DreamJournalEntry")
class DreamJournalEntry(DreamOutput, frozen=True, kw_only=True):
    journal: DreamJournal


@event_type("DreamQualityAssessed")
class DreamQualityAssessed(DreamOutput, frozen=True, kw_only=True):
    """The golem's self-assessment: did replay reveal anything, were hypotheses new, threats plausible."""

    score: Unit
    replay_novelty: Unit
    creative_novelty: Unit
    threat_plausibility: Unit
    notes: str = ""


# -- hypnopompic return --------------------------------------------------------------------------


@event_type("DreamReport")
class DreamReport(DreamOutput, frozen=True, kw_only=True):
    """Bardo's typed DreamReport: the only thing that crosses back into waking."""

    journal: DreamJournal
    staging_writes: tuple[str, ...] = ()
    grimoire_updates: tuple[str, ...] = ()
    insights: tuple[str, ...] = ()
    hypotheses: tuple[str, ...] = ()
    threats: tuple[str, ...] = ()
    deletions: tuple[int, ...] = ()
    """Ticks of episodes triaged to forget."""
    playbook_delta: tuple[str, ...] = ()
    total_cost_usd: NonNegative = 0.0
    duration_ticks: Count = 0


@event_type("WakeUpSummary")
class WakeUpSummary(DreamOutput, frozen=True, kw_only=True):
    """Plain text the agent reads on its next turn."""

    text: NonEmpty
    highlights: tuple[str, ...] = ()


# -- budgets and failures ------------------------------------------------------------------------


@event_type("BudgetReserved")
class BudgetReserved(DreamOutput, frozen=True, kw_only=True):
    """A call's worst case, held before the call is made. A reservation with no settlement (a
    GenerationRecorded or GenerationFailed of the same ``call_key``) counts as spent in full."""

    phase: DreamPhaseName
    call_key: NonEmpty
    model: str
    tokens: Count
    cost_usd: NonNegative


@event_type("BudgetExhausted")
class BudgetExhausted(DreamOutput, frozen=True, kw_only=True):
    """A call's worst case did not fit under ``cap``; the phase ended here."""

    phase: DreamPhaseName
    cap: NonEmpty
    call_key: str
    needed_tokens: Count
    needed_usd: NonNegative
    remaining_tokens: int
    remaining_usd: float


@event_type("BudgetOverrun")
class BudgetOverrun(DreamOutput, frozen=True, kw_only=True):
    """A response claimed more than its call reserved (usage over the reservation, or a completion
    longer than ``max_tokens`` can make). What was kept was cut to the reservation; the phase's
    generation ended here. The figures are the server's claims, kept for the audit."""

    phase: DreamPhaseName
    call_key: NonEmpty
    model: str
    reason: NonEmpty
    reserved_tokens: Count
    reserved_usd: NonNegative
    reported_tokens_in: Count
    reported_tokens_out: Count
    reported_usd: NonNegative
    response_bytes: Count
    kept_bytes: Count


@event_type("DreamSuppressed")
class DreamSuppressed(DreamOutput, frozen=True, kw_only=True):
    """The LLM credit partition was under its floor, so the cycle ran without generating anything."""

    credit_fraction: Unit
    floor: Unit


@event_type("GenerationFailed")
class GenerationFailed(DreamOutput, frozen=True, kw_only=True):
    """The generator could not answer (timeout, server error, bad response) after its retries."""

    phase: DreamPhaseName
    call_key: NonEmpty
    model: str
    reason: str
    tokens_in: Count = 0
    tokens_out: Count = 0
    cost_usd: NonNegative = 0.0
    request_hash: str = ""
    """The hash of the request that failed ("" in records from before hashes)."""


@event_type("StepFailed")
class StepFailed(DreamOutput, frozen=True, kw_only=True):
    """A step whose model output stayed malformed through its retries; nothing of it was staged."""

    phase: DreamPhaseName
    task: NonEmpty
    call_keys: tuple[str, ...]
    reason: str
