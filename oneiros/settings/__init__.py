"""Plain frozen settings Structs for every layer, and the vocabularies they name.

The bottom of the package: it imports nothing of oneiros's but the error tree, so the event log,
the machine, the engines, the workers and the config loader can all depend on it. Loading values
from ``oneiros.toml`` and ``ONEIROS_*`` is :mod:`oneiros.config`'s job; these are only the shapes
and defaults, each number named after the source document it comes from.
"""

from oneiros.settings._cycle import (
    DEFAULT_PRICES,
    CycleBudget,
    CycleSettings,
    EngineSettings,
    IntegrationSettings,
    ModelPrice,
    NremSettings,
    OnsetSettings,
    PairSettings,
    RemSettings,
    WakeUpSettings,
)
from oneiros.settings._generator import GeneratorKind, GeneratorSettings, OpenAISettings
from oneiros.settings._health import HealthSettings
from oneiros.settings._phases import PHASES, PhaseSpec, PhaseTable
from oneiros.settings._prompts import DEFAULT_PROMPTS, DEFAULT_SYSTEM, PLACEHOLDERS, PromptSet
from oneiros.settings._races import RaceSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import DEFAULT_SPANS_PATH, LogSettings, RqSettings, SnapshotSettings, TracingSettings
from oneiros.settings._scheduling import (
    BardoTriggerSettings,
    DaemonSettings,
    DailySettings,
    FatigueSettings,
    IntensitySettings,
    IntervalSettings,
    MicroConsolidationSettings,
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
from oneiros.settings._staging import DisplaceBy, StagingSettings
from oneiros.settings._trust import (
    EPISODE_SOURCES,
    TRUST_LEVELS,
    EpisodeSource,
    PromotionPolicy,
    RecallPromotionSettings,
    RecallWeights,
    TrustLevel,
    TrustSettings,
)
from oneiros.settings._vocabulary import (
    BEHAVIORAL_PHASES,
    BardoPhase,
    BardoTrigger,
    BehavioralPhase,
    DreamPhaseName,
    DreamTrigger,
    Mode,
    StagedKind,
    Task,
    Tier,
)

__all__ = [
    "BEHAVIORAL_PHASES",
    "DEFAULT_PRICES",
    "DEFAULT_PROMPTS",
    "DEFAULT_SPANS_PATH",
    "DEFAULT_SYSTEM",
    "EPISODE_SOURCES",
    "PHASES",
    "PLACEHOLDERS",
    "TRUST_LEVELS",
    "BardoPhase",
    "BardoTrigger",
    "BardoTriggerSettings",
    "BehavioralPhase",
    "CycleBudget",
    "CycleSettings",
    "DaemonSettings",
    "DailySettings",
    "DisplaceBy",
    "DreamPhaseName",
    "DreamTrigger",
    "EngineSettings",
    "EpisodeSource",
    "FatigueSettings",
    "GeneratorKind",
    "GeneratorSettings",
    "HealthSettings",
    "IntegrationSettings",
    "IntensitySettings",
    "IntervalSettings",
    "LogSettings",
    "MicroConsolidationSettings",
    "Mode",
    "ModelPrice",
    "NremSettings",
    "OnsetSettings",
    "OpenAISettings",
    "PairSettings",
    "PhaseSpec",
    "PhaseTable",
    "PhaseValues",
    "PreconditionSettings",
    "PromotionPolicy",
    "PromptSet",
    "RaceSettings",
    "RecallPromotionSettings",
    "RecallWeights",
    "RecoverySettings",
    "RemSettings",
    "RqSettings",
    "ScheduleMode",
    "ScheduleSettings",
    "ServerSettings",
    "SleepWindow",
    "SnapshotSettings",
    "StagedKind",
    "StagingSettings",
    "Task",
    "Tier",
    "TracingSettings",
    "TrustLevel",
    "TrustSettings",
    "UrgencySettings",
    "UrgencyWeights",
    "VoluntarySleepSettings",
    "WakeInterruptSettings",
    "WakeUpSettings",
]
