"""Tracing and logging: OpenTelemetry traces of a cycle across processes, and one log line per phase."""

from oneiros.telemetry._logging import JsonFormatter, configure_logging
from oneiros.telemetry._tracing import (
    SpanFileExporter,
    SpanRecord,
    configure_tracing,
    cycle_spans,
    flush_spans,
    read_spans,
)

__all__ = [
    "JsonFormatter",
    "SpanFileExporter",
    "SpanRecord",
    "configure_logging",
    "configure_tracing",
    "cycle_spans",
    "flush_spans",
    "read_spans",
]
