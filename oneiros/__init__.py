"""oneiros: an event-sourced state machine that gives an autonomous agent a dream state.

The public surface: these names, and those of ``oneiros.app``, ``oneiros.events``,
``oneiros.settings``, ``oneiros.config``, ``oneiros.generators``, ``oneiros.phases``,
``oneiros.telemetry``, ``oneiros.workers`` and ``oneiros.cli`` (each package's ``__all__``;
tests/test_public_api.py pins them, docs/reference/python.md documents them). Every other
package exports nothing, and a module whose name starts with ``_`` is private and may change
without notice.

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
        AddressUnavailable,
        AmbiguousId,
        ConfigError,
        CorruptEvent,
        CycleNotFound,
        CycleTimeout,
        EntryNotFound,
        EpisodeFileError,
        EventError,
        Forbidden,
        GenerationError,
        GeneratorUnavailable,
        GolemError,
        GolemExists,
        GolemNotFound,
        IdempotencyKeyReused,
        IllegalCommand,
        IllegalReview,
        InputError,
        InvalidEvent,
        InvalidPromptTemplate,
        InvalidSetting,
        InvalidStoreURL,
        MalformedInput,
        MalformedOutput,
        MemoryVersionNotFound,
        NoStore,
        OneirosError,
        ProjectionBehind,
        ProjectionConflict,
        ProjectionError,
        StagingError,
        StoreError,
        StoreUnavailable,
        StreamConflict,
        Unauthenticated,
        UnknownEventType,
        UnknownId,
        UnknownPreset,
        UnknownProjection,
        WorkerError,
    )
    from oneiros.app._oneiros import Oneiros
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path
    from oneiros.events._types import Episode, Outcome
    from oneiros.fsm._golem import GolemState
    from oneiros.fsm._observers import Observers, Transition
    from oneiros.fsm._service import Golems, replay
    from oneiros.generators._offline import OfflineGenerator
    from oneiros.runtime._executor import CycleResult, InProcessExecutor
    from oneiros.settings._cycle import CycleSettings
    from oneiros.store._store import EventStore, Recorded, open_store

__all__ = [
    "AccessError",
    "AddressUnavailable",
    "AmbiguousId",
    "ConfigError",
    "CorruptEvent",
    "CycleNotFound",
    "CycleResult",
    "CycleSettings",
    "CycleTimeout",
    "Deps",
    "EntryNotFound",
    "Episode",
    "EpisodeFileError",
    "EventError",
    "EventStore",
    "FixedClock",
    "Forbidden",
    "GenerationError",
    "GeneratorUnavailable",
    "GolemError",
    "GolemExists",
    "GolemNotFound",
    "GolemState",
    "Golems",
    "IdempotencyKeyReused",
    "IllegalCommand",
    "IllegalReview",
    "InProcessExecutor",
    "InputError",
    "InvalidEvent",
    "InvalidPromptTemplate",
    "InvalidSetting",
    "InvalidStoreURL",
    "MalformedInput",
    "MalformedOutput",
    "MemoryVersionNotFound",
    "NoStore",
    "Observers",
    "OfflineGenerator",
    "Oneiros",
    "OneirosError",
    "Outcome",
    "ProjectionBehind",
    "ProjectionConflict",
    "ProjectionError",
    "Recorded",
    "SequentialIds",
    "StagingError",
    "StoreError",
    "StoreUnavailable",
    "StreamConflict",
    "Transition",
    "Unauthenticated",
    "UnknownEventType",
    "UnknownId",
    "UnknownPreset",
    "UnknownProjection",
    "WorkerError",
    "load_episodes",
    "open_store",
    "replay",
    "sample_episodes_path",
]
__version__ = "0.1.0"

_HOMES: dict[str, str] = {
    "AccessError": "oneiros._errors",
    "AddressUnavailable": "oneiros._errors",
    "AmbiguousId": "oneiros._errors",
    "ConfigError": "oneiros._errors",
    "CorruptEvent": "oneiros._errors",
    "CycleNotFound": "oneiros._errors",
    "CycleResult": "oneiros.runtime._executor",
    "CycleSettings": "oneiros.settings._cycle",
    "CycleTimeout": "oneiros._errors",
    "Deps": "oneiros._deps",
    "EntryNotFound": "oneiros._errors",
    "Episode": "oneiros.events._types",
    "EpisodeFileError": "oneiros._errors",
    "EventError": "oneiros._errors",
    "EventStore": "oneiros.store._store",
    "FixedClock": "oneiros._deps",
    "Forbidden": "oneiros._errors",
    "GenerationError": "oneiros._errors",
    "GeneratorUnavailable": "oneiros._errors",
    "GolemError": "oneiros._errors",
    "GolemExists": "oneiros._errors",
    "GolemNotFound": "oneiros._errors",
    "GolemState": "oneiros.fsm._golem",
    "Golems": "oneiros.fsm._service",
    "IdempotencyKeyReused": "oneiros._errors",
    "IllegalCommand": "oneiros._errors",
    "IllegalReview": "oneiros._errors",
    "InProcessExecutor": "oneiros.runtime._executor",
    "InputError": "oneiros._errors",
    "InvalidEvent": "oneiros._errors",
    "InvalidPromptTemplate": "oneiros._errors",
    "InvalidSetting": "oneiros._errors",
    "InvalidStoreURL": "oneiros._errors",
    "MalformedInput": "oneiros._errors",
    "MalformedOutput": "oneiros._errors",
    "MemoryVersionNotFound": "oneiros._errors",
    "NoStore": "oneiros._errors",
    "Observers": "oneiros.fsm._observers",
    "OfflineGenerator": "oneiros.generators._offline",
    "Oneiros": "oneiros.app._oneiros",
    "OneirosError": "oneiros._errors",
    "Outcome": "oneiros.events._types",
    "ProjectionBehind": "oneiros._errors",
    "ProjectionConflict": "oneiros._errors",
    "ProjectionError": "oneiros._errors",
    "Recorded": "oneiros.store._store",
    "SequentialIds": "oneiros._deps",
    "StagingError": "oneiros._errors",
    "StoreError": "oneiros._errors",
    "StoreUnavailable": "oneiros._errors",
    "StreamConflict": "oneiros._errors",
    "Transition": "oneiros.fsm._observers",
    "Unauthenticated": "oneiros._errors",
    "UnknownEventType": "oneiros._errors",
    "UnknownId": "oneiros._errors",
    "UnknownPreset": "oneiros._errors",
    "UnknownProjection": "oneiros._errors",
    "WorkerError": "oneiros._errors",
    "load_episodes": "oneiros.episodes._episodes",
    "open_store": "oneiros.store._store",
    "replay": "oneiros.fsm._service",
    "sample_episodes_path": "oneiros.episodes._episodes",
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
