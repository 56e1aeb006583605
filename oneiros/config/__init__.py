"""The one config (``oneiros.toml``, ``ONEIROS_*``, flags) every process reads, and the source systems' presets."""

from oneiros.config._load import (
    DEFAULT_CONFIG_PATH,
    DEFAULT_STORE_URL,
    ENV_PREFIX,
    Flags,
    OneirosConfig,
    env_var,
    explain_config,
    load_config,
)
from oneiros.config._presets import PRESETS, preset_layer

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_STORE_URL",
    "ENV_PREFIX",
    "PRESETS",
    "Flags",
    "OneirosConfig",
    "env_var",
    "explain_config",
    "load_config",
    "preset_layer",
]
