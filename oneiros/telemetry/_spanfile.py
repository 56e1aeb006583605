"""The span file: one JSON line per finished span, as ``oneiros trace`` and the inspector read it.

Reading it needs no OpenTelemetry: the records are plain Structs, written by the exporter in
``_tracing.py`` in the processes that trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["SpanRecord", "cycle_spans", "read_spans"]


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


def cycle_spans(spans: Sequence[SpanRecord], cycle_id: str) -> list[SpanRecord]:
    """The spans of every trace that has a span tagged with ``cycle_id``, in start order."""
    traces = {s.trace_id for s in spans if s.attributes.get("oneiros.cycle_id") == cycle_id}
    return sorted((s for s in spans if s.trace_id in traces), key=lambda s: (s.start_ns, s.end_ns))
