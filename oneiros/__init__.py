"""oneiros: an event-sourced state machine that gives an autonomous agent a dream state.

The public surface: these names, and those of ``oneiros.app``, ``oneiros.events``,
``oneiros.settings``, ``oneiros.config``, ``oneiros.generators``, ``oneiros.phases``,
``oneiros.telemetry``, ``oneiros.workers`` and ``oneiros.cli`` (each package's ``__all__``;
tests/test_public_api.py pins them, docs/reference/python.md documents them). Every other
package exports nothing, and a module whose name starts with ``_`` is private and may change
without notice.

Names are loaded on first use (PEP 562), so ``import oneiros`` stays cheap: a command that only
reads the log never pays for RQ, Redis, OpenTelemetry or NumPy. The names are listed once, in
``_HOMES`` with the module each comes from, and every class of the error tree by rule (each name of
``oneiros._errors.__all__``); the imports type checkers and the API reference read say the same,
which tests/test_public_api.py holds them to.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oneiros._deps import Deps as Deps
    from oneiros._deps import FixedClock as FixedClock
    from oneiros._deps import SequentialIds as SequentialIds
    from oneiros._errors import *  # noqa: F403 - the error tree, by rule
    from oneiros.app._oneiros import Oneiros as Oneiros
    from oneiros.episodes._episodes import load_episodes as load_episodes
    from oneiros.episodes._episodes import sample_episodes_path as sample_episodes_path
    from oneiros.events._types import Episode as Episode
    from oneiros.events._types import Outcome as Outcome
    from oneiros.fsm._golem import GolemState as GolemState
    from oneiros.fsm._observers import Observers as Observers
    from oneiros.fsm._observers import Transition as Transition
    from oneiros.fsm._service import Golems as Golems
    from oneiros.fsm._service import replay as replay
    from oneiros.generators._offline import OfflineGenerator as OfflineGenerator
    from oneiros.runtime._executor import CycleResult as CycleResult
    from oneiros.runtime._executor import InProcessExecutor as InProcessExecutor
    from oneiros.settings._cycle import CycleSettings as CycleSettings
    from oneiros.store._store import EventStore as EventStore
    from oneiros.store._store import Recorded as Recorded
    from oneiros.store._store import open_store as open_store

__version__ = "0.1.0"

_ERRORS = "oneiros._errors"
"""The error tree's module: each name of its ``__all__`` is public here too."""

_HOMES: dict[str, str] = {
    "Deps": "oneiros._deps",
    "FixedClock": "oneiros._deps",
    "SequentialIds": "oneiros._deps",
    "Oneiros": "oneiros.app._oneiros",
    "load_episodes": "oneiros.episodes._episodes",
    "sample_episodes_path": "oneiros.episodes._episodes",
    "Episode": "oneiros.events._types",
    "Outcome": "oneiros.events._types",
    "GolemState": "oneiros.fsm._golem",
    "Observers": "oneiros.fsm._observers",
    "Transition": "oneiros.fsm._observers",
    "Golems": "oneiros.fsm._service",
    "replay": "oneiros.fsm._service",
    "OfflineGenerator": "oneiros.generators._offline",
    "CycleResult": "oneiros.runtime._executor",
    "InProcessExecutor": "oneiros.runtime._executor",
    "CycleSettings": "oneiros.settings._cycle",
    "EventStore": "oneiros.store._store",
    "Recorded": "oneiros.store._store",
    "open_store": "oneiros.store._store",
}
"""Every public name beside the error tree, with the module it comes from."""


def _error_names() -> list[str]:
    names: list[str] = importlib.import_module(_ERRORS).__all__
    return names


def __getattr__(name: str) -> Any:
    if name == "__all__":  # made on first use too: the error tree's names are its module's to list
        public = sorted([*_HOMES, *_error_names()])
        globals()["__all__"] = public
        return public
    home = _HOMES.get(name)
    if home is None:
        if name.startswith("__") or name not in _error_names():
            raise AttributeError(f"module 'oneiros' has no attribute {name!r}")
        home = _ERRORS
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES, *_error_names()})
