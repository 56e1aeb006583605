"""The tracing seam: the spans a cycle makes wherever it runs, and OpenTelemetry only where they go somewhere.

The runtime, the executors and the workers make their spans through these functions and never
import OpenTelemetry themselves. Tracing is on in a process once OpenTelemetry is loaded in it:
because :func:`configure_tracing` found a destination for spans (``tracing.spans_path``, an OTLP
endpoint in the settings or in ``OTEL_EXPORTER_OTLP_*``), or because the application traces
itself and loaded it first (``opentelemetry-instrument``, its own SDK), whose provider then gets
oneiros's spans. Otherwise every span here is one shared object that records nothing, the trace
context events and jobs carry is empty, and a dream never imports OpenTelemetry (about 50
modules); ``_tracing.py`` holds everything that needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, cast

from oneiros.events._types import Event
from oneiros.generators._protocol import Generation, GenerationRequest, Generator
from oneiros.settings._runtime import OTLP_VARIABLES, TracingSettings
from oneiros.store._backends import Row
from oneiros.store._store import Checkpoint, EventStore, Recorded, StreamAppend

if TYPE_CHECKING:
    from opentelemetry import trace

__all__ = [
    "Span",
    "TracedGenerator",
    "TracedStore",
    "configure_tracing",
    "current_span",
    "current_trace_context",
    "ensure_tracing",
    "fail",
    "flush_spans",
    "outcome_attributes",
    "span_carrier",
    "start_span",
    "traced_phase",
    "tracing_on",
    "use_span",
]


class Span(Protocol):
    """What oneiros does with a span: an OpenTelemetry span where tracing is on, a no-op otherwise."""

    def set_attribute(self, key: str, value: Any) -> None: ...

    def set_attributes(self, attributes: Mapping[str, Any]) -> None: ...

    def end(self) -> None: ...


class _Unrecorded:
    """The span of a process that does not trace: everything said to it is dropped."""

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        pass

    def end(self) -> None:
        pass


_UNRECORDED = _Unrecorded()


def tracing_on() -> bool:
    """Whether this process records spans: OpenTelemetry's API is loaded and a tracer provider is
    installed (by oneiros or by the application). Until one is, a span records nothing, and making
    one only costs: a library can load the API without tracing anything (the MCP SDK does, so
    every request of an untraced server made spans that went nowhere)."""
    if _recording:
        return True
    if "opentelemetry.trace" not in sys.modules:
        return False
    from opentelemetry import trace  # noqa: PLC0415 - loaded already

    return _recorded(not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider))


_recording = False
"""Whether a tracer provider was seen installed: it is set once per process, so once is enough."""


def _recorded(installed: bool) -> bool:
    global _recording  # noqa: PLW0603 - a fact about the process, learnt once
    _recording = installed
    return installed


def _has_destination(settings: TracingSettings) -> bool:
    return bool(settings.spans_path or settings.otlp_endpoint or any(os.environ.get(v) for v in OTLP_VARIABLES))


def configure_tracing(settings: TracingSettings | None = None) -> None:
    """Send this process's spans where ``settings`` say (again, replacing what was configured).

    With nowhere to send them, and nothing configured before, OpenTelemetry is not even loaded."""
    settings = settings or TracingSettings()
    if not _has_destination(settings) and "oneiros.telemetry._tracing" not in sys.modules:
        return
    from oneiros.telemetry._tracing import install  # noqa: PLC0415 - loads OpenTelemetry: only when tracing

    install(settings)


def ensure_tracing(settings: TracingSettings) -> None:
    """Configure tracing unless it already runs with ``settings`` (as in a forked work-horse)."""
    if not _has_destination(settings) and "oneiros.telemetry._tracing" not in sys.modules:
        return
    from oneiros.telemetry._tracing import ensure  # noqa: PLC0415 - loads OpenTelemetry: only when tracing

    ensure(settings)


def flush_spans() -> None:
    """Push every finished span out; called before a work-horse exits."""
    if "oneiros.telemetry._tracing" in sys.modules:
        from oneiros.telemetry._tracing import flush  # noqa: PLC0415 - loaded already

        flush()


def start_span(name: str, attributes: Mapping[str, Any], *, parent: Mapping[str, str] | None = None) -> Span:
    """A span that is not made current; the caller ends it. ``parent`` is a carrier (an empty one
    starts a new trace), None the current span."""
    if not tracing_on():
        return _UNRECORDED
    from oneiros.telemetry._tracing import start  # noqa: PLC0415 - OpenTelemetry is loaded

    return start(name, attributes, parent)


@contextmanager
def current_span(
    name: str, attributes: Mapping[str, Any], *, parent: Mapping[str, str] | None = None
) -> Iterator[Span]:
    """A span current for the body and ended after it; an exception escaping the body marks it failed."""
    if not tracing_on():
        yield _UNRECORDED
        return
    from oneiros.telemetry._tracing import started  # noqa: PLC0415 - OpenTelemetry is loaded

    with started(name, attributes, parent) as span:
        yield span


@contextmanager
def use_span(span: Span, *, end_on_exit: bool = False) -> Iterator[None]:
    """``span`` current for the body (and ended after it with ``end_on_exit``)."""
    if isinstance(span, _Unrecorded):
        yield
        return
    from oneiros.telemetry._tracing import using  # noqa: PLC0415 - a recorded span: OpenTelemetry is loaded

    with using(cast("trace.Span", span), end_on_exit=end_on_exit):
        yield


def fail(span: Span, message: str) -> None:
    """Mark ``span`` as failed, with why."""
    if not isinstance(span, _Unrecorded):
        from oneiros.telemetry._tracing import failed  # noqa: PLC0415 - a recorded span: OpenTelemetry is loaded

        failed(cast("trace.Span", span), message)


def span_carrier(span: Span) -> dict[str, str]:
    """``span``'s context as a propagation carrier (W3C ``traceparent``), for a job's meta."""
    if isinstance(span, _Unrecorded):
        return {}
    from oneiros.telemetry._tracing import carrier_of  # noqa: PLC0415 - a recorded span: OpenTelemetry is loaded

    return carrier_of(cast("trace.Span", span))


def current_trace_context() -> dict[str, str]:
    """The current span's context as a propagation carrier, for the metadata of each event appended."""
    if not tracing_on():
        return {}
    from oneiros.telemetry._tracing import current_carrier  # noqa: PLC0415 - OpenTelemetry is loaded

    return current_carrier()


@contextmanager
def traced_phase(parent: Mapping[str, str] | None, phase: str, attributes: Mapping[str, Any]) -> Iterator[Span]:
    """A phase's span, a child of the cycle's root (the carrier ``parent``, or the current span),
    current for the body."""
    with current_span(f"phase {phase}", {**attributes, "oneiros.phase": phase}, parent=parent) as span:
        yield span


def outcome_attributes(outcome: Any) -> dict[str, Any]:
    """What a phase span says about how the phase went (a PhaseOutcome)."""
    return {
        "oneiros.ran": outcome.ran,
        "oneiros.events_appended": outcome.events_appended,
        "oneiros.tokens": outcome.tokens_spent,
        "oneiros.cost_usd": outcome.cost_usd,
        "oneiros.generator_calls": outcome.generator_calls,
        "oneiros.reused_generations": outcome.reused_generations,
    }


class TracedGenerator:
    """A generator whose every call is a span carrying tokens, cost and model."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # The wrapped generator's model, model_for and max_tokens_in, which budgets and prices read.
        return getattr(self.inner, name)

    def generate(self, request: GenerationRequest) -> Generation:
        if not tracing_on():
            return self.inner.generate(request)
        attributes = {
            "oneiros.call_key": request.call_key,
            "oneiros.phase": request.phase,
            "gen_ai.request.temperature": request.temperature,
        }
        with current_span("generate", attributes) as span:
            generation = self.inner.generate(request)
            span.set_attributes(
                {
                    "gen_ai.response.model": generation.model,
                    "gen_ai.usage.input_tokens": generation.tokens_in,
                    "gen_ai.usage.output_tokens": generation.tokens_out,
                    "oneiros.cost_usd": generation.cost_usd,
                }
            )
            return generation


class TracedStore(EventStore):
    """The same store, with each append a span (golem, expected version, events, event types)."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner.backend)
        # Reads go through the wrapped store, so a store that wraps reads (one that counts them,
        # say) still sees every read a traced executor makes.
        self._inner = inner

    def read_stream_rows(
        self, golem_id: str, after_version: int = 0, until: int | None = None, *, types: Sequence[type[Event]] = ()
    ) -> list[Row]:
        return self._inner.read_stream_rows(golem_id, after_version, until, types=types)

    def append_streams(
        self, appends: Sequence[StreamAppend], *, checkpoint: Checkpoint | None = None
    ) -> list[Recorded]:
        # Every write of the store, append() included, comes through here, and on to the wrapped
        # store's: a unit of work wrapped to be traced still joins what it holds to its writes.
        if not tracing_on():
            return self._inner.append_streams(appends, checkpoint=checkpoint)
        first = appends[0] if appends else StreamAppend("", 0, ())
        attributes = {
            "oneiros.golem_id": first.golem_id,
            "oneiros.golem_ids": sorted({a.golem_id for a in appends}),
            "oneiros.expected_version": first.expected_version,
            "oneiros.events": sum(len(a.items) for a in appends),
            "oneiros.event_types": sorted({type(event).type_name for a in appends for _, event in a.items}),
        }
        with current_span("store.append", attributes):
            return self._inner.append_streams(appends, checkpoint=checkpoint)
