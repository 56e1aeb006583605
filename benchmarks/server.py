"""``oneiros serve`` latency: reads on a 100k-event store, and append-to-SSE delivery.

    python benchmarks/server.py [--events 100000] [--samples 200] [--runs 3]

A real server process (uvicorn) over a SQLite store of ``--events`` events (dream cycles of 50
golems, the staging process's decisions), measured from a keep-alive httpx client:

- read latency p50/p99 of ``GET /dreaming/status``, ``GET /dreams`` (a page of 50) and
  ``POST /golems/{id}/recall`` (which also appends the recall event); baseline in the same run:
  ``GET /healthz`` (one query of the log head), the cost of HTTP, auth and JSON alone;
- append-to-SSE latency p50: from ``store.append`` returning in this process (as a worker's would)
  to the event arriving on ``/api/v1/events``, on SQLite and PostgreSQL; baseline in the same run:
  a thread of this process polling the log every millisecond for the same appends.

Figures are medians over ``--runs`` rounds. Goals (issue 13): p50 <= 5 ms for the reads; SSE p50
<= 50 ms on SQLite, <= 10 ms on PostgreSQL.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks._common import emit
from benchmarks.projections import PG, T0, build_log
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._types import EventMeta, GolemCreated
from oneiros.server._auth import add_token
from oneiros.store._store import EventStore, open_store

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, store_url: str, work: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.token = add_token(work / "tokens.toml", "bench", ("admin",))
        self.port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
        env |= {"ONEIROS_SERVER__TOKENS_FILE": str(work / "tokens.toml"), "ONEIROS_SPANS": "off"}
        command = [sys.executable, "-m", "oneiros", "serve", "--store", store_url, "--port", str(self.port)]
        self.log = (work / "serve.log").open("wb")
        started = time.perf_counter()
        self.proc = subprocess.Popen(command, cwd=work, env=env, stdout=self.log, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.perf_counter() - started > 600:
                raise RuntimeError((work / "serve.log").read_text())
            time.sleep(0.1)
        self.startup_s = time.perf_counter() - started
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def reads(served: Served, samples: int, runs: int) -> dict[str, Any]:
    """p50/p99 in ms of each read, median over rounds, each round interleaving the endpoints."""
    calls = {
        "healthz": lambda c: c.get(served.url + "/healthz"),
        "status": lambda c: c.get(served.url + "/api/v1/dreaming/status", params={"golem": "golem-7"}),
        "dreams": lambda c: c.get(served.url + "/api/v1/dreams", params={"golem": "golem-7", "limit": 50}),
        "recall": lambda c: c.post(
            served.url + "/api/v1/golems/golem-7/recall", json={"query": "waking eth insight", "limit": 10}
        ),
    }
    p50s: dict[str, list[float]] = {name: [] for name in calls}
    p99s: dict[str, list[float]] = {name: [] for name in calls}
    with httpx.Client(headers=served.headers, timeout=60) as client:
        for name, call in calls.items():  # warm-up, and a check that each answers
            answer = call(client)
            assert answer.status_code == 200, (name, answer.text)
        for _ in range(runs):
            times: dict[str, list[float]] = {name: [] for name in calls}
            for _ in range(samples):
                for name, call in calls.items():
                    started = time.perf_counter()
                    call(client)
                    times[name].append((time.perf_counter() - started) * 1000)
            for name, values in times.items():
                p50, p99 = _percentiles(values)
                p50s[name].append(p50)
                p99s[name].append(p99)
    return {
        name: {"p50_ms": round(statistics.median(p50s[name]), 2), "p99_ms": round(statistics.median(p99s[name]), 2)}
        for name in calls
    }


def sse_latency(served: Served, store: EventStore, samples: int) -> tuple[float, float]:
    """Median ms from an append returning to its event arriving on the stream, and to a 1 ms poll
    of the log in this process seeing it."""
    golem = f"lat-{uuid.uuid4().hex[:6]}"
    store.append(golem, 0, [(EventMeta(time=T0, event_id=uuid.uuid4().hex, golem_id=golem), GolemCreated())])
    arrived: dict[int, float] = {}
    polled: dict[int, float] = {}
    ready = threading.Event()
    stop = threading.Event()

    def listen() -> None:
        params = {"golem": golem, "raw": 1, "types": "ActivityRecorded"}
        with httpx.stream(
            "GET", served.url + "/api/v1/events", params=params, headers=served.headers, timeout=120
        ) as r:
            ready.set()
            for line in r.iter_lines():
                if line.startswith("id: "):
                    arrived[int(line[4:])] = time.perf_counter()
                if stop.is_set():
                    return

    def poll() -> None:
        last = store.head()
        while not stop.is_set():
            for record in store.read_all(after=last):
                polled[record.position] = time.perf_counter()
                last = record.position
            time.sleep(0.001)

    threads = [threading.Thread(target=listen, daemon=True), threading.Thread(target=poll, daemon=True)]
    for t in threads:
        t.start()
    ready.wait(30)
    time.sleep(0.5)
    sse: list[float] = []
    base: list[float] = []
    for i in range(samples):
        meta = EventMeta(time=T0, event_id=uuid.uuid4().hex, golem_id=golem)
        (record,) = store.append(golem, i + 1, [(meta, ActivityRecorded(kind="turn", detail=str(i)))])
        sent = time.perf_counter()
        deadline = sent + 5
        while (record.position not in arrived or record.position not in polled) and time.perf_counter() < deadline:
            time.sleep(0.0005)
        if record.position in arrived:
            sse.append((arrived[record.position] - sent) * 1000)
        if record.position in polled:
            base.append((polled[record.position] - sent) * 1000)
        time.sleep(0.02)
    stop.set()
    # One more event wakes the listener so it sees ``stop``.
    meta = EventMeta(time=T0, event_id=uuid.uuid4().hex, golem_id=golem)
    store.append(golem, samples + 1, [(meta, ActivityRecorded(kind="turn"))])
    return statistics.median(sse), statistics.median(base)


def postgres_sse() -> dict[str, Any]:
    """SSE latency on a PostgreSQL store of 5k events (the stream follows LISTEN/NOTIFY; the log's
    size does not enter the delivery path)."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = open_store(PG.format(schema=schema))
            build_log(store, 5_000)
            served = Served(PG.format(schema=schema), Path(tmp) / "pg")
            try:
                sse, base = sse_latency(served, store, 50)
                return {"sse_p50_ms_postgres": round(sse, 2), "sse_baseline_poll_ms_postgres": round(base, 2)}
            finally:
                served.stop()
                store.close()
    except Exception as exc:  # the PostgreSQL figures are null where no server is reachable
        print(f"PostgreSQL skipped: {exc}", file=sys.stderr)
        return {"sse_p50_ms_postgres": None, "sse_baseline_poll_ms_postgres": None}
    finally:
        try:
            import psycopg

            with psycopg.connect("host=127.0.0.1 dbname=test user=postgres", autocommit=True) as conn:
                for name in (schema, f"{schema}_proj"):
                    conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        except Exception:  # cleanup of a server that may be absent
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, Any] = {"events": args.events, "samples": args.samples, "runs": args.runs}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/events.db"
        store = open_store(url)
        started = time.perf_counter()
        build_log(store, args.events)
        figures["events"] = store.head()
        print(f"built {store.head()} events in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        served = Served(url, Path(tmp) / "sqlite")
        try:
            figures["startup_s_sqlite"] = round(served.startup_s, 2)
            measured = reads(served, args.samples, args.runs)
            sse, base = sse_latency(served, store, 50)
        finally:
            served.stop()
            store.close()
    figures |= {f"{name}_{k}": v for name, row in measured.items() for k, v in row.items()}
    healthz = measured["healthz"]["p50_ms"]
    figures |= {f"{name}_p50_vs_healthz": round(measured[name]["p50_ms"] / healthz, 2) for name in measured}
    figures |= {"sse_p50_ms_sqlite": round(sse, 2), "sse_baseline_poll_ms_sqlite": round(base, 2)}

    figures |= postgres_sse()
    emit(figures)


if __name__ == "__main__":
    main()
