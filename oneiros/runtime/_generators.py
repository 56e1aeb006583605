"""The generator a setting names, loaded: apart from the process module, so the executor (which
loads a cycle's recorded generator) imports it without importing the process's builders, which
import the executor."""

from __future__ import annotations

import importlib
import time
from typing import Any

from oneiros._errors import ConfigError
from oneiros.generators._factory import make_generator
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest, Generator
from oneiros.settings._generator import GeneratorSettings

__all__ = ["DelayedGenerator", "load_generator"]


class DelayedGenerator:
    """Another generator's answers, each after ``delay`` seconds: a model call's latency, simulated."""

    def __init__(self, inner: Generator, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    def __getattr__(self, name: str) -> Any:
        # The wrapped generator's model, model_for and max_tokens_in, which budgets and prices read.
        return getattr(self.inner, name)

    def generate(self, request: GenerationRequest) -> Generation:
        time.sleep(self.delay)
        return self.inner.generate(request)


def load_generator(settings: GeneratorSettings | str, seed: int = 0) -> Generator:
    """The generator ``settings`` name (see :attr:`GeneratorSettings.kind`); a bare kind takes the
    other generator settings' defaults."""
    if isinstance(settings, str):
        settings = GeneratorSettings(kind=settings)
    spec = settings.kind
    if spec in ("offline", "openai"):
        return make_generator(settings, seed=seed)
    if spec.startswith("sleep:"):
        try:
            delay = float(spec.removeprefix("sleep:"))
        except ValueError:
            raise ConfigError(
                f"generator {spec!r}: the delay after 'sleep:' must be seconds, as in sleep:0.2"
            ) from None
        return DelayedGenerator(OfflineGenerator(seed=seed), delay)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"generator {spec!r}: expected offline, openai, sleep:SECONDS or module:factory")
    try:
        factory: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"generator {spec!r}: cannot import it: {exc}") from None
    generator = factory()
    if not callable(getattr(generator, "generate", None)):
        raise ConfigError(f"generator {spec!r}: {attr}() returned an object without generate()")
    out: Generator = generator
    return out
