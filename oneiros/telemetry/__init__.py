"""Tracing and logging: OpenTelemetry traces of a cycle across processes, and one log line per phase."""

from oneiros.telemetry._logging import JsonFormatter, configure_logging
from oneiros.telemetry._spanfile import SpanRecord, cycle_spans, read_spans
from oneiros.telemetry._spans import configure_tracing, flush_spans

__all__ = [
    "JsonFormatter",
    "SpanRecord",
    "configure_logging",
    "configure_tracing",
    "cycle_spans",
    "flush_spans",
    "read_spans",
]
