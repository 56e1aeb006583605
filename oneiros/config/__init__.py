"""The one config (``oneiros.toml``, ``ONEIROS_*``, flags) every process reads, and the source systems' presets."""

from oneiros.config._load import OneirosConfig, load_config

__all__ = [
    "OneirosConfig",
    "load_config",
]
