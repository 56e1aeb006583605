"""Tracing pieces on their own: the global provider and the OTEL_* variables, the cycle's root span
and its context carried through the propagator API, the span file, trace context in event metadata,
in-process cycles traced like RQ ones, and the OTLP exporter's missing extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace

from oneiros import ConfigError, Golems, InProcessExecutor, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.settings._runtime import TracingSettings
from oneiros.telemetry._spanfile import read_spans
from oneiros.telemetry._spans import (
    configure_tracing,
    current_span,
    current_trace_context,
    span_carrier,
    start_span,
    traced_phase,
)
from tests.workers.support import ROOT


def test_a_phase_under_a_carried_context_is_a_child_of_the_cycle_root(tmp_path: Path) -> None:
    """The root's context, injected into a carrier and extracted elsewhere (a job's meta), makes a
    phase span its child in the same trace; the root is written when its starter ends it."""
    spans = tmp_path / "spans.jsonl"
    configure_tracing(TracingSettings(spans_path=str(spans)))
    root = start_span("cycle", {"oneiros.golem_id": "g1", "oneiros.trigger": "owner"}, parent={})
    carrier = span_carrier(root)
    assert {"traceparent"} == set(carrier)
    with traced_phase(carrier, "nrem", {}):
        pass
    root.end()
    child, written = read_spans(spans)
    assert ("cycle", None) == (written.name, written.parent_id)
    assert (written.trace_id, written.span_id) == (child.trace_id, child.parent_id)
    assert {"oneiros.golem_id": "g1", "oneiros.trigger": "owner"} == written.attributes


def test_tracing_uses_the_global_provider_and_the_standard_variables(tmp_path: Path) -> None:
    """A fresh process: oneiros installs the SDK as the global TracerProvider, OTEL_SERVICE_NAME
    names the service and OTEL_TRACES_SAMPLER=always_off is obeyed (nothing is written)."""
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from oneiros.settings import TracingSettings\n"
        "from oneiros.telemetry._spans import configure_tracing, current_span\n"
        "import sys\n"
        "configure_tracing(TracingSettings(spans_path=sys.argv[1]))\n"
        "provider = trace.get_tracer_provider()\n"
        "assert isinstance(provider, TracerProvider)\n"
        "print(provider.resource.attributes['service.name'])\n"
        "with current_span('s', {}): pass\n"
    )
    spans = tmp_path / "spans.jsonl"
    env = {**os.environ, "OTEL_SERVICE_NAME": "dreamer", "OTEL_TRACES_SAMPLER": "always_off"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(spans)], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert 0 == done.returncode, done.stderr
    assert "dreamer" == done.stdout.strip()
    assert [] == read_spans(spans)


def test_an_in_process_cycle_is_one_trace_like_a_queued_one(tmp_path: Path) -> None:
    """InProcessExecutor writes the cycle root, fall_asleep and five phase spans in one trace, the
    phases under the root and every generator call and append under a phase or fall_asleep."""
    spans = tmp_path / "spans.jsonl"
    configure_tracing(TracingSettings(spans_path=str(spans)))
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    golems.record_episodes("g1", load_episodes(sample_episodes_path()))
    result = InProcessExecutor(golems).run_cycle("g1")
    found = read_spans(spans)
    (root,) = [s for s in found if s.name == "cycle"]
    assert {root.trace_id} == {s.trace_id for s in found}
    assert (result.cycle_id, "complete") == (root.attributes["oneiros.cycle_id"], root.attributes["oneiros.outcome"])
    phases = sorted((s for s in found if s.name.startswith("phase ")), key=lambda s: s.start_ns)
    assert ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"] == [
        s.attributes["oneiros.phase"] for s in phases
    ]
    assert all(root.span_id == s.parent_id for s in phases)
    by_id = {s.span_id: s for s in found}
    parents = {by_id[s.parent_id or ""].name for s in found if s.name in ("generate", "store.append")}
    assert parents <= {"fall_asleep", *(p.name for p in phases)}
    assert not trace.get_current_span().get_span_context().is_valid


def test_span_file_skips_a_torn_last_line(tmp_path: Path) -> None:
    """A process killed mid-write leaves half a line; reading the file keeps every whole span."""
    spans = tmp_path / "spans.jsonl"
    configure_tracing(TracingSettings(spans_path=str(spans)))
    with current_span("whole", {}):
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
    with current_span("create", {}):
        context = trace.get_current_span().get_span_context()
        traced.create("g1")
    expected = f"00-{context.trace_id:032x}-{context.span_id:016x}"
    assert expected == store.read_stream("g1")[0].meta.trace["traceparent"].rsplit("-", 1)[0]
    Golems(store).create("g2")
    assert {} == store.read_stream("g2")[0].meta.trace


def test_otlp_without_its_extra_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for OTLP export without oneiros[otlp] installed names the missing extra (the dev
    install has it, for the opentelemetry-instrument test: a None in sys.modules makes its import fail
    as a missing package's would)."""
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(ConfigError) as caught:
        configure_tracing(TracingSettings(spans_path=None, otlp_endpoint="http://jaeger:4318"))
    assert "OTLP endpoint 'http://jaeger:4318' is set but its exporter is missing: pip install 'oneiros[otlp]'" == str(
        caught.value
    )


def test_a_span_file_that_cannot_be_written_is_said_once(tmp_path: Path) -> None:
    """`oneiros dream` with tracing.spans_path naming a directory completes, and says once on stderr
    that its spans are dropped (the SDK dropped them without a word)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    env["ONEIROS_SPANS"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "oneiros", "dream", "--sample", "--json", "--store", f"sqlite:///{tmp_path}/e.db"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    expected = f"cannot write spans to {tmp_path} (tracing.spans_path): Is a directory; spans are dropped\n"
    assert (0, expected) == (result.returncode, result.stderr)
