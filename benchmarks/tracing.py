"""What tracing an in-process cycle costs, and what recording a cycle's settings adds to the log.

Run: ``python benchmarks/tracing.py [--runs 5]``. Each case runs one whole in-process cycle on the
bundled sample episodes (memory store, offline generator); figures are medians of ``--runs``
cycles, each in a fresh process so the global TracerProvider starts unset. ``untraced`` is the
baseline: spans go nowhere, so OpenTelemetry is never loaded and the tracing seam's spans are one
shared no-op (``ONEIROS_SPANS=off``, a library user who configures nothing). ``api_no_sdk`` is an
application that loaded OpenTelemetry's API without an SDK (the API's own no-op spans);
``traced_no_export`` installs the SDK with no destination; ``traced_span_file`` writes every span
to a JSON-lines file, as ``oneiros dream`` does by default. ``dream_process_*`` are whole
``oneiros dream --sample`` processes (start-up and imports included) with ``ONEIROS_SPANS=off``
and with the default span file. The last stdout line is one JSON object: seconds per cycle and
per process, ratios to the baseline, spans per cycle, and the bytes of a DreamStart with and
without its recorded settings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CYCLE = """
import sys, time
from oneiros import Golems, InProcessExecutor, load_episodes, open_store, sample_episodes_path
case, spans = sys.argv[1], sys.argv[2]
if case == "api_no_sdk":
    import opentelemetry.trace
elif case != "untraced":
    from oneiros.settings import TracingSettings
    from oneiros.telemetry._tracing import install  # the SDK, even with no destination
    install(TracingSettings(spans_path=spans if case == "traced_span_file" else None))
golems = Golems(open_store("memory://"))
golems.create("g")
golems.record_episodes("g", load_episodes(sample_episodes_path()))
InProcessExecutor(golems).run_cycle("g")  # warm: imports, caches
started = time.perf_counter()
InProcessExecutor(golems).run_cycle("g")
print(time.perf_counter() - started)
"""

_SIZES = """
from oneiros.events import DreamStart, EventMeta
from oneiros.events._codec import encode_event
from oneiros.settings import CycleSettings
from datetime import datetime, UTC
meta = EventMeta(time=datetime(2026, 1, 1, tzinfo=UTC), event_id="e", golem_id="g", cycle_id="c")
bare = len(encode_event(meta, DreamStart(cycle_id="c", trigger="owner"))[1])
full = len(encode_event(meta, DreamStart(cycle_id="c", trigger="owner", settings=CycleSettings(seed=0)))[1])
print(bare, full)
"""


def _dream_process(work: Path, spans: str) -> float:
    """Wall time of one ``oneiros dream --sample`` process on a fresh in-memory store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONEIROS_", "OTEL_"))} | {"ONEIROS_SPANS": spans}
    argv = [sys.executable, "-m", "oneiros", "dream", "--sample", "--json", "--store", "memory://"]
    started = time.perf_counter()
    subprocess.run(argv, cwd=work, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    cases = ("untraced", "api_no_sdk", "traced_no_export", "traced_span_file")
    times: dict[str, list[float]] = {c: [] for c in cases}
    spans_per_cycle = 0
    with tempfile.TemporaryDirectory() as work:
        for run in range(runs):
            for case in cases:  # interleaved, so machine noise hits every case alike
                spans = Path(work) / f"spans-{run}.jsonl"
                out = subprocess.run(
                    [sys.executable, "-c", _CYCLE, case, str(spans)], capture_output=True, text=True, check=True
                )
                times[case].append(float(out.stdout.strip()))
                if case == "traced_span_file":
                    spans_per_cycle = len(spans.read_text().splitlines()) // 2
            for case, path in (("dream_process_untraced", "off"), ("dream_process_span_file", f"{work}/dream.jsonl")):
                times.setdefault(case, []).append(_dream_process(Path(work), path))
    bare, full = (int(x) for x in subprocess.run(
        [sys.executable, "-c", _SIZES], capture_output=True, text=True, check=True
    ).stdout.split())  # fmt: skip
    medians = {c: statistics.median(v) for c, v in times.items()}
    base = medians["untraced"]
    figures: dict[str, float | int] = {f"{c}_s": round(m, 4) for c, m in medians.items()}
    figures |= {f"{c}_vs_untraced": round(m / base, 3) for c, m in medians.items() if c in cases[1:]}
    process = medians["dream_process_span_file"] / medians["dream_process_untraced"]
    figures["dream_process_span_file_vs_untraced"] = round(process, 3)
    figures |= {"spans_per_cycle": spans_per_cycle, "dream_start_bytes": bare, "dream_start_with_settings_bytes": full}
    figures["runs"] = runs
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
