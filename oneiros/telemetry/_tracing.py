"""OpenTelemetry itself: the SDK as this process's global TracerProvider, the span file exporter,
and the OpenTelemetry side of the tracing seam (``_spans.py``). Only a process that traces loads it.

Tracing is configured the OpenTelemetry way. The library code only uses the API
(``trace.get_tracer``, ``opentelemetry.propagate``); the processes (``oneiros dream``, ``run``,
``worker``) configure the SDK once, as the global TracerProvider, and the SDK reads its standard
variables itself: ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER`` (and ``_ARG``),
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_PROPAGATORS``. When
a global SDK provider is already installed (``opentelemetry-instrument``), oneiros adds its span
file to that one instead, so redis and psycopg instrumentations nest under oneiros's spans, and
leaves OTLP export to it: each span is exported once.

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
from oneiros.settings._runtime import OTLP_VARIABLES, TracingSettings
from oneiros.telemetry._spanfile import SpanRecord

__all__ = [
    "SpanFileExporter",
    "carrier_of",
    "context_from",
    "current_carrier",
    "ensure",
    "failed",
    "flush",
    "install",
    "start",
    "started",
    "tracer",
    "using",
]


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
        self.owned = True
        """Whether oneiros installed the global provider (else the application exports its spans)."""
        self.lock = threading.Lock()


_state = _Tracing()


def _global_provider(settings: TracingSettings) -> tuple[TracerProvider, bool]:
    """The global SDK provider, and whether oneiros installed it (False: the application did)."""
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current, False  # the application installed the SDK already: add to it
    # OTEL_SERVICE_NAME wins over the default name; the SDK reads the sampler variables itself.
    name = os.environ.get("OTEL_SERVICE_NAME") or settings.service_name
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    trace.set_tracer_provider(provider)
    return provider, True


def install(settings: TracingSettings) -> None:
    """Install oneiros's span destinations in this process's global TracerProvider (again,
    replacing the ones configured before).

    One exporter per destination and provider: where the application installed the provider
    (``opentelemetry-instrument``, which reads the same ``OTEL_EXPORTER_OTLP_*`` variables and
    exports to them itself), oneiros adds only its span file; a second OTLP exporter on that
    provider would send every span twice."""
    with _state.lock:
        if _state.destinations is None:
            provider, _state.owned = _global_provider(settings)
            destinations = _Destinations()
            provider.add_span_processor(destinations)
            _state.destinations = destinations
        processors: list[SpanProcessor] = []
        if settings.spans_path:
            processors.append(SimpleSpanProcessor(SpanFileExporter(settings.spans_path)))
        otlp = settings.otlp_endpoint or any(os.environ.get(v) for v in OTLP_VARIABLES)
        if otlp and _state.owned:
            processors.append(BatchSpanProcessor(_otlp_exporter(settings.otlp_endpoint)))
        _state.destinations.replace(processors)
        _state.settings = settings


def _otlp_exporter(endpoint: str | None) -> SpanExporter:
    try:
        # Imported by name: the exporter is an optional extra (oneiros[otlp]) that CI does not install.
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError as exc:
        where = endpoint or " or ".join(OTLP_VARIABLES)
        raise ConfigError(
            f"OTLP endpoint {where!r} is set but its exporter is missing: pip install 'oneiros[otlp]'"
        ) from exc
    # Without an endpoint of ours the exporter reads the standard variables itself.
    kwargs = {"endpoint": endpoint.rstrip("/") + "/v1/traces"} if endpoint else {}
    exporter: SpanExporter = module.OTLPSpanExporter(**kwargs)
    return exporter


def ensure(settings: TracingSettings) -> None:
    """Install tracing unless it already runs with ``settings`` (as in a forked work-horse)."""
    if _state.destinations is None or _state.settings != settings:
        install(settings)


def tracer() -> trace.Tracer:
    """oneiros's tracer from the global provider: spans go nowhere until a process configures one."""
    return trace.get_tracer("oneiros")


def flush() -> None:
    """Push every finished span out; called before a work-horse exits."""
    if _state.destinations is not None:
        _state.destinations.force_flush()


def current_carrier() -> dict[str, str]:
    """The current span's context as a propagation carrier (W3C ``traceparent`` by default)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def carrier_of(span: trace.Span) -> dict[str, str]:
    """``span``'s context as a propagation carrier."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=trace.set_span_in_context(span))
    return carrier


def context_from(carrier: Mapping[str, str] | None) -> Context | None:
    """The context a carrier holds (an empty one, a new trace, when it holds none); None, the
    current context, for no carrier."""
    return None if carrier is None else propagate.extract(dict(carrier))


def start(name: str, attributes: Mapping[str, Any], parent: Mapping[str, str] | None) -> trace.Span:
    """A span that is not current, under ``parent`` (a carrier) or the current span."""
    return tracer().start_span(name, context=context_from(parent), attributes=attributes)


@contextmanager
def started(name: str, attributes: Mapping[str, Any], parent: Mapping[str, str] | None) -> Iterator[trace.Span]:
    """A span current for the body, under ``parent`` (a carrier) or the current span."""
    with tracer().start_as_current_span(name, context=context_from(parent), attributes=attributes) as span:
        yield span


@contextmanager
def using(span: trace.Span, *, end_on_exit: bool) -> Iterator[None]:
    with trace.use_span(span, end_on_exit=end_on_exit):
        yield


def failed(span: trace.Span, message: str) -> None:
    span.set_status(trace.Status(trace.StatusCode.ERROR, message))
