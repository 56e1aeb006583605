"""The one config file (``oneiros.toml``), its ``ONEIROS_*`` overrides and the source systems' presets."""

from oneiros.config._load import DEFAULT_CONFIG_PATH, ENV_PREFIX, OneirosConfig, env_var, load_config
from oneiros.config._presets import PRESETS, preset_layer

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ENV_PREFIX",
    "PRESETS",
    "OneirosConfig",
    "env_var",
    "load_config",
    "preset_layer",
]
