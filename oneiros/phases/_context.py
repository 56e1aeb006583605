"""What a phase engine is given: the episodes, the cycle's outputs so far, and a budgeted generator;
and the settings of every engine, each number from the source system its docstring names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

import msgspec

from oneiros.episodes._fold import EpisodeMemory
from oneiros.events._types import DreamPhaseName, Episode, Event
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.settings._cycle import EngineSettings
from oneiros.settings._vocabulary import Tier

__all__ = ["PhaseContext", "PhaseEngine"]


def _never() -> bool:
    return False


def _nothing_spent() -> tuple[int, float]:
    return 0, 0.0


def _always(_request: GenerationRequest) -> bool:
    return True


class PhaseContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a phase's engine is given: the cycle, the episodes, the outputs so far, its settings and a
    generator metered against the phase's budget."""

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
    fits: Callable[[GenerationRequest], bool] = _always
    """Whether the budget would take a request now, asked without making it (or the log answered it)."""
    spent: Callable[[], tuple[int, float]] = _nothing_spent
    """Tokens and dollars the cycle has spent so far."""
    started_at: datetime | None = None
    """When the cycle began (its DreamStart), as the log recorded it."""
    now: datetime | None = None
    """When the phase began, as the log recorded it (in the return: the moment of waking)."""
    cycle_versions: int = 0
    """Log versions the cycle has spanned when the phase started."""
    night: tuple[int, int] | None = None
    """The cycle's night as rows of ``memory`` (start, end): the episodes recorded since the last
    completed cycle began, up to this cycle's start. None: every episode is the night."""

    def night_episodes(self) -> Sequence[Episode]:
        """The night's episodes in tick order, each decoded only when read."""
        if self.memory is not None and self.night is not None:
            return self.memory.columns().recorded(*self.night)
        return self.episodes


class PhaseEngine(Protocol):
    """What runs a phase: a function of its context returning the events the phase records (its
    outputs; the machine's move to the next phase is the runtime's)."""

    def __call__(self, ctx: PhaseContext, /) -> list[Event]: ...
