"""The one interface every text generator implements."""

from __future__ import annotations

from typing import Literal, Protocol

import msgspec

from oneiros.events import DreamPhaseName

__all__ = ["Generation", "GenerationRequest", "Generator", "Task"]

Task = Literal["pattern", "hypothesis", "counterfactual", "insight"]


class GenerationRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a phase asks for. ``call_key`` names the call within its cycle so a re-run finds its
    recorded response instead of asking again."""

    call_key: str
    phase: DreamPhaseName
    task: Task
    prompt: str
    fragments: tuple[str, ...] = ()
    temperature: float = 0.7
    max_tokens: int = 256


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float = 0.0


class Generator(Protocol):
    """Turns a request into text. Implementations must not act on the world."""

    def generate(self, request: GenerationRequest) -> Generation: ...
