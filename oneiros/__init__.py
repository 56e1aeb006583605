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
    from oneiros.app._oneiros import Oneiros
    from oneiros.episodes._episodes import load_episodes
    from oneiros.events._types import Episode, Outcome
    from oneiros.fsm._golem import GolemState
    from oneiros.fsm._observers import Observers
    from oneiros.fsm._service import Golems, replay
    from oneiros.generators._offline import OfflineGenerator
    from oneiros.runtime._executor import CycleResult, InProcessExecutor
    from oneiros.settings._cycle import CycleSettings
    from oneiros.store._store import EventStore, Recorded, open_store

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
    "Oneiros",
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
    "Oneiros": "oneiros.app._oneiros",
    "AccessError": "oneiros._errors",
    "CycleNotFound": "oneiros._errors",
    "Forbidden": "oneiros._errors",
    "Unauthenticated": "oneiros._errors",
    "ConfigError": "oneiros._errors",
    "CorruptEvent": "oneiros._errors",
    "CycleResult": "oneiros.runtime._executor",
    "CycleSettings": "oneiros.settings._cycle",
    "Deps": "oneiros._deps",
    "EntryNotFound": "oneiros._errors",
    "Episode": "oneiros.events._types",
    "EpisodeFileError": "oneiros._errors",
    "EventError": "oneiros._errors",
    "EventStore": "oneiros.store._store",
    "FixedClock": "oneiros._deps",
    "GolemError": "oneiros._errors",
    "GolemExists": "oneiros._errors",
    "GolemNotFound": "oneiros._errors",
    "GolemState": "oneiros.fsm._golem",
    "Golems": "oneiros.fsm._service",
    "IllegalCommand": "oneiros._errors",
    "IllegalReview": "oneiros._errors",
    "InProcessExecutor": "oneiros.runtime._executor",
    "InputError": "oneiros._errors",
    "InvalidEvent": "oneiros._errors",
    "InvalidSetting": "oneiros._errors",
    "InvalidStoreURL": "oneiros._errors",
    "Observers": "oneiros.fsm._observers",
    "OfflineGenerator": "oneiros.generators._offline",
    "OneirosError": "oneiros._errors",
    "Outcome": "oneiros.events._types",
    "ProjectionConflict": "oneiros._errors",
    "ProjectionError": "oneiros._errors",
    "Recorded": "oneiros.store._store",
    "SequentialIds": "oneiros._deps",
    "StagingError": "oneiros._errors",
    "StoreError": "oneiros._errors",
    "StreamConflict": "oneiros._errors",
    "UnknownEventType": "oneiros._errors",
    "UnknownPreset": "oneiros._errors",
    "UnknownProjection": "oneiros._errors",
    "load_episodes": "oneiros.episodes._episodes",
    "open_store": "oneiros.store._store",
    "replay": "oneiros.fsm._service",
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
