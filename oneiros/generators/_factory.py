"""The generator a cycle's settings name."""

from __future__ import annotations

import os
from collections.abc import Mapping

from oneiros._errors import ConfigError
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import Generator
from oneiros.settings._generator import GeneratorSettings

__all__ = ["check_api_key", "make_generator"]


def make_generator(settings: GeneratorSettings, *, seed: int = 0, env: Mapping[str, str] | None = None) -> Generator:
    """``cycle.generator`` as a generator: offline (seeded by ``seed``, the cycle's) or
    OpenAI-compatible (its key read from ``env``, default the process environment)."""
    if settings.kind == "openai":
        return OpenAIGenerator.from_settings(settings, env=env)
    return OfflineGenerator(seed=seed)


def check_api_key(settings: GeneratorSettings, doing: str, *, env: Mapping[str, str] | None = None) -> None:
    """ConfigError when ``settings`` name the openai generator and its key is not set in ``env``
    (default the process environment); ``doing`` names the command in the message.

    Without its key every call fails and the cycle records fallbacks: a cycle that looks run and
    dreamt nothing. Callers say so before anything is written."""
    key_env = settings.openai.api_key_env
    environ = os.environ if env is None else env
    if settings.kind == "openai" and key_env and not environ.get(key_env):
        raise ConfigError(f"cannot {doing} with the openai generator: no API key, ${key_env} is not set")
