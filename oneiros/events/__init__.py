"""The event vocabulary: frozen msgspec Structs with stable type names, their codec and upcasters."""

# Importing a module registers its event types (and _upcasters its upcasters) by type name: every
# module is imported here, so whatever imports any part of the vocabulary can decode the whole log.
from oneiros.events import (  # noqa: F401
    _codec,
    _idempotency,
    _items,
    _lineage,
    _liveness,
    _micro,
    _quarantine,
    _recall,
    _sessions,
    _upcasters,
)
from oneiros.events._content import BudgetExhausted, DreamReport, DreamStaged, DreamSuppressed, WakeUpSummary
from oneiros.events._health import HealthAlarmCleared, HealthAlarmRaised
from oneiros.events._observations import DreamObservation
from oneiros.events._outcome import DreamEmpty
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._staging import (
    ConfidenceChanged,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    OutcomeRecorded,
)
from oneiros.events._types import (
    CycleEvent,
    DreamComplete,
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    DreamInterrupted,
    DreamOutput,
    DreamPhase,
    DreamStart,
    EpisodeRecorded,
    Event,
    EventMeta,
    GenerationRecorded,
    GolemCreated,
    ModeChanged,
    registered_events,
)

__all__ = [
    "ActivityRecorded",
    "BudgetExhausted",
    "ConfidenceChanged",
    "CycleEvent",
    "DreamComplete",
    "DreamCounterfactual",
    "DreamEmpty",
    "DreamHypothesis",
    "DreamInsight",
    "DreamInterrupted",
    "DreamObservation",
    "DreamOutput",
    "DreamPhase",
    "DreamReport",
    "DreamStaged",
    "DreamStart",
    "DreamSuppressed",
    "EntryExpired",
    "EntryPromoted",
    "EntryRefuted",
    "EntryReviewed",
    "EntryStaged",
    "EpisodeRecorded",
    "Event",
    "EventMeta",
    "GenerationRecorded",
    "GolemCreated",
    "HealthAlarmCleared",
    "HealthAlarmRaised",
    "ModeChanged",
    "OutcomeRecorded",
    "WakeUpSummary",
    "registered_events",
]
