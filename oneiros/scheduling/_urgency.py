"""Bardo's urgency score and dream intensity: pure functions of the golem's signals.

Both follow Bardo ("Dream Scheduling", "Dream Intensity Modulation", "Three-Clock Dream
Intensity Modulation"); the figures are settings in :mod:`oneiros.config`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import msgspec

from oneiros.events._types import BehavioralPhase

if TYPE_CHECKING:  # config imports the workers, which import fsm: a runtime import would be circular
    from oneiros.settings._scheduling import IntensitySettings, UrgencySettings

__all__ = ["Intensity", "Pressures", "Signals", "clock_urgency", "dream_intensity", "dream_urgency", "urgency_terms"]

Uncertainty = Literal["high", "medium", "low"]
IntensityMode = Literal["normal", "legacy_bias", "legacy", "consolidation_only"]


class Signals(msgspec.Struct, frozen=True, kw_only=True):
    """What the host tells the scheduler about the golem each tick.

    Fields left None are derived from the log (episodes recorded since the last dream)."""

    recent_surprise: float | None = None
    unresolved_arousal: float | None = None
    recent_losses: float | None = None
    prediction_accuracy: float | None = None
    epistemic_fitness: float | None = None
    """Defaults to ``prediction_accuracy``."""
    credit_remaining: float = 1.0
    """Fraction of the LLM credit partition left (Bardo precondition 2)."""
    permit_pending: bool = False
    """An ActionPermit is pending (Bardo precondition 4)."""
    adapting: bool = False
    """The host sees the golem as uncertain or adapting: the lower urgency threshold applies."""
    projected_life_hours: float = math.inf
    """Economic clock (Bardo)."""
    hayflick_ratio: float = 0.0
    """Stochastic clock (Bardo)."""


class Intensity(msgspec.Struct, frozen=True, kw_only=True):
    """How hard the next dream works (Bardo, ``DreamIntensityConfig`` and the three clocks)."""

    uncertainty: Uncertainty
    replay_batch_size: int
    counterfactual_depth: int
    creative_sessions: int
    threat_scenarios: int
    inference_grade: Literal["T1", "T2"]
    exploration_temperature: float
    rate: float
    """``1 + econ * 0.5 + epistemic * 0.3 + stochastic * 0.2``: how much more often to dream."""
    mode: IntensityMode

    def label(self) -> str:
        return f"{self.uncertainty}/{self.mode} x{self.rate:.2f}"


_LEVELS: dict[Uncertainty, tuple[int, int, int, int, Literal["T1", "T2"], float]] = {
    "high": (15, 3, 3, 5, "T2", 0.9),
    "medium": (10, 2, 2, 3, "T1", 0.7),
    "low": (5, 1, 1, 1, "T1", 0.5),
}


def _clip(value: float) -> float:
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else value


class Pressures(msgspec.Struct, frozen=True, kw_only=True):
    """The six pressures Bardo's ``dream_urgency`` weighs, as measured now: surprise, episodes not yet
    replayed, unresolved arousal, recent losses, how well the golem predicts, and time since it dreamt."""

    novelty: float
    unreplayed_episodes: int
    emotional: float
    threat: float
    prediction_accuracy: float
    ticks_since_last_dream: float


def urgency_terms(settings: UrgencySettings, phase: BehavioralPhase, pressures: Pressures) -> dict[str, float]:
    """The six weighted pressures of Bardo's ``dream_urgency``, by name."""
    w = settings.weights.get(phase)
    if w is None:
        return {}
    debt = _clip(pressures.unreplayed_episodes / settings.debt_saturation)
    # A moment before the last dream (a clock set back, `should-dream --at` in the past) counts as
    # no time since it; the exponent is bounded so no elapsed time overflows math.exp.
    elapsed = max(0.0, pressures.ticks_since_last_dream)
    temporal = 1.0 / (1.0 + math.exp(max(-700.0, -elapsed / w.natural_period)))
    return {
        "novelty": w.novelty * _clip(pressures.novelty),
        "consolidation": w.consolidation * debt,
        "emotional": w.emotional * _clip(pressures.emotional),
        "threat": w.threat * _clip(pressures.threat),
        "epistemic": w.epistemic * _clip(1.0 - pressures.prediction_accuracy),
        "temporal": w.temporal * temporal,
    }


def dream_urgency(settings: UrgencySettings, phase: BehavioralPhase, pressures: Pressures) -> float:
    """Bardo ``dream_urgency``: the phase's weighted sum of the six pressures, in [0, 1]."""
    return _clip(sum(urgency_terms(settings, phase, pressures).values()))


def clock_urgency(
    settings: IntensitySettings, *, life_hours: float, accuracy: float, hayflick: float
) -> tuple[float, float, float]:
    """Each mortality clock's urgency in [0, 1]: how close it is to its threshold.

    Bardo only says "based on proximity to each clock's threshold"; here the economic clock
    runs from 0 at the double-rate horizon (72 h) to 1 at cessation (6 h), the epistemic clock
    from 0 at perfect accuracy to 1 at the 0.5 "what confused me" mark, and the stochastic clock
    from 0 at birth to 1 at the full-legacy hayflick ratio (0.85)."""
    span = settings.double_rate_below_hours - settings.cease_below_hours
    economic = _clip((settings.double_rate_below_hours - life_hours) / span) if span > 0 else 0.0
    epistemic = (
        _clip((1.0 - accuracy) / (1.0 - settings.high_below_fitness)) if settings.high_below_fitness < 1 else 0.0
    )
    stochastic = _clip(hayflick / settings.legacy_mode_above) if settings.legacy_mode_above > 0 else 0.0
    return economic, epistemic, stochastic


def dream_intensity(
    settings: IntensitySettings, *, fitness: float, accuracy: float, life_hours: float, hayflick: float
) -> Intensity:
    """Bardo ``dream_intensity``: the level from epistemic fitness, the rate from the three clocks,
    and the mode the clocks impose (consolidation only under 24 h, legacy past the hayflick marks)."""
    level: Uncertainty = (
        "high"
        if fitness < settings.high_below_fitness
        else "medium"
        if fitness < settings.medium_below_fitness
        else "low"
    )
    batch, depth, creative, threats, grade, temperature = _LEVELS[level]
    economic, epistemic, stochastic = clock_urgency(
        settings, life_hours=life_hours, accuracy=accuracy, hayflick=hayflick
    )
    rate = (
        1.0
        + economic * settings.economic_weight
        + epistemic * settings.epistemic_weight
        + stochastic * settings.stochastic_weight
    )
    mode: IntensityMode = "normal"
    if life_hours < settings.consolidation_only_below_hours:
        mode = "consolidation_only"
    elif hayflick > settings.legacy_mode_above:
        mode = "legacy"
    elif hayflick > settings.legacy_bias_above:
        mode = "legacy_bias"
    return Intensity(
        uncertainty=level,
        replay_batch_size=batch,
        counterfactual_depth=depth,
        creative_sessions=creative,
        threat_scenarios=threats,
        inference_grade=grade,
        exploration_temperature=temperature,
        rate=round(rate, 6),
        mode=mode,
    )
