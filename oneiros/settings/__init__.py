"""Plain frozen settings Structs for every layer, and the vocabularies they name.

The bottom of the package: it imports nothing of oneiros's but the error tree, so the event log,
the machine, the engines, the workers and the config loader can all depend on it. Loading values
from ``oneiros.toml`` and ``ONEIROS_*`` is :mod:`oneiros.config`'s job; these are only the shapes
and defaults, each number named after the source document it comes from.
"""

from oneiros.settings._cycle import (
    DEFAULT_PRICES,
    PHASE_SHARES,
    CycleBudget,
    CycleSettings,
    EngineSettings,
    IntegrationSettings,
    ModelPrice,
    NremSettings,
    OnsetSettings,
    PairSettings,
    RemSettings,
)
from oneiros.settings._prompts import DEFAULT_PROMPTS, DEFAULT_SYSTEM, PLACEHOLDERS, PromptSet
from oneiros.settings._runtime import DEFAULT_SPANS_PATH, RqSettings, TracingSettings
from oneiros.settings._scheduling import (
    DaemonSettings,
    DailySettings,
    FatigueSettings,
    IntensitySettings,
    IntervalSettings,
    PhaseValues,
    PreconditionSettings,
    ScheduleMode,
    ScheduleSettings,
    SleepWindow,
    UrgencySettings,
    UrgencyWeights,
    VoluntarySleepSettings,
    WakeInterruptSettings,
)
from oneiros.settings._server import ServerSettings
from oneiros.settings._vocabulary import (
    BEHAVIORAL_PHASES,
    DREAM_PHASES,
    BehavioralPhase,
    DreamPhaseName,
    Mode,
    Task,
    Tier,
)

__all__ = [
    "BEHAVIORAL_PHASES",
    "DEFAULT_PRICES",
    "DEFAULT_PROMPTS",
    "DEFAULT_SPANS_PATH",
    "DEFAULT_SYSTEM",
    "DREAM_PHASES",
    "PHASE_SHARES",
    "PLACEHOLDERS",
    "BehavioralPhase",
    "CycleBudget",
    "CycleSettings",
    "DaemonSettings",
    "DailySettings",
    "DreamPhaseName",
    "EngineSettings",
    "FatigueSettings",
    "IntegrationSettings",
    "IntensitySettings",
    "IntervalSettings",
    "Mode",
    "ModelPrice",
    "NremSettings",
    "OnsetSettings",
    "PairSettings",
    "PhaseValues",
    "PreconditionSettings",
    "PromptSet",
    "RemSettings",
    "RqSettings",
    "ScheduleMode",
    "ScheduleSettings",
    "ServerSettings",
    "SleepWindow",
    "Task",
    "Tier",
    "TracingSettings",
    "UrgencySettings",
    "UrgencyWeights",
    "VoluntarySleepSettings",
    "WakeInterruptSettings",
]
