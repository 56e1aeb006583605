"""The generator a cycle's settings name."""

from __future__ import annotations

from collections.abc import Mapping

from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import Generator
from oneiros.settings import GeneratorSettings

__all__ = ["make_generator"]


def make_generator(settings: GeneratorSettings, *, seed: int = 0, env: Mapping[str, str] | None = None) -> Generator:
    """``cycle.generator`` as a generator: offline (seeded by ``seed``, the cycle's) or
    OpenAI-compatible (its key read from ``env``, default the process environment)."""
    if settings.kind == "openai":
        return OpenAIGenerator.from_settings(settings, env=env)
    return OfflineGenerator(seed=seed)
