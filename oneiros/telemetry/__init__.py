"""Tracing and logging: OpenTelemetry traces of a cycle across processes, and one log line per phase."""

from oneiros.telemetry._spans import configure_tracing

__all__ = [
    "configure_tracing",
]
