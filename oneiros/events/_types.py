"""The event vocabulary: frozen msgspec Structs with stable type names and schema versions.

A type's stored name never depends on its Python module or class name, so code can move without
breaking old logs. Changing a payload's shape means raising its version and registering an
upcaster (see ``docs/schema-evolution.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import msgspec

from oneiros.settings._cycle import CycleSettings
from oneiros.settings._phases import PHASES
from oneiros.settings._scheduling import BardoTriggerSettings
from oneiros.settings._trust import EpisodeSource, TrustLevel
from oneiros.settings._vocabulary import (
    BEHAVIORAL_PHASES,
    BardoPhase,
    BardoTrigger,
    BehavioralPhase,
    DreamPhaseName,
    DreamTrigger,
    Mode,
)

__all__ = [
    "BEHAVIORAL_PHASES",
    "MAX_FIGURE",
    "MAX_TICK",
    "BardoPhase",
    "BardoTrigger",
    "BehavioralPhase",
    "CycleEvent",
    "DreamComplete",
    "DreamCounterfactual",
    "DreamHypothesis",
    "DreamInsight",
    "DreamInterrupted",
    "DreamOutput",
    "DreamPhase",
    "DreamPhaseName",
    "DreamStart",
    "DreamTrigger",
    "Episode",
    "EpisodeRecorded",
    "Event",
    "EventMeta",
    "GenerationRecorded",
    "GolemCreated",
    "InterruptSource",
    "Mode",
    "ModeChanged",
    "Outcome",
    "ReplayBatch",
    "episode_out_of_bounds",
    "event_subtypes",
    "event_type",
    "registered_events",
]

InterruptSource = Literal["owner", "clade_alert", "market_threshold", "death", "failure"]

Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Count = Annotated[int, msgspec.Meta(ge=0)]


# gc=False on the log's value types: they never form reference cycles, and a replay that keeps
# hundreds of thousands of them alive would otherwise pay for the cyclic collector walking them all.
class EventMeta(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What every stored event carries besides its payload."""

    time: datetime
    event_id: str
    golem_id: str
    cycle_id: str | None = None
    causation_id: str | None = None
    correlation_id: str | None = None
    trace: dict[str, str] = msgspec.field(default_factory=dict)


class Event(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Base of every event payload. Subclasses register with :func:`event_type`."""

    type_name: ClassVar[str] = ""
    schema_version: ClassVar[int] = 0


class CycleEvent(Event, frozen=True, kw_only=True):
    """Base of every event that belongs to one dream cycle."""

    cycle_id: NonEmpty


class DreamOutput(CycleEvent, frozen=True, kw_only=True):
    """Base of what a dream phase emits: legal only while the golem dreams, in its own cycle.

    The machine knows outputs by this type, so a new output needs no registration anywhere.
    """


_E = TypeVar("_E", bound=type[Event])
_REGISTRY: dict[str, type[Event]] = {}


def event_type(name: str, version: int = 1) -> Callable[[_E], _E]:
    """Register an event class under a stable ``name`` at schema ``version``."""

    def register(cls: _E) -> _E:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"event type name {name!r} is already registered")
        cls.type_name = name
        cls.schema_version = version
        _REGISTRY[name] = cls
        return cls

    return register


def registered_events() -> dict[str, type[Event]]:
    """Every registered event type by stable name."""
    return dict(_REGISTRY)


def event_subtypes(base: type[Event]) -> tuple[type[Event], ...]:
    """Every registered event type that is a ``base`` (``DreamOutput``: everything a phase may emit)."""
    return tuple(cls for cls in _REGISTRY.values() if issubclass(cls, base))


class Outcome(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What an episode's action came to: the figures NREM's gain term reads."""

    surprise: float = 0.0
    pnl: float = 0.0
    regret: float = 0.0


# Bounds on what one episode may hold. They are part of the schema, not settings: every process
# must be able to read every stored episode, so no process may write one that another refuses.
# Generous for any real agent (Bumblebee's and Bardo's episodes carry a sentence and a few tags).
Summary = Annotated[str, msgspec.Meta(max_length=16_384)]
"""Empty only beside a shared image (a turn that said nothing else): :func:`episode_out_of_bounds`."""
Tag = Annotated[str, msgspec.Meta(max_length=128)]
Tags = Annotated[tuple[Tag, ...], msgspec.Meta(max_length=256)]
Label = Annotated[str, msgspec.Meta(max_length=128)]
Embedding = Annotated[tuple[float, ...], msgspec.Meta(max_length=8_192)]
Caption = Annotated[str, msgspec.Meta(min_length=1, max_length=16_384)]
Ref = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]

MAX_TICK = 4_223_371_679
"""The largest tick an episode may have. An episode with no ``time`` stands at its tick read as
minutes after 1970-01-01 (``episodes.SECONDS_PER_TICK``), and this is the last minute of
9999-12-31, the latest a Python ``datetime`` holds: past it NREM's ordering by time overflows, and
past about 1.5e11 (a millisecond timestamp) so does the tick in microseconds as an int64 column.
Checked where episodes come in (:func:`episode_out_of_bounds`), not when stored ones are read, so
a log written before the bound still replays."""
MAX_FIGURE = 1e12
"""The largest magnitude of an episode's outcome figures and prediction error. They are fractions
and scores near 1 (a PnL of -0.012 is -1.2 %); the engines multiply two of them and sum them over
every episode, which stays finite (far under 1.8e308) at this bound for any number of episodes,
while 1e308 made every cycle's credit infinite. Checked at input like :data:`MAX_TICK`."""


def episode_out_of_bounds(episode: Episode) -> tuple[str, str] | None:
    """``(field, what)`` for the first value of ``episode`` past :data:`MAX_TICK` or
    :data:`MAX_FIGURE` (``("tick", "Expected `int` <= 4223371679")``, in msgspec's words), or
    None. NaN and infinities are out of bounds too, and so is a summary of only whitespace unless
    the episode shared an image: this is the one check every way an episode comes in makes (a
    file, REST, MCP, Python)."""
    if not episode.summary.strip() and episode.shared is None:  # "   " says nothing to dream on
        return "summary", "Expected `str` with a character other than whitespace"
    if not 0 <= episode.tick <= MAX_TICK:
        return "tick", f"Expected `int` {'>= 0' if episode.tick < 0 else f'<= {MAX_TICK}'}"
    o = episode.outcome
    figures = (("outcome.pnl", o.pnl), ("outcome.surprise", o.surprise), ("outcome.regret", o.regret))
    for field, value in (*figures, ("prediction_error", episode.prediction_error)):
        if not -MAX_FIGURE <= value <= MAX_FIGURE:  # NaN compares false: out of bounds too
            bound = f">= {-MAX_FIGURE!r}" if value < 0 else f"<= {MAX_FIGURE!r}"
            finite = math.isfinite(value)  # the store's words for what JSON cannot hold
            return field, f"Expected `float` {bound}" if finite else "Expected a finite number, got NaN or infinity"
    return None


class SharedImage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An image an episode shared (a photo sent in a conversation)."""

    caption: Caption | None = None
    """What it shows, where the source describes it; None for an image nobody described."""

    def said(self) -> str:
        """How the episode's text names it: ``[shares a photo of a dog]``, or ``[shares an image]``."""
        return f"[shares {self.caption or 'an image'}]"


class Episode(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One waking experience, the raw material of replay."""

    tick: Count
    summary: Summary
    time: datetime | None = None
    tags: Tags = ()
    regime: Label = "unknown"
    significance: Unit = 0.5
    arousal: Unit = 0.0
    outcome: Outcome = Outcome()
    prediction_error: float = 0.0
    embedding: Embedding | None = None
    dream_priority: Literal["normal", "high"] = "normal"
    source: EpisodeSource = "unspecified"
    """Where the content came from (``oneiros.settings._trust.EPISODE_SOURCES``); since EpisodeRecorded v3."""
    trust: TrustLevel | None = None
    """How far it is trusted; None for its source's default (``staging.trust.source_trust``)."""
    speaker: Label | None = None
    """Who said or did it (a conversation's speaker, another agent); None for the golem's own doing."""
    ref: Ref | None = None
    """The episode's own id where it came from (a conversation's turn id ``D3:12``, a chat message's
    id), so whatever a dream draws from it can be traced back to the turn."""
    shared: SharedImage | None = None
    """An image the episode shared beside its text; since EpisodeRecorded v4 (before, an importer
    wrote it into the summary as ``[shares ...]``, which the v3 upcaster moves here)."""
    item: str | None = None
    """An agent framework's own record of the episode, as the JSON text it gave (an OpenAI Agents
    SDK session item), kept byte for byte so the framework gets back exactly what it recorded.
    Dreaming reads ``summary``, never this; the event's size cap bounds it. Since EpisodeRecorded v3
    (an added field with a default: old logs decode unchanged)."""

    def said(self) -> str:
        """What the episode says, as everything that reads it as text reads it (recall's index,
        prompts, the engines): its summary, then the image it shared, ``... [shares a photo]``."""
        if self.shared is None:
            return self.summary
        return f"{self.summary} {self.shared.said()}".strip()


@event_type("GolemCreated")
class GolemCreated(Event, frozen=True, kw_only=True):
    """A golem was created: the first event of its stream, with the behavioral phase it starts in."""

    name: str = ""
    behavioral_phase: BehavioralPhase = "stable"


@event_type("ModeChanged")
class ModeChanged(Event, frozen=True, kw_only=True):
    """The golem moved between Waking, Dreaming and Dying; ``reason`` says why where one is known."""

    from_mode: Mode
    to_mode: Mode
    reason: str = ""


@event_type("EpisodeRecorded", version=4)
class EpisodeRecorded(Event, frozen=True, kw_only=True):
    """An episode was recorded. v3: the episode names its ``source`` and ``trust``; v4: an image it
    shared is its ``shared`` field, not a marker in its summary."""

    episode: Episode


_BARDO_TRIGGERS = BardoTriggerSettings()


@event_type("DreamStart", version=4)
class DreamStart(CycleEvent, frozen=True, kw_only=True):
    """A cycle began. ``trigger`` is the scheduler's own; ``bardo_trigger`` the same cause in Bardo's
    event contract (left out, it follows the default mapping of ``trigger``). ``settings``
    are what every phase of the cycle runs with, on whichever process; None only for cycles
    recorded before v3, whose phases run with the runner's own settings. Since v4 its budget's
    ``cycle_tokens``, ``cycle_usd`` and ``window_usd`` are the caps the cycle ran under at any tier."""

    trigger: DreamTrigger
    bardo_trigger: BardoTrigger | None = None
    detail: str = ""
    settings: CycleSettings | None = None

    def __post_init__(self) -> None:
        if self.bardo_trigger is None:
            msgspec.structs.force_setattr(self, "bardo_trigger", _BARDO_TRIGGERS.of(self.trigger))


@event_type("DreamPhase", version=2)
class DreamPhase(CycleEvent, frozen=True, kw_only=True):
    """A phase began, with its budget; ``bardo_phase`` names it as Bardo does, which is also
    its state in the machine. Left out, it is the canonical phase table's name for ``phase``; a
    phase from another table must name it."""

    phase: DreamPhaseName
    budget_tokens: Count
    bardo_phase: BardoPhase | None = None

    def __post_init__(self) -> None:
        if self.bardo_phase is None:
            spec = PHASES.get(self.phase)
            if spec is None:
                raise ValueError(f"phase {self.phase!r} is not in the phase table: name its bardo_phase")
            msgspec.structs.force_setattr(self, "bardo_phase", spec.state)


@event_type("ReplayBatch")
class ReplayBatch(DreamOutput, frozen=True, kw_only=True):
    """NREM replayed these episodes together and found this pattern in them."""

    episode_ticks: tuple[int, ...]
    pattern: str
    direction: Literal["forward", "reverse", "perturbed"] = "forward"


@event_type("DreamHypothesis")
class DreamHypothesis(DreamOutput, frozen=True, kw_only=True):
    """REM imagined a hypothesis from the episode at ``seed_episode_tick``: staged for validation, never a fact."""

    hypothesis: NonEmpty
    seed_episode_tick: int


@event_type("DreamCounterfactual")
class DreamCounterfactual(DreamOutput, frozen=True, kw_only=True):
    """REM asked "what if" of an episode: the alternative, what would likely have followed and the lesson."""

    hypothesis: NonEmpty
    outcome: str
    lesson: str
    confidence: Unit


@event_type("DreamInsight")
class DreamInsight(DreamOutput, frozen=True, kw_only=True):
    """A pattern that held across replay batches, crystallized as a staged insight."""

    insight: NonEmpty
    source_episode_ticks: tuple[int, ...] = ()
    confidence: Unit = 0.3


@event_type("DreamComplete")
class DreamComplete(CycleEvent, frozen=True, kw_only=True):
    """The cycle's work is done: what it produced, counted from its own output events by the fold replay uses."""

    episodes_replayed: Count = 0
    counterfactuals_generated: Count = 0
    insights_crystallized: Count = 0
    heuristics_proposed: Count = 0
    episodes_depotentiated: Count = 0
    playbook_edits: Count = 0


@event_type("DreamInterrupted")
class DreamInterrupted(CycleEvent, frozen=True, kw_only=True):
    """The cycle ended early: who ended it (``source``), why, and in which phase."""

    source: InterruptSource
    reason: str = ""
    phase: DreamPhaseName | None = None


@event_type("GenerationRecorded", version=2)
class GenerationRecorded(DreamOutput, frozen=True, kw_only=True):
    """A generator request and its response, so replay and re-runs never call the model again.

    v2 keys the response by the hash of the exact request as well as by ``call_key``, and records
    what the hash covers (requested model, task, system prompt), so a changed prompt, model or
    setting is a miss that names its cause, never stale text. ``text`` and the token counts are
    what was kept: at most the call's reservation (see BudgetOverrun for what a server claimed).
    """

    phase: DreamPhaseName
    call_key: NonEmpty
    model: str
    """The model the server says answered (servers answer with dated names)."""
    prompt: str
    temperature: float
    """The temperature sent (a generator's override included)."""
    max_tokens: Count
    text: str
    tokens_in: Count
    tokens_out: Count
    cost_usd: float = 0.0
    request_hash: str
    """``generators.request_hash`` of the request as sent; "" for a v1 record (see the upcaster)."""
    requested_model: str = ""
    task: str = ""
    system: str = ""


def payload_fields(event: Event) -> dict[str, Any]:
    """An event's payload as plain builtins (for JSON output)."""
    out: dict[str, Any] = msgspec.to_builtins(event)
    return out
