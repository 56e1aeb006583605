"""Which generator a cycle writes with, and how to reach an OpenAI-compatible server.

Plain data, so the config loader can fill it from ``oneiros.toml`` / ``ONEIROS_*`` and a cycle can
record it. The API key is never a setting: only the *name* of the environment variable that holds
it is, so the key cannot reach the log, a job payload or a span.
"""

from __future__ import annotations

import math

import msgspec

from oneiros._errors import InvalidSetting

__all__ = ["GeneratorKind", "GeneratorSettings", "OpenAISettings"]

GeneratorKind = str
"""``offline``, ``openai``, ``sleep:SECONDS`` or ``module:factory`` (see :attr:`GeneratorSettings.kind`)."""


def _default_models() -> dict[str, str]:
    return {"core": "gpt-4o-mini", "hardened": "gpt-4o"}


class OpenAISettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where and how to reach an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
    Ollama, LiteLLM, llama.cpp's server…)."""

    base_url: str = "https://api.openai.com/v1"
    """The server's ``/v1`` URL; a local or self-hosted server works the same way."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key. ``""`` for a server that needs no key."""
    models: dict[str, str] = msgspec.field(default_factory=_default_models)
    """Model per tier. Bardo runs [CORE] on a Haiku-class T0 model and [HARDENED] on T1/T2;
    Ethos dreams on a cheaper ``model.dreaming`` tier. These defaults are the OpenAI
    equivalents (not from the source documents)."""
    phase_models: dict[str, str] = msgspec.field(default_factory=dict)
    """Per-phase overrides, e.g. ``{"rem": "gpt-4o"}`` (Bardo: REM benefits from T2)."""
    temperature: float | None = None
    """Send this temperature on every call instead of each phase's own (None keeps the phases'
    temperatures: Bumblebee's 1.15 for the dream, Bardo's 0.4 judge...)."""
    timeout_s: float = 30.0
    """Seconds one attempt may take to answer (the SDK's read/write/pool timeout)."""
    connect_timeout_s: float = 5.0
    """Seconds to open the connection (the SDK's default)."""
    retries: int = 2
    """Retries after the first attempt, for timeouts, connection errors, 408/409/429 and 5xx
    (the SDK's own policy: exponential backoff with jitter, honouring ``Retry-After``)."""
    max_body_bytes: int = 1_048_576
    """A response body larger than this is not read past it and the call fails: a lying or broken
    server cannot make a worker hold, parse or store megabytes (oneiros default)."""

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise InvalidSetting("cycle.generator.openai.base_url", self.base_url, "an http:// or https:// URL")
        for name in ("timeout_s", "connect_timeout_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidSetting(f"cycle.generator.openai.{name}", value, "a finite number of seconds > 0")
        if self.temperature is not None and not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            raise InvalidSetting("cycle.generator.openai.temperature", self.temperature, "a number from 0 to 2")
        if self.retries < 0:
            raise InvalidSetting("cycle.generator.openai.retries", self.retries, "an integer >= 0")
        if self.max_body_bytes < 1024:
            raise InvalidSetting("cycle.generator.openai.max_body_bytes", self.max_body_bytes, "an integer >= 1024")


class GeneratorSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The generator a cycle writes with."""

    kind: GeneratorKind = "offline"
    """``offline`` (deterministic, no network: the [CORE] rule-based path), ``openai`` (any
    OpenAI-compatible server, as ``openai`` below says), ``sleep:SECONDS`` (offline text after a
    simulated model latency, for load tests) or ``module:factory`` (a callable returning a generator)."""
    openai: OpenAISettings = OpenAISettings()

    def __post_init__(self) -> None:
        if self.kind not in ("offline", "openai") and ":" not in self.kind:
            raise InvalidSetting("cycle.generator.kind", self.kind, "offline, openai, sleep:SECONDS or module:factory")
