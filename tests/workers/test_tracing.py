"""Tracing pieces on their own: the span file, the cycle's root span written later under the ids
drawn at the start, trace context in event metadata, and the OTLP exporter's missing extra."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from oneiros import ConfigError, Golems, open_store
from oneiros.settings import TracingSettings
from oneiros.workers import configure_tracing, read_spans
from oneiros.workers._tracing import current_trace_context, emit_cycle_span, new_cycle_trace, remote_parent, tracer


def test_root_span_is_written_later_under_the_drawn_ids(tmp_path: Path) -> None:
    """A span made under the drawn root is its child; the root, written afterwards, carries the
    drawn trace and span ids and the start time noted when the cycle began."""
    spans = tmp_path / "spans.jsonl"
    configure_tracing(TracingSettings(spans_path=str(spans)))
    cycle = new_cycle_trace()
    with tracer().start_as_current_span("phase nrem", context=remote_parent(cycle)):
        pass
    emit_cycle_span(cycle, {"oneiros.cycle_id": "c1"})
    child, root = read_spans(spans)
    trace_id, span_id = cycle.traceparent.split("-")[1:3]
    assert (trace_id, span_id, None, cycle.start_ns) == (root.trace_id, root.span_id, root.parent_id, root.start_ns)
    assert (trace_id, span_id) == (child.trace_id, child.parent_id)
    assert {"oneiros.cycle_id": "c1"} == root.attributes


def test_span_file_skips_a_torn_last_line(tmp_path: Path) -> None:
    """A process killed mid-write leaves half a line; reading the file keeps every whole span."""
    spans = tmp_path / "spans.jsonl"
    configure_tracing(TracingSettings(spans_path=str(spans)))
    with tracer().start_as_current_span("whole"):
        pass
    with spans.open("ab") as f:
        f.write(b'{"name": "torn", "trace_')
    assert ["whole"] == [s.name for s in read_spans(spans)]
    assert [] == read_spans(tmp_path / "absent.jsonl")


def test_events_carry_the_current_trace_context(tmp_path: Path) -> None:
    """With the hook, each appended event's metadata holds the current span's traceparent; without
    it (the default), the metadata's trace stays empty as before."""
    configure_tracing(TracingSettings(spans_path=None))
    store = open_store("memory://")
    traced = Golems(store, trace_context=current_trace_context)
    with tracer().start_as_current_span("create") as span:
        traced.create("g1")
    expected = f"00-{span.get_span_context().trace_id:032x}-{span.get_span_context().span_id:016x}"
    assert expected == store.read_stream("g1")[0].meta.trace["traceparent"].rsplit("-", 1)[0]
    Golems(store).create("g2")
    assert {} == store.read_stream("g2")[0].meta.trace


def _otlp_installed() -> bool:
    # find_spec imports the parent packages, and raises when opentelemetry.exporter itself is absent.
    try:
        return importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.skipif(_otlp_installed(), reason="the otlp extra is installed")
def test_otlp_without_its_extra_is_a_config_error() -> None:
    """Asking for OTLP export without oneiros[otlp] installed names the missing extra."""
    with pytest.raises(ConfigError) as caught:
        configure_tracing(TracingSettings(spans_path=None, otlp_endpoint="http://jaeger:4318"))
    assert "OTLP endpoint 'http://jaeger:4318' is set but its exporter is missing: pip install 'oneiros[otlp]'" == str(
        caught.value
    )
