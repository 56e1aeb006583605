"""OpenTelemetry traces of a dream cycle across every process that ran a part of it.

Tracing is configured the OpenTelemetry way. The library code only uses the API
(``trace.get_tracer``, ``opentelemetry.propagate``); the processes (``oneiros dream``, ``run``,
``worker``) configure the SDK once, as the global TracerProvider, and the SDK reads its standard
variables itself: ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER`` (and ``_ARG``),
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_PROPAGATORS``. When
a global SDK provider is already installed (``opentelemetry-instrument``), oneiros adds its span
file to that one instead, so redis and psycopg instrumentations nest under oneiros's spans.

One trace per cycle. Its root span ("cycle") belongs to whoever starts the cycle and lasts until
the cycle ends when the starter follows it (in-process, the daemon, ``dream --wait``), or until the
first phase is enqueued when it does not. The root's context travels through the propagator API in
each phase job's meta and in the metadata of every event appended under it. A phase is a span,
in-process or on whichever worker ran it; each generator call and each store append is a span
inside it.

Spans go to a local JSON-lines file by default (``.oneiros/spans.jsonl``; the config's
``tracing.spans_path``, ``off`` for none) through a simple processor, so a span is on disk when it
ends and a process that exits right after loses nothing; to an OTLP collector (Jaeger, Tempo) in
batches when an endpoint is configured, flushed at the end of each job.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from oneiros._errors import ConfigError
from oneiros.events._types import Event
from oneiros.generators._protocol import Generation, GenerationRequest, Generator
from oneiros.settings._runtime import DEFAULT_SPANS_PATH, TracingSettings
from oneiros.store._backends import Row
from oneiros.store._store import Checkpoint, EventStore, Recorded, StreamAppend

__all__ = [
    "DEFAULT_SPANS_PATH",
    "SpanFileExporter",
    "SpanRecord",
    "TracedGenerator",
    "TracedStore",
    "TracingSettings",
    "configure_tracing",
    "context_from",
    "current_trace_context",
    "cycle_spans",
    "ensure_tracing",
    "flush_spans",
    "outcome_attributes",
    "read_spans",
    "start_cycle_span",
    "trace_carrier",
    "traced_phase",
    "tracer",
]


class SpanRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One finished span as the span file holds it."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = msgspec.field(default_factory=dict)
    status: str = "UNSET"
    pid: int = 0

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


_encoder = msgspec.json.Encoder()


class SpanFileExporter(SpanExporter):
    """Appends each span as one JSON line.

    The file is opened in append mode for every batch, so several worker processes (and forked
    work-horses) can share it: each line goes out in one ``write`` on an ``O_APPEND`` descriptor.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._warned = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = b"".join(_encoder.encode(_record(span)) + b"\n" for span in spans)
        try:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, lines)
                finally:
                    os.close(fd)
        except OSError as exc:
            # Said once: the SDK drops a failed export without a word, and `oneiros trace` would
            # later find no span file with nothing to say why.
            if not self._warned:
                self._warned = True
                logging.getLogger("oneiros.tracing").warning(
                    "cannot write spans to %s (tracing.spans_path): %s; spans are dropped",
                    self.path,
                    exc.strerror or type(exc).__name__,
                )
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def _record(span: ReadableSpan) -> SpanRecord:
    context = span.context
    assert context is not None
    parent = span.parent
    return SpanRecord(
        name=span.name,
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        attributes=dict(span.attributes or {}),
        status=span.status.status_code.name,
        pid=os.getpid(),
    )


def read_spans(path: str | Path) -> list[SpanRecord]:
    """Every span in a span file; a torn last line (a process killed mid-write) is skipped."""
    decoder = msgspec.json.Decoder(SpanRecord)
    out: list[SpanRecord] = []
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return out
    for line in raw.splitlines():
        try:
            out.append(decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return out


class _Destinations(SpanProcessor):
    """The span processors oneiros configured, behind one processor added to the provider once:
    the provider is global and set once per process, its destinations may change (a test, a
    worker configured again)."""

    def __init__(self) -> None:
        self.processors: tuple[SpanProcessor, ...] = ()

    def replace(self, processors: Sequence[SpanProcessor]) -> None:
        old, self.processors = self.processors, tuple(processors)
        for processor in old:
            processor.shutdown()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        for processor in self.processors:
            processor.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        for processor in self.processors:
            processor.on_end(span)

    def shutdown(self) -> None:
        self.replace(())

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return all(processor.force_flush(timeout_millis) for processor in self.processors)


class _Tracing:
    def __init__(self) -> None:
        self.destinations: _Destinations | None = None
        self.settings: TracingSettings | None = None
        self.lock = threading.Lock()


_state = _Tracing()
_OTLP_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _global_provider(settings: TracingSettings) -> TracerProvider:
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current  # the application installed the SDK already: add to it
    # OTEL_SERVICE_NAME wins over the default name; the SDK reads the sampler variables itself.
    name = os.environ.get("OTEL_SERVICE_NAME") or settings.service_name
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    trace.set_tracer_provider(provider)
    return provider


def configure_tracing(settings: TracingSettings | None = None) -> None:
    """Install oneiros's span destinations in this process's global TracerProvider (again,
    replacing the ones configured before)."""
    settings = settings or TracingSettings()
    processors: list[SpanProcessor] = []
    if settings.spans_path:
        processors.append(SimpleSpanProcessor(SpanFileExporter(settings.spans_path)))
    if settings.otlp_endpoint or any(os.environ.get(v) for v in _OTLP_VARIABLES):
        processors.append(BatchSpanProcessor(_otlp_exporter(settings.otlp_endpoint)))
    with _state.lock:
        if _state.destinations is None:
            destinations = _Destinations()
            _global_provider(settings).add_span_processor(destinations)
            _state.destinations = destinations
        _state.destinations.replace(processors)
        _state.settings = settings


def _otlp_exporter(endpoint: str | None) -> SpanExporter:
    try:
        # Imported by name: the exporter is an optional extra (oneiros[otlp]) that CI does not install.
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError as exc:
        where = endpoint or " or ".join(_OTLP_VARIABLES)
        raise ConfigError(
            f"OTLP endpoint {where!r} is set but its exporter is missing: pip install 'oneiros[otlp]'"
        ) from exc
    # Without an endpoint of ours the exporter reads the standard variables itself.
    kwargs = {"endpoint": endpoint.rstrip("/") + "/v1/traces"} if endpoint else {}
    exporter: SpanExporter = module.OTLPSpanExporter(**kwargs)
    return exporter


def ensure_tracing(settings: TracingSettings) -> None:
    """Configure tracing unless it already runs with ``settings`` (as in a forked work-horse)."""
    if _state.destinations is None or _state.settings != settings:
        configure_tracing(settings)


def tracer() -> trace.Tracer:
    """oneiros's tracer from the global provider: spans go nowhere until a process configures one."""
    return trace.get_tracer("oneiros")


def flush_spans() -> None:
    """Push every finished span out; called before a work-horse exits."""
    if _state.destinations is not None:
        _state.destinations.force_flush()


def current_trace_context() -> dict[str, str]:
    """The current span's context as a propagation carrier (W3C ``traceparent`` by default), for
    job meta and event metadata."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def trace_carrier(span: trace.Span) -> dict[str, str]:
    """``span``'s context as a propagation carrier."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=trace.set_span_in_context(span))
    return carrier


def context_from(carrier: Mapping[str, str]) -> Context:
    """The context a carrier holds (an empty one, a new trace, when it holds none)."""
    return propagate.extract(dict(carrier))


def start_cycle_span(golem_id: str, trigger: str) -> trace.Span:
    """A new cycle's root span, not current: the starter ends it when the cycle ends."""
    return tracer().start_span(
        "cycle", context=Context(), attributes={"oneiros.golem_id": golem_id, "oneiros.trigger": trigger}
    )


class TracedGenerator:
    """A generator whose every call is a span carrying tokens, cost and model."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # The wrapped generator's model, model_for and max_tokens_in, which budgets and prices read.
        return getattr(self.inner, name)

    def generate(self, request: GenerationRequest) -> Generation:
        with tracer().start_as_current_span(
            "generate",
            attributes={
                "oneiros.call_key": request.call_key,
                "oneiros.phase": request.phase,
                "gen_ai.request.temperature": request.temperature,
            },
        ) as span:
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
        # Every write of the store, append() included, comes through here.
        types = sorted({type(event).type_name for a in appends for _, event in a.items})
        first = appends[0] if appends else StreamAppend("", 0, ())
        with tracer().start_as_current_span(
            "store.append",
            attributes={
                "oneiros.golem_id": first.golem_id,
                "oneiros.golem_ids": sorted({a.golem_id for a in appends}),
                "oneiros.expected_version": first.expected_version,
                "oneiros.events": sum(len(a.items) for a in appends),
                "oneiros.event_types": types,
            },
        ):
            return super().append_streams(appends, checkpoint=checkpoint)


@contextmanager
def traced_phase(parent: Context | None, phase: str, attributes: Mapping[str, Any]) -> Iterator[trace.Span]:
    """A phase's span, a child of the cycle's root (``parent``, or the current span), current for the body."""
    attrs = {**attributes, "oneiros.phase": phase}
    with tracer().start_as_current_span(f"phase {phase}", context=parent, attributes=attrs) as span:
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


def cycle_spans(spans: Sequence[SpanRecord], cycle_id: str) -> list[SpanRecord]:
    """The spans of every trace that has a span tagged with ``cycle_id``, in start order."""
    traces = {s.trace_id for s in spans if s.attributes.get("oneiros.cycle_id") == cycle_id}
    return sorted((s for s in spans if s.trace_id in traces), key=lambda s: (s.start_ns, s.end_ns))
