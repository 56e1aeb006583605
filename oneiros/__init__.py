"""oneiros: an event-sourced state machine that gives an autonomous agent a dream state.

The public surface is re-exported here; everything in a module whose name starts with ``_`` is
private and may change without notice.
"""

from oneiros._deps import Deps, FixedClock, SequentialIds
from oneiros._errors import (
    AccessError,
    ConfigError,
    CorruptEvent,
    CycleNotFound,
    EntryNotFound,
    EpisodeFileError,
    EventError,
    Forbidden,
    GolemError,
    GolemExists,
    GolemNotFound,
    IllegalCommand,
    IllegalReview,
    InputError,
    InvalidSetting,
    InvalidStoreURL,
    OneirosError,
    ProjectionConflict,
    ProjectionError,
    StagingError,
    StoreError,
    StreamConflict,
    Unauthenticated,
    UnknownEventType,
    UnknownPreset,
    UnknownProjection,
)
from oneiros.events import Episode, EventStore, Outcome, Recorded, open_store
from oneiros.fsm import Golems, GolemState, Observers, replay
from oneiros.generators import OfflineGenerator
from oneiros.memory import load_episodes
from oneiros.workers import CycleResult, CycleSettings, InProcessExecutor

__all__ = [
    "AccessError",
    "ConfigError",
    "CorruptEvent",
    "CycleNotFound",
    "CycleResult",
    "CycleSettings",
    "Deps",
    "EntryNotFound",
    "Episode",
    "EpisodeFileError",
    "EventError",
    "EventStore",
    "FixedClock",
    "Forbidden",
    "GolemError",
    "GolemExists",
    "GolemNotFound",
    "GolemState",
    "Golems",
    "IllegalCommand",
    "IllegalReview",
    "InProcessExecutor",
    "InputError",
    "InvalidSetting",
    "InvalidStoreURL",
    "Observers",
    "OfflineGenerator",
    "OneirosError",
    "Outcome",
    "ProjectionConflict",
    "ProjectionError",
    "Recorded",
    "SequentialIds",
    "StagingError",
    "StoreError",
    "StreamConflict",
    "Unauthenticated",
    "UnknownEventType",
    "UnknownPreset",
    "UnknownProjection",
    "load_episodes",
    "open_store",
    "replay",
]
__version__ = "0.1.0"
