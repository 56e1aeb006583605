"""The one interface every text generator implements."""

from __future__ import annotations

import hashlib
from typing import Protocol

import msgspec

from oneiros.events._types import Episode
from oneiros.settings._vocabulary import DreamPhaseName, Task, Tier

__all__ = [
    "Generation",
    "GenerationRequest",
    "Generator",
    "RequestShape",
    "Task",
    "TaskInputs",
    "Tier",
    "model_of",
    "request_hash",
    "request_shape",
]


class TaskInputs(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a task works from, as data: the episodes its prompt lists and the figures its prompt
    states. The prompt is rendered from these for a model; a generator that writes by rule (the
    offline one) reads them here, so a user's own prompt template changes what a model is told and
    nothing else. Not part of the request's hash: the prompt rendered from them is."""

    episodes: tuple[Episode, ...] = ()
    """The episodes the prompt lists, in its order."""
    before: Episode | None = None
    """The episode said just before them: context for what they answer, not one of them (observe)."""
    salient: float | None = None
    """Observe: episodes of this significance or more are restated whole."""
    cap: int | None = None
    """Summary: the most episodes a summary may name."""
    subject: str | None = None
    """Thread: what the thread follows across days."""
    theme: str | None = None
    """Partial: the residue's theme word."""
    branch: int | None = None
    """Counterfactual: which branch of the decision this call explores (1 first)."""
    mode: str | None = None
    """Creative hypothesis: combinational, exploratory or transformational."""
    tag: str | None = None
    """Insight: the tag the theme's episodes share."""
    kind: str | None = None
    """Threat: the kind of threat rehearsed."""

    def stated(self) -> dict[str, object]:
        """The figures set here, by name, as a prompt template takes them."""
        named = ("salient", "cap", "subject", "theme", "branch", "mode", "tag", "kind")
        return {name: value for name in named if (value := getattr(self, name)) is not None}


class GenerationRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a phase asks for. ``call_key`` names the call within its cycle so a re-run finds its
    recorded response instead of asking again; ``given`` holds what the prompt was rendered from."""

    call_key: str
    phase: DreamPhaseName
    task: str
    """A dream task (``Task``, whose prompt is a ``PromptSet`` template), or the task of a caller
    that brings its own prompt (the evaluation's reader asks ``answer``, ``oneiros.lab._answer``)."""
    prompt: str
    fragments: tuple[str, ...] = ()
    temperature: float = 0.7
    max_tokens: int = 256
    system: str = ""
    tier: Tier = "core"
    given: TaskInputs = TaskInputs()


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    """What a generator answered, with the usage it reports (which the budget does not trust)."""

    text: str
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float = 0.0
    text_bytes: int | None = None
    """The completion's size as received, when ``text`` is a recording already cut to fit (a
    re-run reads the kept text back but must see the overrun the original saw); None: ``text``'s own."""


class RequestShape(msgspec.Struct, frozen=True, kw_only=True):
    """Everything in a request that can change the answer, as the generator will send it: the
    hash of this is what a recorded response is matched on besides its ``call_key``."""

    model: str
    task: str
    system: str
    prompt: str
    fragments: tuple[str, ...]
    temperature: float
    max_tokens: int


class Generator(Protocol):
    """Turns a request into text. Implementations must not act on the world.

    A generator may also offer ``model_for(request) -> str`` so the budget can price a call's worst
    case before making it; without it the budget uses the generator's ``model`` attribute. One
    that can count its input exactly may offer ``max_tokens_in(request) -> int``; without it the
    budget reserves a token per prompt byte, a bound no byte-level tokenizer exceeds. One that
    overrides a request's temperature offers ``temperature_for(request) -> float``, so the recorded
    request (and its hash) is what was really sent.
    """

    def generate(self, request: GenerationRequest) -> Generation: ...


def model_of(generator: Generator, request: GenerationRequest) -> str:
    """The model ``generator`` will use for ``request``, as far as it says."""
    model_for = getattr(generator, "model_for", None)
    if callable(model_for):
        return str(model_for(request))
    return str(getattr(generator, "model", "unknown"))


def request_shape(generator: Generator, request: GenerationRequest) -> RequestShape:
    """What ``generator`` will send for ``request``: its model and its effective temperature."""
    temperature_for = getattr(generator, "temperature_for", None)
    temperature = float(temperature_for(request)) if callable(temperature_for) else request.temperature
    return RequestShape(
        model=model_of(generator, request),
        task=request.task,
        system=request.system,
        prompt=request.prompt,
        fragments=request.fragments,
        temperature=temperature,
        max_tokens=request.max_tokens,
    )


_shape_encoder = msgspec.json.Encoder()


def request_hash(shape: RequestShape) -> str:
    """A stable digest of ``shape``: msgspec encodes a Struct's fields in declaration order and
    floats by their shortest round-tripping repr, so equal requests hash equal in every process."""
    return "sha256:" + hashlib.sha256(_shape_encoder.encode(shape)).hexdigest()
