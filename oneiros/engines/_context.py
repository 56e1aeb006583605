"""What a phase engine is given: the episodes, the cycle's outputs so far, and a budgeted generator;
and the settings of every engine, each number from the source document its docstring names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from oneiros.events import DreamPhaseName, Episode, Event
from oneiros.generators import Generation, GenerationRequest, PromptSet, Tier
from oneiros.memory import EpisodeMemory, make_embedder

__all__ = [
    "EngineSettings",
    "IntegrationSettings",
    "NremSettings",
    "OnsetSettings",
    "PairSettings",
    "PhaseContext",
    "PhaseEngine",
    "RemSettings",
]


class OnsetSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Hypnagogic onset (Bardo 001_*, "Hypnagogic Engine")."""

    residue_episodes: int = 3
    """Latest episodes that make up the waking residue (oneiros default; the documents give none)."""
    partials: int = 4
    """Partial completions per onset (Bardo 001_*, DaliInterrupt: "4 partial completions")."""
    partial_max_tokens: int = 80
    """Each partial is cut at this many tokens (Bardo 001_*: "each capped at 80 tokens")."""
    partial_temperature: float = 1.2
    """Raised temperature of the partials (Bardo 001_*: ExecutiveLoosener T=1.0-1.5; H3-H4 at 1.0-1.2)."""
    judge_temperature: float = 0.4
    """The HomuncularObserver's cheap novelty pass (Bardo 001_*: "a cheap T0 call at T=0.4")."""
    judge_max_tokens: int = 64
    novelty_threshold: float = 0.5
    """Partials judged at least this novel survive (oneiros default)."""
    min_confidence: float = 0.10
    """Confidence of a surviving fragment at novelty 0 (Bardo 001_*: "at confidence 0.10-0.20")."""
    max_confidence: float = 0.20
    """Confidence of a surviving fragment at novelty 1 (Bardo 001_*)."""


class NremSettings(msgspec.Struct, frozen=True, kw_only=True):
    """NREM replay (Bardo 001_*, "Phase 1")."""

    diversity_share: float = 0.2
    """Share of replay slots kept for diversity (Bardo 001_*: "20% of replay slots")."""
    regime_window_days: float = 30.0
    """Diversity takes one episode of each regime seen in this many days (Bardo 001_*: "last 30 days")."""
    high_arousal: float = 0.7
    """An episode at or above this arousal can fill the high-arousal diversity slot (oneiros default)."""
    perturbation_rate: float = 0.3
    """Share of batches replayed with a perturbation (Bardo 001_*, ``perturbationRate``)."""
    perturbations: tuple[str, ...] = ("simulated slippage", "a latency spike", "a gas price change", "data dropout")
    """Bardo 001_*'s perturbations: slippage, latency spikes, gas price changes, data dropout."""
    strength_delta: float = 0.5
    """Replay strength added per replayed episode (Bardo 001_*: "strength += 0.5")."""
    preserve_utility: float = 0.5
    """Triage preserves episodes at or above this utility (oneiros default; Bardo: "high utility")."""
    pnl_scale: float = 10.0
    """PnL is a fraction; this scales it next to surprise and regret in the gain (oneiros default)."""
    recency_half_life_days: float = 30.0
    """Recency's half-life in the need term (oneiros default)."""
    need_weights: tuple[float, float, float] = (0.5, 1 / 3, 1 / 6)
    """Weights of regime match, recency and significance in the need term (oneiros default; Bardo
    001_* names the parts of need, not their weights)."""
    temperature: float = 0.3
    max_tokens: int = 160


class PairSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Distant-pair selection (Bumblebee 000_*, ``sample_distant_pairs``)."""

    min_time_gap_hours: float = 24.0
    """Memories of a pair are at least this far apart (Bumblebee 000_*, ``min_time_gap_hours``)."""
    max_similarity: float = 0.35
    """Cosine similarity ceiling of a pair (Bumblebee 000_*, ``max_similarity``)."""
    pair_count: int = 3
    """Pairs per cycle (Bumblebee 000_*, ``memory_pair_count``)."""
    anchor_attempts: int = 16
    """Anchors tried per pair before giving up (oneiros default; bounds the work)."""
    rejection_tries: int = 32
    """Weighted partner draws checked one by one before every similarity is computed (oneiros default)."""


class RemSettings(msgspec.Struct, frozen=True, kw_only=True):
    """REM imagination (Bardo 001_*, "Phase 2"; Bumblebee 000_* for the dream itself)."""

    counterfactual_depth: int = 2
    """Alternative branches per decision point (Bardo 001_*, ``counterfactualDepth``)."""
    counterfactual_seeds: int = 3
    """Key decisions given counterfactuals (oneiros default: one per default replay batch)."""
    creative_sessions: int = 2
    """Creative recombination sessions per cycle, each in all three modes (Bardo 001_*, ``creativeSessions``)."""
    threat_scenarios: int = 3
    """Threat simulations per cycle (Bardo 001_*, ``threatScenarios``)."""
    threat_kinds: tuple[str, ...] = (
        "flash crash",
        "oracle manipulation",
        "smart contract exploit",
        "cascading liquidations",
        "MEV attack",
    )
    """Bardo 001_*'s ThreatSimulator scenarios."""
    depotentiation: bool = True
    """Reprocess high-arousal episodes (Bardo 001_*: "If golem-daimon is enabled")."""
    depotentiation_threshold: float = 0.5
    """Replayed episodes at or above this arousal are depotentiated (oneiros default)."""
    depotentiation_min: float = 0.3
    """Smallest arousal reduction per cycle (Bardo 001_*: "reduced by 0.3-0.5 per dream cycle")."""
    depotentiation_max: float = 0.5
    """Largest arousal reduction per cycle (Bardo 001_*)."""
    dream_temperature: float = 1.15
    """Temperature of the FRAGMENTS/THREAD dream (Bumblebee 000_*, ``temperature``)."""
    dream_max_tokens: int = 500
    """Room for the fragments and thread (Bumblebee 000_*, ``max_tokens``)."""
    max_fragments: int = 6
    """Bumblebee 000_* asks for 3-6 fragments."""
    entity_name: str = "the golem"
    core_tier_limits: bool = True
    """At [CORE] tier skip creative recombination, threats and depotentiation (Bardo 001_*: "these
    require [HARDENED] tier"). Set False to run them on the rule-based path too."""
    max_tokens: int = 200
    pairs: PairSettings = PairSettings()


class IntegrationSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Integration (Bardo 001_*, "Phase 3")."""

    thread_confidence: float = 0.35
    """A dream THREAD enters at this confidence (Bumblebee 000_*, ``belief_confidence``). Bardo
    stages insights at 0.3; the thread keeps Bumblebee's figure."""
    threat_confidence: float = 0.2
    """Staged threats and playbook revisions enter at the bottom of Bardo 001_*'s 0.2-0.3 range."""
    match_similarity: float = 0.6
    """A pattern this similar to an earlier entry confirms it (oneiros default)."""
    contradiction_similarity: float = 0.45
    """A finding this similar to an earlier entry but of opposite polarity contradicts it (oneiros default)."""
    max_theme_insights: int = 3
    """Themes (tags recurring across replay batches) turned into insights per cycle (oneiros default)."""
    max_staged: int | None = None
    """Most new staged outputs per cycle, None for no limit (Dense-Mem 002_*, ``DREAMING_MAX_OUTPUTS``,
    1-50, default 5 there; oneiros stages all it classifies unless a run asks for fewer)."""
    temperature: float = 0.2
    max_tokens: int = 120


class EngineSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Knobs of the phase engines."""

    batch_size: int = 10
    """Episodes per replay batch (Bardo 001_*, ``[dream.replay] batchSize``; batches of 5-10)."""
    max_batches: int = 3
    """Replay batches per cycle; with ``batch_size`` this sets the replay slots."""
    min_utility: float = 0.1
    """Episodes at or below this utility are not replayed (Bardo 001_*, "filtered by utility > 0.1")."""
    high_priority_boost: float = 2.0
    """Utility multiplier for episodes tagged ``dream_priority: high`` (Bardo 001_*)."""
    hypothesis_confidence: float = 0.2
    """Initial confidence of a dream hypothesis (Bardo 001_*, ``hypothesisConfidence``)."""
    insight_confidence: float = 0.3
    """Initial confidence of a dream insight (Bardo 001_*, ``insightConfidence``)."""
    exploration_temperature: float = 0.7
    """Sampling temperature for generative content (Bardo 001_*, ``explorationTemperature``)."""
    malformed_retries: int = 1
    """Retries of a call whose output does not parse, each within the budget (oneiros default)."""
    embedder: str = "hashing"
    """``hashing`` (built in, offline), ``none`` (random temporal fallback) or
    ``sentence-transformers:<model>`` (the ``embeddings`` extra)."""
    onset: OnsetSettings = OnsetSettings()
    nrem: NremSettings = NremSettings()
    rem: RemSettings = RemSettings()
    integration: IntegrationSettings = IntegrationSettings()
    prompts: PromptSet = msgspec.field(default_factory=PromptSet)

    def __post_init__(self) -> None:
        make_embedder(self.embedder)  # a bad name fails here, not mid-dream; models load on first use


def _never() -> bool:
    return False


def _nothing_spent() -> tuple[int, float]:
    return 0, 0.0


class PhaseContext(msgspec.Struct, frozen=True, kw_only=True):
    cycle_id: str
    phase: DreamPhaseName
    episodes: Sequence[Episode]
    cycle_outputs: Sequence[Event]
    settings: EngineSettings
    generate: Callable[[GenerationRequest], Generation | None]
    """Returns None once the phase's budget cannot cover the request's worst case, or when the
    call failed; ``exhausted()`` tells the two apart."""
    memory: EpisodeMemory | None = None
    """The episodic read model, with strengths, current arousal and triage."""
    prior_outputs: Sequence[Event] = ()
    """Outputs of earlier cycles (staged entries), for confirmation and contradiction."""
    seed: int = 0
    tier: Tier = "core"
    exhausted: Callable[[], bool] = _never
    spent: Callable[[], tuple[int, float]] = _nothing_spent
    """Tokens and dollars the cycle has spent so far."""
    cycle_versions: int = 0
    """Log versions the cycle has spanned when the phase started."""


class PhaseEngine(Protocol):
    def __call__(self, ctx: PhaseContext, /) -> list[Event]: ...
