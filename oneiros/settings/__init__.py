"""Plain frozen settings Structs for every layer, and the vocabularies they name.

The bottom of the package: it imports nothing of oneiros's but the error tree, so the event log,
the machine, the engines, the workers and the config loader can all depend on it. Loading values
from ``oneiros.toml`` and ``ONEIROS_*`` is :mod:`oneiros.config`'s job; these are only the shapes
and defaults, each number citing the source system it comes from (docs/sources.md).
"""

from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings, ModelPrice
from oneiros.settings._generator import GeneratorSettings, OpenAISettings
from oneiros.settings._health import HealthSettings
from oneiros.settings._memory_block import MemoryBlockSettings
from oneiros.settings._phases import PHASES, PhaseSpec, PhaseTable
from oneiros.settings._prompts import PromptSet
from oneiros.settings._races import RaceSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import LogSettings, RqSettings, SnapshotSettings, TracingSettings
from oneiros.settings._scheduling import DaemonSettings, PhaseValues, ScheduleSettings
from oneiros.settings._server import ServerSettings
from oneiros.settings._staging import StagingSettings
from oneiros.settings._vocabulary import Tier

__all__ = [
    "PHASES",
    "CycleBudget",
    "CycleSettings",
    "DaemonSettings",
    "EngineSettings",
    "GeneratorSettings",
    "HealthSettings",
    "LogSettings",
    "MemoryBlockSettings",
    "ModelPrice",
    "OpenAISettings",
    "PhaseSpec",
    "PhaseTable",
    "PhaseValues",
    "PromptSet",
    "RaceSettings",
    "RecoverySettings",
    "RqSettings",
    "ScheduleSettings",
    "ServerSettings",
    "SnapshotSettings",
    "StagingSettings",
    "Tier",
    "TracingSettings",
]
