"""``oneiros serve`` traces as every other process does: a cycle it runs is one trace under a root
``cycle`` span, which ``GET .../cycles/{id}/trace`` returns; each request is a span, and the one
that started the cycle names it. Under an application's own provider (``opentelemetry-instrument``)
oneiros adds no second OTLP exporter."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from oneiros.settings import PHASES
from tests.server.conftest import start_server
from tests.server.test_rest import _dreamt, _episodes, _ok
from tests.workers.conftest import _free_port
from tests.workers.support import Workers, worker_command

pytestmark = pytest.mark.timeout(180)


def test_a_cycle_the_server_runs_is_one_trace_under_its_root_and_its_request_names_it(tmp_path: Path) -> None:
    """After a cycle the server ran: its trace route answers every span of one trace, one of them
    without a parent (``cycle``) and a span per phase; in the span file, the request that started it
    is an ``HTTP POST`` span whose ``dream`` child carries the cycle id."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = server.client("admin")
        cycle_id = _dreamt(http)["cycle_id"]
        deadline = time.monotonic() + 30
        while True:  # the root span ends just after the cycle's last event
            spans = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/trace"))
            if any(s["parent_id"] is None for s in spans):
                break
            assert time.monotonic() < deadline, spans
            time.sleep(0.1)
        roots = [s["name"] for s in spans if s["parent_id"] is None]
        phases = sorted({s["name"] for s in spans if s["name"].startswith("phase ")})
        assert (["cycle"], 1) == (roots, len({s["trace_id"] for s in spans}))
        assert sorted(f"phase {name}" for name in PHASES.names) == phases
        every: list[dict[str, Any]] = [json.loads(line) for line in (tmp_path / "serve" / "spans.jsonl").open()]
        by_id = {s["span_id"]: s for s in every}
        named = [s for s in every if s["attributes"].get("oneiros.request.cycle_id") == cycle_id]
        dreams = [s for s in named if s["name"] == "dream"]
        assert [("HTTP POST", "/api/v1/golems/g1/cycles", 202)] == [
            (
                (parent := by_id[s["parent_id"]])["name"],
                parent["attributes"]["url.path"],
                parent["attributes"]["http.response.status_code"],
            )
            for s in dreams
        ]
    finally:
        server.stop()


def _trace(http: httpx.Client, cycle_id: str, phases: int) -> list[dict[str, Any]]:
    """The cycle's spans once its root and a span per phase are in the span file."""
    deadline = time.monotonic() + 60
    while True:
        spans: list[dict[str, Any]] = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/trace"))
        names = [s["name"] for s in spans]
        if "cycle" in names and sum(n.startswith("phase ") for n in names) >= phases:
            return spans
        assert time.monotonic() < deadline, names
        time.sleep(0.2)


def test_a_cycle_the_server_queues_has_its_root_span_with_the_workers_phases_under_it(
    tmp_path: Path, redis_url: str
) -> None:
    """With ``--queue`` the server starts the cycle's trace (the root ``cycle`` span, ended once
    the first phase is enqueued) and a worker writing to the same span file runs the phases: the
    trace route gives one trace, whose only parentless span is ``cycle``, with a span per phase."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", "--queue", redis_url)
    workers = Workers(worker_command(redis_url, server.store, tmp_path / "serve" / "spans.jsonl"), tmp_path)
    try:
        http = server.client("admin")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        cycle_id = _ok(http.post("/golems/g1/cycles", json={}), 202)["cycle_id"]
        workers.start(1)
        spans = _trace(http, cycle_id, len(PHASES.names))
        assert (["cycle"], 1) == (
            [s["name"] for s in spans if s["parent_id"] is None],
            len({s["trace_id"] for s in spans}),
        )
    finally:
        workers.stop()
        server.stop()


_UNDER_AN_APPLICATIONS_PROVIDER = """
import os, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from oneiros.settings._runtime import TracingSettings
from oneiros.telemetry._spans import configure_tracing, start_span

exported = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exported))
trace.set_tracer_provider(provider)
os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
configure_tracing(TracingSettings(spans_path=sys.argv[1]))
start_span("cycle", {}).end()
print(len(exported.get_finished_spans()), sum(1 for _ in open(sys.argv[1])))
"""


def test_under_an_applications_provider_oneiros_adds_its_span_file_and_no_otlp_exporter(tmp_path: Path) -> None:
    """With a provider the application installed and the OTLP variables set, configuring tracing
    adds no OTLP exporter of oneiros's (that provider exports to them itself; without the exporter
    package it would have been refused): the span reaches the application's exporter once and the
    span file once."""
    done = subprocess.run(
        [sys.executable, "-c", _UNDER_AN_APPLICATIONS_PROVIDER, str(tmp_path / "spans.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ("1 1", "") == (done.stdout.strip(), done.stderr.strip()[-500:])


class _Collector:
    """An OTLP/HTTP receiver (protobuf, as the OTLP exporter sends by default) on a free port: every
    span each export request carried, exported twice if it came twice."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[dict[str, Any]] = []
        lock = threading.Lock()
        spans = self.spans

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    for resource in request.resource_spans:
                        for scope in resource.scope_spans:
                            spans.extend(
                                {
                                    "name": span.name,
                                    "trace_id": span.trace_id.hex(),
                                    "span_id": span.span_id.hex(),
                                    "parent_id": span.parent_span_id.hex() or None,
                                    "attributes": {kv.key: kv.value.string_value for kv in span.attributes},
                                }
                                for span in scope.spans
                            )
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", _free_port()), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[_Collector]:
    made = _Collector()
    try:
        yield made
    finally:
        made.close()


def test_under_opentelemetry_instrument_each_span_of_a_served_cycle_is_exported_once(
    tmp_path: Path, collector: _Collector
) -> None:
    """``opentelemetry-instrument oneiros serve`` with the usual OTLP variables: the collector gets
    the cycle's trace, one root ``cycle`` span with a span per phase, and no span twice (before,
    oneiros added an OTLP exporter of its own to the provider the instrumentation had installed)."""
    instrument = str(Path(sys.executable).with_name("opentelemetry-instrument"))
    env = {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env=env, launcher=(instrument,))
    try:
        cycle_id = _dreamt(server.client("admin"))["cycle_id"]
        wanted = {"cycle", *(f"phase {name}" for name in PHASES.names)}
        deadline = time.monotonic() + 60
        while True:
            roots = [
                s
                for s in collector.spans
                if (s["name"], s["attributes"].get("oneiros.cycle_id")) == ("cycle", cycle_id)
            ]
            traced = [s for s in collector.spans if roots and s["trace_id"] == roots[0]["trace_id"]]
            if wanted <= {s["name"] for s in traced}:
                break
            assert time.monotonic() < deadline, (collector.spans, server.log.read_text()[-2000:])
            time.sleep(0.2)
        server.stop()  # the batch processor flushes what is left on the way out
        ids = [s["span_id"] for s in collector.spans]
        traced = [s for s in collector.spans if s["trace_id"] == roots[0]["trace_id"]]
        assert ([], ["cycle"]) == (
            sorted({i for i in ids if ids.count(i) > 1}),
            [s["name"] for s in traced if s["parent_id"] is None],
        )
    finally:
        server.stop()
