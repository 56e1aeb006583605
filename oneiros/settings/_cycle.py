"""What a dream cycle runs with: the engines' knobs, the budget and its prices, the cycle settings.

Each number is the default of a setting and its docstring names the source system it comes from
(docs/sources.md). A cycle records the settings it starts with, so these are plain data and import
nothing above them.
"""

from __future__ import annotations

import math
import re
from typing import Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from oneiros._errors import ConfigError, InvalidSetting
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._prompts import PromptSet
from oneiros.settings._vocabulary import StagedKind, Tier

__all__ = [
    "DEFAULT_PRICES",
    "MENTIONS_KEPT",
    "TIER_CAPS",
    "ConsolidationSettings",
    "CycleBudget",
    "CycleSettings",
    "EngineSettings",
    "IntegrationSettings",
    "ModelPrice",
    "NremSettings",
    "OnsetSettings",
    "PairSettings",
    "RemSettings",
    "WakeUpSettings",
]

_EMBEDDER = re.compile(r"^(hashing|none|sentence-transformers:.+)$")


class OnsetSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Hypnagogic onset (Bardo, "Hypnagogic Engine")."""

    residue_episodes: int = 3
    """Latest episodes that make up the waking residue (oneiros default; the documents give none)."""
    partials: int = 4
    """Partial completions per onset (Bardo, DaliInterrupt: "4 partial completions")."""
    partial_max_tokens: int = 80
    """Each partial is cut at this many tokens (Bardo: "each capped at 80 tokens")."""
    partial_temperature: float = 1.2
    """Raised temperature of the partials (Bardo: ExecutiveLoosener T=1.0-1.5; H3-H4 at 1.0-1.2)."""
    judge_temperature: float = 0.4
    """The HomuncularObserver's cheap novelty pass (Bardo: "a cheap T0 call at T=0.4")."""
    judge_max_tokens: int = 64
    novelty_threshold: float = 0.5
    """Partials judged at least this novel survive (oneiros default)."""
    min_confidence: float = 0.10
    """Confidence of a surviving fragment at novelty 0 (Bardo: "at confidence 0.10-0.20")."""
    max_confidence: float = 0.20
    """Confidence of a surviving fragment at novelty 1 (Bardo)."""


class NremSettings(msgspec.Struct, frozen=True, kw_only=True):
    """NREM replay (Bardo, "Phase 1")."""

    diversity_share: float = 0.2
    """Share of replay slots kept for diversity (Bardo: "20% of replay slots")."""
    regime_window_days: float = 30.0
    """Diversity takes one episode of each regime seen in this many days (Bardo: "last 30 days")."""
    high_arousal: float = 0.7
    """An episode at or above this arousal can fill the high-arousal diversity slot (oneiros default)."""
    perturbation_rate: float = 0.3
    """Share of batches replayed with a perturbation (Bardo, ``perturbationRate``)."""
    perturbations: tuple[str, ...] = ("a delay", "a latency spike", "a cost change", "data dropout")
    """Bardo's perturbations (slippage, latency spikes, gas price changes, data dropout) in words
    of no one domain; the ``bardo`` preset sets Bardo's own."""
    strength_delta: float = 0.5
    """Replay strength added per replayed episode (Bardo: "strength += 0.5")."""
    preserve_utility: float = 0.5
    """Triage preserves episodes at or above this utility (oneiros default; Bardo: "high utility")."""
    pnl_scale: float = 10.0
    """PnL is a fraction; this scales it next to surprise and regret in the gain (oneiros default)."""
    recency_half_life_days: float = 30.0
    """Recency's half-life in the need term (oneiros default)."""
    need_weights: tuple[float, float, float] = (0.5, 1 / 3, 1 / 6)
    """Weights of regime match, recency and significance in the need term (oneiros default; Bardo
    names the parts of need, not their weights)."""
    temperature: float = 0.3
    max_tokens: int = 160


class PairSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Distant-pair selection (Bumblebee, ``sample_distant_pairs``)."""

    min_time_gap_hours: float = 24.0
    """Memories of a pair are at least this far apart (Bumblebee, ``min_time_gap_hours``)."""
    max_similarity: float = 0.35
    """Cosine similarity ceiling of a pair (Bumblebee, ``max_similarity``)."""
    pair_count: int = 3
    """Pairs per cycle (Bumblebee, ``memory_pair_count``)."""
    anchor_attempts: int = 16
    """Anchors tried per pair before giving up (oneiros default; bounds the work)."""
    rejection_tries: int = 32
    """Weighted partner draws checked one by one before every similarity is computed (oneiros default)."""


class RemSettings(msgspec.Struct, frozen=True, kw_only=True):
    """REM imagination (Bardo, "Phase 2"; Bumblebee for the dream itself)."""

    counterfactual_depth: int = 2
    """Alternative branches per decision point (Bardo, ``counterfactualDepth``)."""
    counterfactual_seeds: int = 3
    """Key decisions given counterfactuals (oneiros default: one per default replay batch)."""
    creative_sessions: int = 2
    """Creative recombination sessions per cycle, each in all three modes (Bardo, ``creativeSessions``)."""
    threat_scenarios: int = 3
    """Threat simulations per cycle (Bardo, ``threatScenarios``)."""
    threat_kinds: tuple[str, ...] = (
        "a sudden failure",
        "bad input",
        "a dependency failing",
        "a cascade of failures",
        "an adversary",
    )
    """Bardo's ThreatSimulator scenarios (flash crash, oracle manipulation, smart contract
    exploit, cascading liquidations, MEV attack) in words of no one domain; the ``bardo`` preset sets
    Bardo's own."""
    depotentiation: bool = True
    """Reprocess high-arousal episodes (Bardo: "If golem-daimon is enabled")."""
    depotentiation_threshold: float = 0.5
    """Replayed episodes at or above this arousal are depotentiated (oneiros default)."""
    depotentiation_min: float = 0.3
    """Smallest arousal reduction per cycle (Bardo: "reduced by 0.3-0.5 per dream cycle")."""
    depotentiation_max: float = 0.5
    """Largest arousal reduction per cycle (Bardo)."""
    dream_temperature: float = 1.15
    """Temperature of the FRAGMENTS/THREAD dream (Bumblebee, ``temperature``)."""
    dream_max_tokens: int = 500
    """Room for the fragments and thread (Bumblebee, ``max_tokens``)."""
    max_fragments: int = 6
    """Bumblebee asks for 3-6 fragments."""
    entity_name: str = "the golem"
    core_tier_limits: bool = True
    """At [CORE] tier skip creative recombination, threats and depotentiation (Bardo: "these
    require [HARDENED] tier"). Set False to run them on the rule-based path too."""
    max_tokens: int = 200
    pairs: PairSettings = PairSettings()


class IntegrationSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Integration (Bardo, "Phase 3")."""

    thread_confidence: float = 0.35
    """A dream THREAD enters at this confidence (Bumblebee, ``belief_confidence``). Bardo
    stages insights at 0.3; the thread keeps Bumblebee's figure."""
    threat_confidence: float = 0.2
    """Staged threats and playbook revisions enter at the bottom of Bardo's 0.2-0.3 range."""
    match_similarity: float = 0.6
    """A pattern this similar to an earlier entry confirms it (oneiros default)."""
    contradiction_similarity: float = 0.45
    """A finding this similar to an earlier entry but of opposite polarity contradicts it (oneiros default)."""
    max_theme_insights: int = 3
    """Themes (tags recurring across replay batches) turned into insights per cycle (oneiros default)."""
    max_staged: int | None = None
    """Most new staged outputs per cycle, None for no limit (Dense-Mem, ``DREAMING_MAX_OUTPUTS``,
    1-50, default 5 there; oneiros stages all it classifies unless a run asks for fewer)."""
    staged_first: tuple[StagedKind, ...] = (
        "confirmed_pattern",
        "novel_insight",
        "strategy_hypothesis",
        "playbook_revision",
        "threat",
        "contradiction",
        "creative_prediction",
    )
    """Which kinds ``max_staged`` keeps first when the cycle classified more: reasoning before the
    hypnagogic fragments (oneiros default; the onset's predictions come first in a cycle and filled
    a cap of 3 or 5 alone). Kinds not named come last; the kept entries stay in the cycle's order."""
    temperature: float = 0.2
    max_tokens: int = 120


MENTIONS_KEPT: Final = 8
"""Latest mentions of each subject the episode memory keeps for threads: a thread's cap is at most this."""


class ConsolidationSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What a night's episodes become: OpenSeed's observations (facts, with their levels),
    threads of one subject across days, and summaries. The defaults keep what helps recall find a
    turn (dated sentences, answers with their questions, shared images) and leave out what mostly
    costs a reader more to read (every sentence restated, many threads, summaries); the
    measurements behind them are in docs/evaluation.md."""

    observations: bool = True
    """NREM restates the night's episodes as observations (``DreamObservation``)."""
    batch: int = 16
    """Episodes per observation step (oneiros default: small enough that a step's worst case, its
    prompt and ``tokens_per_episode`` for each episode, fits a [CORE] NREM budget several times)."""
    tokens_per_episode: int = 64
    """Room in an observation step's answer per episode it reads (its ``max_tokens``; oneiros default)."""
    salient: float = 0.7
    """An episode of at least this significance is restated whole; the others only where a fact
    adds to them (a date made absolute, the question an answer replies to, an image). 0 restates
    every episode (oneiros default; what OpenSeed observes is what mattered)."""
    max_sources: int = 2
    """Most episodes one observation restates: an answer and its question (oneiros default)."""
    threads: int = 3
    """Most threads a night starts: one subject (a tag, or a name an episode uses) the night speaks
    of and earlier nights did too, as a dated timeline (0 for none). Few: a thread mostly buys more
    turns per recall slot, not better recall (docs/evaluation.md)."""
    thread_sources: int = 3
    """Most episodes one thread joins: the night's and the latest earlier ones (at most ``MENTIONS_KEPT``)."""
    profile: bool = True
    """NREM finds the user's profile (core memory) in the night's turns: standing instructions,
    preferences, facts about themselves and their project, each a ``DreamObservation`` of kind
    ``profile`` whose ``key`` a later entry on the same thing supersedes (issue 36)."""
    timelines: int = 3
    """Most timelines a night writes again: subjects the user's turns of the night name as theirs
    ("my budget tracker") that a turn of an earlier day named too, each what the user brought up
    about it in order, with dates (a ``DreamObservation`` of kind ``timeline`` superseding the
    subject's earlier one; issue 36). 0 for none."""
    timeline_entries: int = 8
    """Most entries of a timeline: the first turn on its subject of each day, spread evenly over the
    whole span past this many. Recall is paid for in tokens: 8 short clauses are about 200."""
    summaries: bool = False
    """One summary of each night's episodes per speaker: off, since they added nothing a reader
    could use that observations did not (docs/evaluation.md)."""
    summary_sources: int = 3
    """Most episodes a summary names (and takes its words from)."""
    temperature: float = 0.2
    max_tokens: int = 400
    """Room for a thread or a summary."""

    def __post_init__(self) -> None:
        for name in ("batch", "tokens_per_episode", "max_sources", "summary_sources"):
            if getattr(self, name) < 1:
                raise InvalidSetting(f"cycle.engines.consolidation.{name}", getattr(self, name), "at least 1")
        if not 2 <= self.thread_sources <= MENTIONS_KEPT:  # a thread joins two episodes at least
            raise InvalidSetting(
                "cycle.engines.consolidation.thread_sources", self.thread_sources, f"from 2 to {MENTIONS_KEPT}"
            )
        if self.threads < 0:
            raise InvalidSetting("cycle.engines.consolidation.threads", self.threads, "0 or more")
        if self.timelines < 0:
            raise InvalidSetting("cycle.engines.consolidation.timelines", self.timelines, "0 or more")
        if self.timeline_entries < 2:
            raise InvalidSetting("cycle.engines.consolidation.timeline_entries", self.timeline_entries, "at least 2")


class WakeUpSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The wake-up message the agent reads after a dream (hypnopompic return)."""

    style: Literal["summary", "openseed"] = "summary"
    """``summary``: a few plain sentences and highlights. ``openseed``: OpenSeed's wake-up
    message in its own shape: "You woke up at ... after sleeping ...s.", the reflection, "Your
    priority:", the recent observations with their RED / YLW / GRN levels, and where the full
    history is (the ``openseed`` preset sets it)."""
    observations: int = 5
    """Recent observations listed in the OpenSeed message, RED first (oneiros default; OpenSeed
    shows "Recent observations:" without a count)."""
    history_note: str = (
        "Full history: the event log (`oneiros events`, `oneiros journal`) and the staging buffer "
        "(`oneiros staging`).\nSearch with `oneiros events --json` and jq."
    )
    """Where the full history is: OpenSeed points at ``.self/conversation.jsonl`` and
    ``.self/observations.md``; oneiros's total recall is its event log."""


class EngineSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Knobs of the phase engines."""

    batch_size: int = 10
    """Episodes per replay batch (Bardo, ``[dream.replay] batchSize``; batches of 5-10)."""
    max_batches: int = 3
    """Replay batches per cycle; with ``batch_size`` this sets the replay slots."""
    min_utility: float = 0.1
    """Episodes at or below this utility are not replayed (Bardo, "filtered by utility > 0.1")."""
    high_priority_boost: float = 2.0
    """Utility multiplier for episodes tagged ``dream_priority: high`` (Bardo)."""
    hypothesis_confidence: float = 0.2
    """Initial confidence of a dream hypothesis (Bardo, ``hypothesisConfidence``)."""
    insight_confidence: float = 0.3
    """Initial confidence of a dream insight (Bardo, ``insightConfidence``)."""
    exploration_temperature: float = 0.7
    """Sampling temperature for generative content (Bardo, ``explorationTemperature``)."""
    malformed_retries: int = 1
    """Retries of a call whose output does not parse, each within the budget (oneiros default)."""
    embedder: str = "hashing"
    """``hashing`` (built in, offline), ``none`` (random temporal fallback) or
    ``sentence-transformers:<model>`` (the ``embeddings`` extra)."""
    onset: OnsetSettings = OnsetSettings()
    nrem: NremSettings = NremSettings()
    rem: RemSettings = RemSettings()
    integration: IntegrationSettings = IntegrationSettings()
    consolidation: ConsolidationSettings = ConsolidationSettings()
    wake_up: WakeUpSettings = WakeUpSettings()
    prompts: PromptSet = msgspec.field(default_factory=PromptSet)

    def __post_init__(self) -> None:
        # A bad name fails here, not mid-dream; models load on first use, in the episodes layer.
        if not _EMBEDDER.match(self.embedder):
            raise ConfigError(f"unknown embedder {self.embedder!r}; use hashing, none or sentence-transformers:<model>")


def _check_amount(key: str, value: float | None, *, allow_none: bool = True) -> None:
    """A cap or price must be a finite number >= 0: NaN compares false with everything, so a NaN
    cap would admit every call, and a negative one would poison the events that carry it."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        expected = "a finite number >= 0" + (" or none (no cap)" if allow_none else "")
        raise InvalidSetting(key, value, expected)


class ModelPrice(msgspec.Struct, frozen=True):
    """Dollars per million tokens in and out."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1_000_000


DEFAULT_PRICES: Final[dict[str, ModelPrice]] = {
    # Not from the source documents: list prices of the defaults at the time of writing. The
    # offline generator is the [CORE] rule-based path and costs nothing.
    "offline-core": ModelPrice(0.0, 0.0),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "claude-3-haiku": ModelPrice(0.25, 1.25),
    "claude-3-5-sonnet": ModelPrice(3.00, 15.00),
}


TIER_CAPS: Final[dict[Tier, dict[str, float | None]]] = {
    # Bardo prices a CORE cycle at $0.001-0.003 of T0 (Haiku-class) inference; $0.003 buys
    # about 12k input tokens at Haiku's $0.25 a million. Its money caps are HARDENED only.
    "core": {"cycle_tokens": 12_000, "cycle_usd": None, "window_usd": None},
    # Bardo ``perCycleMax = "$0.50"``, ``perSessionMax = "$2.00"``; the tokens are the
    # ``hardened_cycle_tokens`` setting.
    "hardened": {"cycle_usd": 0.50, "window_usd": 2.00},
}
"""The caps a tier supplies when the settings leave them unset: a tier's defaults, never more."""


class CycleBudget(msgspec.Struct, frozen=True, kw_only=True):
    """Budget of dream cycles: tier, token and money caps, and the price table.

    The tier supplies the defaults of ``cycle_tokens``, ``cycle_usd`` and ``window_usd``
    (:data:`TIER_CAPS`); a value given for any of them (a file, ``ONEIROS_*``, a flag, Python)
    wins at every tier. They are resolved when the Struct is made, so a cycle's DreamStart records
    the caps it ran under, whatever a later version's tier defaults are."""

    tier: Tier = "core"
    """Bardo ``tier = "core"`` by default; ``hardened`` for T1/T2 rich dreams."""
    cycle_tokens: int | UnsetType = UNSET
    """Tokens for the whole cycle. Unset: the tier's, 12,000 at [CORE] (Bardo's $0.003 of
    Haiku-class input) and ``hardened_cycle_tokens`` at [HARDENED]."""
    hardened_cycle_tokens: int = 60_000
    """The [HARDENED] tier's ``cycle_tokens`` when that is unset: Bardo's ~$0.30 a cycle at T1 prices."""
    cycle_usd: float | UnsetType | None = UNSET
    """Money cap per cycle. Unset: the tier's, none at [CORE] and $0.50 at [HARDENED] (Bardo
    ``perCycleMax = "$0.50"``, HARDENED only)."""
    window_usd: float | UnsetType | None = UNSET
    """Money cap per sleep window. Unset: the tier's, none at [CORE] and $2.00 at [HARDENED] (Bardo
    ``perSessionMax = "$2.00"``, HARDENED only)."""
    window_hours: float = 4.0
    """A sleep window is the rolling span of this many hours before the cycle's latest event
    (Bardo's default window is 02:00-06:00, four hours)."""
    window_tokens: int | None = None
    day_usd: float | None = None
    """No source document gives a daily cap; set one to enforce it."""
    day_tokens: int | None = None
    month_usd: float | None = 15.00
    """Hard monthly cap for both tiers (Bardo ``monthlyMax = "$15.00"``)."""
    month_tokens: int | None = None
    credit_floor: float = 0.15
    """Dreams are suppressed below this share of remaining LLM credit (Bardo: "Suppressed
    entirely when LLM partition falls below 15% of remaining credit")."""
    prices: dict[str, ModelPrice] = msgspec.field(default_factory=lambda: dict(DEFAULT_PRICES))
    default_price: ModelPrice = ModelPrice(15.00, 75.00)
    """Price of a model missing from ``prices``: the dearest tier we know of, so an unknown model
    can only make the budget stricter."""
    overhead_tokens: int = 16
    """Tokens a chat request adds around its messages (role markers), reserved on every call."""
    response_bytes_per_token: int = 16
    """The most UTF-8 bytes of completion kept per ``max_tokens`` token. English runs about four
    bytes a token; a completion longer than ``max_tokens`` times this cannot have come from
    ``max_tokens`` tokens, so it is cut to that size and recorded as an overrun (oneiros default)."""

    def __post_init__(self) -> None:
        tier_caps = {"cycle_tokens": self.hardened_cycle_tokens, **TIER_CAPS.get(self.tier, TIER_CAPS["core"])}
        for name, default in tier_caps.items():
            if getattr(self, name) is UNSET:
                msgspec.structs.force_setattr(self, name, default)
        for name in ("cycle_tokens", "hardened_cycle_tokens", "overhead_tokens"):
            _check_amount(f"cycle.budget.{name}", getattr(self, name), allow_none=False)
        for name in ("cycle_usd", "window_usd", "window_tokens", "day_usd", "day_tokens", "month_usd", "month_tokens"):
            _check_amount(f"cycle.budget.{name}", getattr(self, name))
        _check_amount("cycle.budget.credit_floor", self.credit_floor, allow_none=False)
        priced = [(f"prices.{model}", price) for model, price in self.prices.items()]
        for where, price in [*priced, ("default_price", self.default_price)]:
            _check_amount(f"cycle.budget.{where}.input_per_mtok", price.input_per_mtok, allow_none=False)
            _check_amount(f"cycle.budget.{where}.output_per_mtok", price.output_per_mtok, allow_none=False)
        if not (math.isfinite(self.window_hours) and self.window_hours > 0):
            raise InvalidSetting("cycle.budget.window_hours", self.window_hours, "a finite number of hours > 0")
        if self.response_bytes_per_token < 1:
            raise InvalidSetting(
                "cycle.budget.response_bytes_per_token", self.response_bytes_per_token, "an integer >= 1"
            )

    def tokens(self) -> int:
        """The cycle's token cap."""
        assert isinstance(self.cycle_tokens, int)  # resolved when the Struct was made
        return self.cycle_tokens

    def at_tier(self, tier: Tier) -> CycleBudget:
        """These caps at ``tier``: a cap equal to its own tier's default follows the new tier, any
        other (one someone set) stays, so another tier's caps can be shown from resolved ones."""
        own = {"cycle_tokens": self.hardened_cycle_tokens, **TIER_CAPS.get(self.tier, TIER_CAPS["core"])}
        kept = {name: getattr(self, name) for name, default in own.items() if getattr(self, name) != default}
        return msgspec.structs.replace(self, tier=tier, **{name: kept.get(name, UNSET) for name in own})

    def cycle_usd_cap(self) -> float | None:
        """The cycle's money cap, None for none."""
        assert not isinstance(self.cycle_usd, UnsetType)  # resolved when the Struct was made
        return self.cycle_usd

    def window_usd_cap(self) -> float | None:
        """The sleep window's money cap, None for none."""
        assert not isinstance(self.window_usd, UnsetType)  # resolved when the Struct was made
        return self.window_usd

    def price(self, model: str) -> ModelPrice:
        return self.prices.get(model, self.default_price)


class CycleSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What one dream cycle runs with. Recorded in the cycle's DreamStart, so every phase, on
    whichever worker, runs with the settings the cycle started with."""

    budget: CycleBudget = CycleBudget()
    engines: EngineSettings = EngineSettings()
    generator: GeneratorSettings = GeneratorSettings()
    seed: int | None = None
    """Seed of the cycle's random draws and of the offline generator; None takes the starting
    process's (``Deps.seed``), which is then recorded."""
    credit_fraction: float | None = None
    """The LLM credit partition's remaining share, when the host knows it; under
    ``budget.credit_floor`` the cycle is suppressed (Bardo)."""
