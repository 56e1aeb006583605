"""The one config file (``oneiros.toml``), its ``ONEIROS_*`` overrides and the source systems' presets."""

from oneiros.config._load import DEFAULT_CONFIG_PATH, ENV_PREFIX, OneirosConfig, env_var, load_config
from oneiros.config._presets import PRESETS, preset_layer
from oneiros.config._server import ServerSettings
from oneiros.config._settings import (
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

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ENV_PREFIX",
    "PRESETS",
    "DaemonSettings",
    "DailySettings",
    "FatigueSettings",
    "IntensitySettings",
    "IntervalSettings",
    "OneirosConfig",
    "PhaseValues",
    "PreconditionSettings",
    "ScheduleMode",
    "ScheduleSettings",
    "ServerSettings",
    "SleepWindow",
    "UrgencySettings",
    "UrgencyWeights",
    "VoluntarySleepSettings",
    "WakeInterruptSettings",
    "env_var",
    "load_config",
    "preset_layer",
]
