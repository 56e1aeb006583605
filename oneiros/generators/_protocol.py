"""The one interface every text generator implements."""

from __future__ import annotations

from typing import Protocol

import msgspec

from oneiros.settings import DreamPhaseName, Task, Tier

__all__ = ["Generation", "GenerationRequest", "Generator", "Task", "Tier", "model_of"]


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
    system: str = ""
    tier: Tier = "core"


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float = 0.0


class Generator(Protocol):
    """Turns a request into text. Implementations must not act on the world.

    A generator may also offer ``model_for(request) -> str`` so the budget can price a call's worst
    case before making it; without it the budget uses the generator's ``model`` attribute. One
    that can count its input exactly may offer ``max_tokens_in(request) -> int``; without it the
    budget reserves a token per prompt byte, a bound no byte-level tokenizer exceeds.
    """

    def generate(self, request: GenerationRequest) -> Generation: ...


def model_of(generator: Generator, request: GenerationRequest) -> str:
    """The model ``generator`` will use for ``request``, as far as it says."""
    model_for = getattr(generator, "model_for", None)
    if callable(model_for):
        return str(model_for(request))
    return str(getattr(generator, "model", "unknown"))
