"""An OpenAI-compatible chat-completions generator on the official ``openai`` SDK.

Why the SDK and not plain httpx: the SDK already carries the transport policy a model call needs,
tested against the real API: retries with exponential backoff and jitter on timeouts, connection
errors, 408/409/429 and 5xx, ``Retry-After`` and ``x-should-retry`` honoured, idempotency keys kept
across retries, connect and read timeouts, typed errors. httpx alone would mean writing that retry
loop again. What the SDK does not bound is the size of a response, so the body is read through its
streaming-response API and the call fails past ``max_body_bytes`` (a lying server cannot make a
worker hold megabytes); the JSON is then parsed here, leniently, because OpenAI-compatible servers
(vLLM, Ollama, LiteLLM...) differ in what else they put in the envelope.

The model is chosen per tier (Ethos's cheaper ``model.dreaming`` tier; Bardo's [CORE]
T0 and [HARDENED] T1/T2) and may be overridden per phase. The API key comes from the environment
only and is never put in an error message, an event or a span. The SDK is imported when the first
request is made, so importing oneiros (and running offline) never pays for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import msgspec

from oneiros._errors import ConfigError, GeneratorUnavailable
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.settings._generator import GeneratorSettings, OpenAISettings

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = ["OpenAIConfig", "OpenAIGenerator"]

OpenAIConfig = OpenAISettings
"""The settings' earlier name, kept for callers that still use it."""

# A server that needs no key (a local vLLM or Ollama) still gets a bearer header from the SDK.
_NO_KEY = "no-key"
_RETRIED_STATUS = frozenset({408, 409, 429})


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message | None = None


class _Completion(msgspec.Struct):
    choices: list[_Choice] = msgspec.field(default_factory=list)
    model: str | None = None
    usage: _Usage | None = None


_completion = msgspec.json.Decoder(_Completion)


class OpenAIGenerator:
    """A Generator over HTTP to any server that speaks ``POST {base_url}/chat/completions``."""

    def __init__(self, settings: OpenAISettings | None = None, *, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings or OpenAISettings()
        environ = os.environ if env is None else env
        name = self.settings.api_key_env
        # Held privately and only handed to the SDK's client; never formatted into any text.
        self._api_key = (environ.get(name) or None) if name else _NO_KEY
        self._client: OpenAI | None = None

    @classmethod
    def from_settings(
        cls, settings: GeneratorSettings | OpenAISettings, *, env: Mapping[str, str] | None = None
    ) -> OpenAIGenerator:
        """The generator a cycle's settings name (``cycle.generator.openai``)."""
        return cls(settings.openai if isinstance(settings, GeneratorSettings) else settings, env=env)

    @property
    def model(self) -> str:
        return self.settings.models.get("core", "unknown")

    def model_for(self, request: GenerationRequest) -> str:
        settings = self.settings
        model = settings.phase_models.get(request.phase) or settings.models.get(request.tier)
        if not model:
            raise ConfigError(f"no model configured for tier {request.tier!r} or phase {request.phase!r}")
        return model

    def temperature_for(self, request: GenerationRequest) -> float:
        override = self.settings.temperature
        return request.temperature if override is None else override

    def _connect(self) -> OpenAI:
        if self._client is None:
            try:
                import openai  # noqa: PLC0415 - a second of import time, paid only by cycles that call a model
            except ImportError:
                raise ConfigError(
                    "the openai generator needs the openai package: pip install 'oneiros[openai]'"
                ) from None
            s = self.settings
            self._client = openai.OpenAI(
                api_key=self._api_key,
                base_url=s.base_url,
                timeout=openai.Timeout(s.timeout_s, connect=s.connect_timeout_s),
                max_retries=s.retries,
            )
        return self._client

    def generate(self, request: GenerationRequest) -> Generation:
        model = self.model_for(request)
        if self._api_key is None:
            raise GeneratorUnavailable(
                request.call_key, model, 0, f"no API key: ${self.settings.api_key_env} is not set"
            )
        messages: list[dict[str, str]] = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        raw = self._post(request, model, messages)
        return self._generation(raw, model, request)

    def _post(self, request: GenerationRequest, model: str, messages: list[dict[str, str]]) -> bytes:
        import openai  # noqa: PLC0415 - already loaded by _connect; the exception types live there

        client = self._connect()
        s = self.settings
        retried = s.retries + 1
        try:
            with client.chat.completions.with_streaming_response.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]  # plain dicts are what the SDK sends
                temperature=self.temperature_for(request),
                max_tokens=request.max_tokens,
            ) as response:
                return _read(response.iter_bytes(), s)
        except _Unusable as exc:
            raise GeneratorUnavailable(request.call_key, model, exc.attempts, exc.reason) from None
        except openai.APITimeoutError:
            reason, attempts = f"timed out after {s.timeout_s:g}s", retried
        except openai.APIConnectionError:
            reason, attempts = f"cannot reach {_public(s.base_url)}", retried
        except openai.APIStatusError as exc:
            # Only the status: an error body may echo the key back ("Incorrect API key provided: sk-...").
            code = exc.status_code
            attempts = retried if code in _RETRIED_STATUS or code >= 500 else 1
            reason = f"HTTP {code} from {_public(s.base_url)}"
        except openai.OpenAIError as exc:
            reason, attempts = f"{type(exc).__name__}", 1
        raise GeneratorUnavailable(request.call_key, model, attempts, reason)

    def _generation(self, raw: bytes, model: str, request: GenerationRequest) -> Generation:
        try:
            payload = _completion.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise GeneratorUnavailable(request.call_key, model, 1, "the response is not a chat completion") from None
        message = payload.choices[0].message if payload.choices else None
        if message is None or message.content is None:
            raise GeneratorUnavailable(request.call_key, model, 1, "no completion in the response")
        text = message.content
        usage = payload.usage or _Usage()
        # Usage as reported; the metered generator clamps it to what the call reserved.
        tokens_in = (
            usage.prompt_tokens if usage.prompt_tokens is not None else _estimate(request.system + request.prompt)
        )
        tokens_out = usage.completion_tokens if usage.completion_tokens is not None else _estimate(text)
        return Generation(
            text=text, model=payload.model or model, tokens_in=max(0, tokens_in), tokens_out=max(0, tokens_out)
        )


def _read(chunks: Iterator[bytes], settings: OpenAISettings) -> bytes:
    """The body, refused past ``max_body_bytes``. A body that stalls or breaks off mid-read is a
    failed attempt too: the SDK's retries cover only the request and its status line."""
    body = bytearray()
    try:
        for chunk in chunks:
            body += chunk
            if len(body) > settings.max_body_bytes:
                raise _Unusable(1, f"the response body is over {settings.max_body_bytes} bytes")
    except _Unusable:
        raise
    except Exception as exc:  # the transport's own errors (read timeout, reset): typed by httpx, not the SDK
        raise _Unusable(1, f"reading the response failed ({type(exc).__name__})") from None
    return bytes(body)


def _public(url: str) -> str:
    """``url`` without any ``user:password@`` in it, fit for a message that reaches the log."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def _estimate(text: str) -> int:
    # A server that reports no usage: about four characters a token.
    return max(1, len(text) // 4)


class _Unusable(Exception):
    def __init__(self, attempts: int, reason: str) -> None:
        super().__init__(reason)
        self.attempts = attempts
        self.reason = reason
