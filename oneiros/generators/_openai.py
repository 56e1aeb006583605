"""An OpenAI-compatible chat-completions generator, on the standard library alone.

It speaks ``POST {base_url}/chat/completions`` to any server that implements the protocol (OpenAI,
vLLM, Ollama, LiteLLM…). The model is chosen per tier (Ethos 003_*'s cheaper ``model.dreaming``
tier; Bardo 001_*'s [CORE] T0 and [HARDENED] T1/T2) and may be overridden per phase. Transport
failures are retried with exponential backoff; what still fails raises GeneratorUnavailable, which
the phase runner records as a failed call.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from oneiros._errors import ConfigError, GeneratorUnavailable
from oneiros.generators._protocol import Generation, GenerationRequest

__all__ = ["OpenAIConfig", "OpenAIGenerator"]


class OpenAIConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Where and how to reach an OpenAI-compatible endpoint."""

    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key; the key itself is never stored in config."""
    models: dict[str, str] = msgspec.field(default_factory=lambda: {"core": "gpt-4o-mini", "hardened": "gpt-4o"})
    """Model per tier. Bardo 001_* runs [CORE] on a Haiku-class T0 model and [HARDENED] on T1/T2;
    these defaults are the OpenAI equivalents (not from the source documents)."""
    phase_models: dict[str, str] = msgspec.field(default_factory=dict)
    """Per-phase overrides, e.g. ``{"rem": "gpt-4o"}`` (Bardo 001_*: REM benefits from T2)."""
    timeout_s: float = 30.0
    retries: int = 2
    """Retries after the first attempt, for timeouts, 429 and 5xx answers."""
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0


class OpenAIGenerator:
    """A Generator over HTTP. Needs no package beyond the standard library."""

    def __init__(
        self,
        config: OpenAIConfig | None = None,
        *,
        env: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config or OpenAIConfig()
        environ = os.environ if env is None else env
        self._api_key = environ.get(self.config.api_key_env, "")
        self._sleep = sleep
        self.requests_made = 0

    @property
    def model(self) -> str:
        return self.config.models.get("core", "unknown")

    def model_for(self, request: GenerationRequest) -> str:
        config = self.config
        model = config.phase_models.get(request.phase) or config.models.get(request.tier)
        if not model:
            raise ConfigError(f"no model configured for tier {request.tier!r} or phase {request.phase!r}")
        return model

    def generate(self, request: GenerationRequest) -> Generation:
        model = self.model_for(request)
        messages = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        body = json.dumps(
            {"model": model, "messages": messages, "temperature": request.temperature, "max_tokens": request.max_tokens}
        ).encode()
        attempts = self.config.retries + 1
        reason = ""
        for attempt in range(attempts):
            if attempt:
                self._sleep(min(self.config.backoff_max_s, self.config.backoff_s * 2 ** (attempt - 1)))
            try:
                payload = self._post(body)
            except _Retryable as exc:
                reason = str(exc)
                continue
            except _Fatal as exc:
                raise GeneratorUnavailable(request.call_key, model, attempt + 1, str(exc)) from None
            return _generation(payload, model, request, attempt + 1)
        raise GeneratorUnavailable(request.call_key, model, attempts, reason)

    def _post(self, body: bytes) -> Any:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        self.requests_made += 1
        try:
            with urllib.request.urlopen(req, timeout=self.config.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            message = f"HTTP {exc.code} from {url}"
            if exc.code == 429 or exc.code >= 500:
                raise _Retryable(message) from None
            raise _Fatal(message) from None
        except TimeoutError as exc:
            raise _Retryable(f"timed out after {self.config.timeout_s}s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                raise _Retryable(f"timed out after {self.config.timeout_s}s") from None
            raise _Retryable(f"cannot reach {url}: {exc.reason}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise _Retryable("the response is not JSON") from None


class _Retryable(Exception):
    pass


class _Fatal(Exception):
    pass


def _generation(payload: Any, model: str, request: GenerationRequest, attempts: int) -> Generation:
    try:
        text = payload["choices"][0]["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("content is not a string")
    except (KeyError, IndexError, TypeError) as exc:
        raise GeneratorUnavailable(
            request.call_key, model, attempts, f"no completion in the response ({exc})"
        ) from None
    usage = payload.get("usage") or {}
    tokens_in = int(usage.get("prompt_tokens") or max(1, len(request.system + request.prompt) // 4))
    tokens_out = int(usage.get("completion_tokens") or max(1, len(text) // 4))
    return Generation(text=text, model=str(payload.get("model") or model), tokens_in=tokens_in, tokens_out=tokens_out)
