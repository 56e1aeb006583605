"""oneiros: an event-sourced state machine that gives an autonomous agent a dream state.

The public surface is re-exported here; everything in a module whose name starts with ``_`` is
private and may change without notice.

Names are loaded on first use (PEP 562), so ``import oneiros`` stays cheap: a command that only
reads the log never pays for RQ, Redis, OpenTelemetry or NumPy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        InvalidEvent,
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
    from oneiros.episodes import load_episodes
    from oneiros.events import Episode, EventStore, Outcome, Recorded, open_store
    from oneiros.fsm import Golems, GolemState, Observers, replay
    from oneiros.generators import OfflineGenerator
    from oneiros.settings import CycleSettings
    from oneiros.workers import CycleResult, InProcessExecutor

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
    "InvalidEvent",
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

_HOMES: dict[str, str] = {
    "AccessError": "oneiros._errors",
    "CycleNotFound": "oneiros._errors",
    "Forbidden": "oneiros._errors",
    "Unauthenticated": "oneiros._errors",
    "ConfigError": "oneiros._errors",
    "CorruptEvent": "oneiros._errors",
    "CycleResult": "oneiros.workers",
    "CycleSettings": "oneiros.settings",
    "Deps": "oneiros._deps",
    "EntryNotFound": "oneiros._errors",
    "Episode": "oneiros.events",
    "EpisodeFileError": "oneiros._errors",
    "EventError": "oneiros._errors",
    "EventStore": "oneiros.events",
    "FixedClock": "oneiros._deps",
    "GolemError": "oneiros._errors",
    "GolemExists": "oneiros._errors",
    "GolemNotFound": "oneiros._errors",
    "GolemState": "oneiros.fsm",
    "Golems": "oneiros.fsm",
    "IllegalCommand": "oneiros._errors",
    "IllegalReview": "oneiros._errors",
    "InProcessExecutor": "oneiros.workers",
    "InputError": "oneiros._errors",
    "InvalidEvent": "oneiros._errors",
    "InvalidSetting": "oneiros._errors",
    "InvalidStoreURL": "oneiros._errors",
    "Observers": "oneiros.fsm",
    "OfflineGenerator": "oneiros.generators",
    "OneirosError": "oneiros._errors",
    "Outcome": "oneiros.events",
    "ProjectionConflict": "oneiros._errors",
    "ProjectionError": "oneiros._errors",
    "Recorded": "oneiros.events",
    "SequentialIds": "oneiros._deps",
    "StagingError": "oneiros._errors",
    "StoreError": "oneiros._errors",
    "StreamConflict": "oneiros._errors",
    "UnknownEventType": "oneiros._errors",
    "UnknownPreset": "oneiros._errors",
    "UnknownProjection": "oneiros._errors",
    "load_episodes": "oneiros.episodes",
    "open_store": "oneiros.events",
    "replay": "oneiros.fsm",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'oneiros' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
