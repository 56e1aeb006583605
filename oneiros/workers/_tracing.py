"""OpenTelemetry traces of a dream cycle across every process that ran a part of it.

One trace per cycle. Its root span ("cycle") is opened in name only by whoever starts the cycle: the
ids are drawn there and travel as a W3C ``traceparent`` in each phase job's meta and in the metadata
of every event appended under it; the span itself is written once, by the worker that ends the
cycle, with the start time the starter recorded. A phase job is a span on whichever worker ran it;
each generator call and each store append is a span inside it.

Spans go to a local JSON-lines file by default (``.oneiros/spans.jsonl``, or ``$ONEIROS_SPANS``;
``off`` turns it off) through a simple processor, so a span is on disk when it ends and a
work-horse that exits right after loses nothing. When ``$OTEL_EXPORTER_OTLP_ENDPOINT`` is set
(and ``oneiros[otlp]`` is installed), spans also go to that collector (Jaeger, Tempo) in batches,
flushed at the end of each job.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from oneiros._errors import ConfigError
from oneiros.events import Event, EventMeta, EventStore, Recorded
from oneiros.generators import Generation, GenerationRequest, Generator
from oneiros.settings import DEFAULT_SPANS_PATH, TracingSettings

__all__ = [
    "DEFAULT_SPANS_PATH",
    "CycleTrace",
    "SpanFileExporter",
    "SpanRecord",
    "TracedGenerator",
    "TracedStore",
    "TracingSettings",
    "configure_tracing",
    "current_trace_context",
    "cycle_spans",
    "emit_cycle_span",
    "ensure_tracing",
    "flush_spans",
    "new_cycle_trace",
    "read_spans",
    "remote_parent",
    "traced_phase",
    "tracer",
]

_propagator = TraceContextTextMapPropagator()


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
        except OSError:
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


class _PresetIds(RandomIdGenerator):
    """Random ids, except inside :func:`_preset` which hands out the ids of a span drawn earlier.

    This is how the cycle's root span, whose ids were drawn when the cycle started, is written by
    the worker that ends it: the SDK has no public way to give a new span chosen ids.
    """

    preset: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("oneiros_preset_ids", default=None)

    def generate_trace_id(self) -> int:
        ids = self.preset.get()
        return ids[0] if ids is not None else super().generate_trace_id()

    def generate_span_id(self) -> int:
        ids = self.preset.get()
        return ids[1] if ids is not None else super().generate_span_id()


class _Tracing:
    def __init__(self) -> None:
        self.provider: TracerProvider | None = None
        self.settings: TracingSettings | None = None
        self.lock = threading.Lock()


_state = _Tracing()


def configure_tracing(settings: TracingSettings | None = None) -> TracerProvider:
    """Set this process's span destinations (again, replacing the previous ones)."""
    settings = settings or TracingSettings.from_env()
    with _state.lock:
        if _state.provider is not None:
            _state.provider.shutdown()
        provider = TracerProvider(
            resource=Resource.create({"service.name": settings.service_name}), id_generator=_PresetIds()
        )
        if settings.spans_path:
            provider.add_span_processor(SimpleSpanProcessor(SpanFileExporter(settings.spans_path)))
        if settings.otlp_endpoint:
            provider.add_span_processor(BatchSpanProcessor(_otlp_exporter(settings.otlp_endpoint)))
        _state.provider, _state.settings = provider, settings
        return provider


def _otlp_exporter(endpoint: str) -> SpanExporter:
    try:
        # Imported by name: the exporter is an optional extra (oneiros[otlp]) that CI does not install.
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError as exc:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} is set but its exporter is missing: pip install 'oneiros[otlp]'"
        ) from exc
    exporter: SpanExporter = module.OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
    return exporter


def ensure_tracing(settings: TracingSettings) -> None:
    """Configure tracing unless it already runs with ``settings`` (as in a forked work-horse)."""
    if _state.provider is None or _state.settings != settings:
        configure_tracing(settings)


def tracer() -> trace.Tracer:
    """This process's oneiros tracer, configured from the environment on first use."""
    provider = _state.provider or configure_tracing()
    return provider.get_tracer("oneiros")


def flush_spans() -> None:
    """Push every finished span out; called before a work-horse exits."""
    if _state.provider is not None:
        _state.provider.force_flush()


def current_trace_context() -> dict[str, str]:
    """The W3C ``traceparent`` of the current span, for job meta and event metadata."""
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier


class CycleTrace(msgspec.Struct, frozen=True, kw_only=True):
    """The cycle's root span, drawn but not yet written: its traceparent and its start time."""

    traceparent: str
    start_ns: int

    @property
    def ids(self) -> tuple[int, int]:
        _, trace_hex, span_hex, _ = self.traceparent.split("-")
        return int(trace_hex, 16), int(span_hex, 16)

    @property
    def trace_id(self) -> str:
        return self.traceparent.split("-")[1]


def new_cycle_trace() -> CycleTrace:
    """Draw the ids of a new cycle's root span (a sampled W3C traceparent) and note the time."""
    rng = random.SystemRandom()
    trace_id = rng.getrandbits(128) or 1
    span_id = rng.getrandbits(64) or 1
    return CycleTrace(traceparent=f"00-{trace_id:032x}-{span_id:016x}-01", start_ns=time.time_ns())


def remote_parent(cycle: CycleTrace) -> Context:
    """A context holding the root as a (remote) parent without extracting from a carrier."""
    trace_id, span_id = cycle.ids
    parent = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(parent))


def emit_cycle_span(cycle: CycleTrace, attributes: Mapping[str, Any], *, error: str | None = None) -> None:
    """Write the cycle's root span, from when the cycle started to now, under its drawn ids."""
    token = _PresetIds.preset.set(cycle.ids)
    try:
        span = tracer().start_span("cycle", context=Context(), start_time=cycle.start_ns, attributes=dict(attributes))
    finally:
        _PresetIds.preset.reset(token)
    if error is not None:
        span.set_status(trace.Status(trace.StatusCode.ERROR, error))
    span.end()


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

    def append(self, golem_id: str, expected_version: int, items: Sequence[tuple[EventMeta, Event]]) -> list[Recorded]:
        types = sorted({type(event).type_name for _, event in items})
        with tracer().start_as_current_span(
            "store.append",
            attributes={
                "oneiros.golem_id": golem_id,
                "oneiros.expected_version": expected_version,
                "oneiros.events": len(items),
                "oneiros.event_types": types,
            },
        ):
            return super().append(golem_id, expected_version, items)


@contextmanager
def traced_phase(cycle: CycleTrace, name: str, attributes: Mapping[str, Any]) -> Iterator[trace.Span]:
    """A phase job's span, a child of the cycle's root, current for the body."""
    with tracer().start_as_current_span(name, context=remote_parent(cycle), attributes=dict(attributes)) as span:
        yield span


def cycle_spans(spans: Sequence[SpanRecord], cycle_id: str) -> list[SpanRecord]:
    """The spans of every trace that has a span tagged with ``cycle_id``, in start order."""
    traces = {s.trace_id for s in spans if s.attributes.get("oneiros.cycle_id") == cycle_id}
    return sorted((s for s in spans if s.trace_id in traces), key=lambda s: (s.start_ns, s.end_ns))
