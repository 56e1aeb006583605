"""What a phase engine is given: the episodes, the cycle's outputs so far, and a budgeted generator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from oneiros.events import DreamPhaseName, Episode, Event
from oneiros.generators import Generation, GenerationRequest

__all__ = ["EngineSettings", "PhaseContext", "PhaseEngine"]


class EngineSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Knobs of the phase engines."""

    batch_size: int = 10
    """Episodes per replay batch (Bardo 001_*, ``[dream.replay] batchSize``; batches of 5-10)."""
    max_batches: int = 3
    """Replay batches per cycle; each becomes one REM seed."""
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


class PhaseContext(msgspec.Struct, frozen=True, kw_only=True):
    cycle_id: str
    phase: DreamPhaseName
    episodes: Sequence[Episode]
    cycle_outputs: Sequence[Event]
    settings: EngineSettings
    generate: Callable[[GenerationRequest], Generation | None]
    """Returns None once the phase's budget cannot cover the request's worst case."""


class PhaseEngine(Protocol):
    def __call__(self, ctx: PhaseContext, /) -> list[Event]: ...
