"""``oneiros serve`` latency: reads on a 100k-event store, append-to-SSE delivery, and writes.

    python benchmarks/server.py [--events 100000] [--samples 200] [--runs 3] [--part all|reads|writes|scale]
        [--writers 4] [--seconds 5] [--server-cores 0.3]

A real server process (uvicorn) over a SQLite store of ``--events`` events (dream cycles of 50
golems, the staging process's decisions), measured from a keep-alive httpx client:

- read latency p50/p99 of ``GET /dreaming/status``, ``GET /dreams`` (a page of 50) and
  ``POST /golems/{id}/recall`` (which also appends the recall event); baseline in the same run:
  ``GET /healthz`` (one query of the log head), the cost of HTTP, auth and JSON alone;
- append-to-SSE latency p50: from ``store.append`` returning in this process (as a worker's would)
  to the event arriving on ``/api/v1/events``, on SQLite and PostgreSQL; baseline in the same run:
  a thread of this process polling the log every millisecond for the same appends.

Writes (issue 30), on a fresh store of each backend:

- write p50 of ``POST /golems/{id}/episodes`` (one episode) against the same append through the
  Python API in this process (``Golems.record_episodes``), interleaved in each round: the server
  answers once the append committed, so the ratio is HTTP, auth and JSON over the append itself.
  The client is a keep-alive ``http.client`` connection (``Lean``: its own cost is about 0.1 ms a
  request); the same from httpx (0.4 ms of its own) is reported beside it (``*_httpx``);
- writes/s with 1, 2 and 3 server processes on one PostgreSQL store, each server written by a
  client process of ``--writers`` threads (a golem each) for ``--seconds``; the first server
  follows the log, the others serve from the projections it keeps (``server.follow = false``).
  Twice: uncapped, and with each server capped to ``--server-cores`` of CPU by a cgroup (``*_capped``,
  where this process may write cgroups, as root): on a two-core machine one uncapped server, its
  client and PostgreSQL already take the whole CPU, so only capped servers, each standing for a
  server on a small machine of its own, can show whether more servers add throughput.

Figures are medians over ``--runs`` rounds. Goals (issue 13): p50 <= 5 ms for the reads; SSE p50
<= 50 ms on SQLite, <= 10 ms on PostgreSQL. Goals (issue 30): write p50 <= 2x the Python API's;
3 servers >= 2x the writes/s of one.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import http.client
import json
import multiprocessing
import os
import socket
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
import msgspec

from benchmarks._common import emit
from benchmarks.projections import PG, T0, build_log
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._types import Episode, EventMeta, GolemCreated
from oneiros.fsm._service import Golems
from oneiros.server._auth import add_token
from oneiros.store._store import EventStore, open_store

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CpuCap:
    """A CPU quota for one process (Linux cgroups, v2 or v1, writable by root): ``cores`` of CPU
    time per 100 ms period, so a server can stand for one on a small machine of its own. None where
    cgroups cannot be written (the figures then say the servers ran uncapped)."""

    PERIOD_US = 100_000

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, name: str, cores: float) -> CpuCap | None:
        quota = int(cores * cls.PERIOD_US)
        v2, v1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")
        try:
            if (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.subtree_control").read_text():
                (v2 / name).mkdir()
                (v2 / name / "cpu.max").write_text(f"{quota} {cls.PERIOD_US}")
                return cls(v2 / name)
            if (v1 / "cpu.cfs_quota_us").exists():
                (v1 / name).mkdir()
                (v1 / name / "cpu.cfs_period_us").write_text(str(cls.PERIOD_US))
                (v1 / name / "cpu.cfs_quota_us").write_text(str(quota))
                return cls(v1 / name)
        except OSError:
            pass
        return None

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rmdir()


class Served:
    def __init__(self, store_url: str, work: Path, *, follow: bool = True, cap: CpuCap | None = None) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.token = add_token(work / "tokens.toml", "bench", ("admin",))
        self.port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
        env |= {"ONEIROS_SERVER__TOKENS_FILE": str(work / "tokens.toml"), "ONEIROS_SPANS": "off"}
        env |= {} if follow else {"ONEIROS_SERVER__FOLLOW": "false"}
        command = [sys.executable, "-m", "oneiros", "serve", "--store", store_url, "--port", str(self.port)]
        self.log = (work / "serve.log").open("wb")
        started = time.perf_counter()
        self.proc = subprocess.Popen(command, cwd=work, env=env, stdout=self.log, stderr=self.log)
        if cap is not None:  # before the server starts its threads, which join the process's group
            cap.add(self.proc.pid)
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
        _drop_schema(schema)


def _drop_schema(schema: str) -> None:
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 dbname=test user=postgres", autocommit=True) as conn:
            for name in (schema, f"{schema}_proj"):
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    except Exception:  # cleanup of a server that may be absent
        pass


_EPISODE = msgspec.to_builtins(load_episodes(sample_episodes_path())[0])


def _episode(tick: int) -> dict[str, Any]:
    return {**_EPISODE, "tick": tick}


class Lean:
    """A keep-alive HTTP/1.1 client on the standard library's ``http.client``: a request costs this
    process about 0.1 ms, where httpx's costs 0.4 ms (measured here against a bare uvicorn app), so
    the server's share of a round trip is what the figures show."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {**headers, "Content-Type": "application/json"}

    def get(self, path: str) -> int:
        self.connection.request("GET", path, headers=self.headers)
        answer = self.connection.getresponse()
        answer.read()
        return answer.status

    def post(self, path: str, body: Any) -> int:
        self.connection.request("POST", path, body=json.dumps(body), headers=self.headers)
        answer = self.connection.getresponse()
        answer.read()
        return answer.status

    def close(self) -> None:
        self.connection.close()


class Floor:
    """``benchmarks/_floor_app.py`` on uvicorn over the same store: the least a Python server can
    do to record an episode (no auth, routing, follower or consistency), as a floor."""

    def __init__(self, store_url: str, work: Path) -> None:
        self.port = _free_port()
        env = {**os.environ, "FLOOR_STORE": store_url, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "uvicorn", "benchmarks._floor_app:app", "--port", str(self.port)]
        self.log = (work / "floor.log").open("wb")
        self.proc = subprocess.Popen([*command, "--log-level", "warning"], cwd=ROOT, env=env, stderr=self.log)
        deadline = time.perf_counter() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if self.proc.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError((work / "floor.log").read_text()) from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def write_latency(store_url: str, work: Path, samples: int, runs: int) -> dict[str, float]:
    """p50 ms of one episode POSTed to a server (from the lean client, and from httpx) against the
    same append through the Python API, ``GET /healthz`` on the same connection (the floor HTTP
    and auth set) and the same POST to the floor app (``Floor``), interleaved; medians over
    ``runs`` rounds."""
    store = open_store(store_url)
    served = Served(store_url, work)
    floor = Floor(store_url, work)
    lean, lean_floor = Lean(served.port, served.headers), Lean(floor.port, {})
    kinds = ("server", "api", "healthz", "server_httpx", "healthz_httpx", "floor")
    p50s: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        golems = Golems(store)
        golems.create("api")
        golems.create("floor")
        with httpx.Client(base_url=served.url, headers=served.headers, timeout=60) as client:
            assert client.post("/api/v1/golems", json={"golem_id": "http"}).status_code == 201
            tick = 0

            def timed(kind: str, call: Any, *args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                answer = call(*args, **kwargs)
                times[kind].append((time.perf_counter() - started) * 1000)
                return answer

            for _ in range(runs):
                times: dict[str, list[float]] = {kind: [] for kind in kinds}
                for _ in range(samples):
                    timed("healthz", lean.get, "/healthz")
                    tick += 1
                    status = timed("server", lean.post, "/api/v1/golems/http/episodes", {"episodes": [_episode(tick)]})
                    assert status == 201, status
                    timed("healthz_httpx", client.get, "/healthz")
                    tick += 1
                    body = {"episodes": [_episode(tick)]}
                    answer = timed("server_httpx", client.post, "/api/v1/golems/http/episodes", json=body)
                    assert answer.status_code == 201, answer.text
                    episode = msgspec.convert(_episode(tick), Episode)
                    timed("api", golems.record_episodes, "api", [episode])
                    status = timed(
                        "floor", lean_floor.post, "/api/v1/golems/floor/episodes", {"episodes": [_episode(tick)]}
                    )
                    assert status == 201, status
                for kind, values in times.items():
                    p50s[kind].append(_percentiles(values)[0])
    finally:
        lean.close()
        lean_floor.close()
        floor.stop()
        served.stop()
        store.close()
    p50 = {kind: statistics.median(values) for kind, values in p50s.items()}
    api = p50["api"]
    return {
        "server_p50_ms": round(p50["server"], 2),
        "api_p50_ms": round(api, 2),
        "ratio": round(p50["server"] / api, 2),
        "healthz_p50_ms": round(p50["healthz"], 2),
        # what the server adds beyond a request that does almost nothing, against the append itself
        "ratio_beyond_http": round(max(p50["server"] - p50["healthz"], 0.0) / api, 2),
        "server_httpx_p50_ms": round(p50["server_httpx"], 2),
        "ratio_httpx": round(p50["server_httpx"] / api, 2),
        "floor_p50_ms": round(p50["floor"], 2),
        "floor_ratio": round(p50["floor"] / api, 2),
    }


def _client(port: int, token: str, writers: int, seconds: float, start_at: float) -> int:
    """In a process of its own (the GIL of one client process would cap every server): ``writers``
    threads, each recording one episode at a time into a golem of its own from ``start_at`` (wall
    clock) for ``seconds``; how many writes answered."""
    counts: list[int] = []
    lock = threading.Lock()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def write() -> None:
        golem = f"w-{uuid.uuid4().hex[:8]}"
        done = 0
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def post(path: str, body: Any) -> None:
            connection.request("POST", "/api/v1" + path, body=json.dumps(body), headers=headers)
            answer = connection.getresponse()
            text = answer.read()
            assert answer.status == 201, text

        post("/golems", {"golem_id": golem})
        time.sleep(max(0.0, start_at - time.time()))
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            post(f"/golems/{golem}/episodes", {"episodes": [_episode(done + 1)]})
            done += 1
        connection.close()
        with lock:
            counts.append(done)

    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts)


def _throughput(servers: list[Served], writers: int, seconds: float) -> float:
    """Writes/s of one client process per server (``writers`` threads each) over ``seconds``."""
    start_at = time.time() + 3  # every client has made its golems by then
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(len(servers), mp_context=context) as pool:
        done = [pool.submit(_client, s.port, s.token, writers, seconds, start_at) for s in servers]
        return sum(f.result() for f in done) / seconds


def scale_out(writers: int, seconds: float, runs: int, cores: float | None) -> dict[str, Any]:
    """Writes/s with 1, 2 and 3 servers on one PostgreSQL store (a fresh schema per count),
    median over ``runs`` rounds each; with ``cores``, each server capped to that much CPU (where
    cgroups can be written), so that on a small machine each stands for a server on a machine of
    its own and the client processes and PostgreSQL do not take what the next server would use."""
    suffix = "" if cores is None else "_capped"
    figures: dict[str, Any] = {}
    for count in (1, 2, 3):
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        url = PG.format(schema=schema)
        caps: list[CpuCap] = []
        key = f"writes_per_s_{count}_servers_postgres{suffix}"
        try:
            with tempfile.TemporaryDirectory() as tmp:
                open_store(url).close()  # made once, before the servers race to make it
                if cores is not None:
                    caps = [c for i in range(count) if (c := CpuCap.make(f"oneiros-bench-{schema}-{i}", cores))]
                    if len(caps) < count:
                        raise RuntimeError("cgroups cannot be written here (needs root and a cpu controller)")
                # One follower keeps the shared projections up; the other servers serve from them
                # (server.follow = false): N followers would each apply every event.
                servers = [
                    Served(url, Path(tmp) / f"s{i}", follow=i == 0, cap=caps[i] if caps else None) for i in range(count)
                ]
                try:
                    rates = [_throughput(servers, writers, seconds) for _ in range(runs)]
                finally:
                    for served in servers:
                        served.stop()
            figures[key] = round(statistics.median(rates), 1)
        except Exception as exc:  # null where no PostgreSQL server is reachable, or no cgroup writable
            print(f"PostgreSQL scale-out{suffix} skipped: {exc}", file=sys.stderr)
            figures[key] = None
        finally:
            for cap in caps:
                cap.remove()
            _drop_schema(schema)
    one = figures[f"writes_per_s_1_servers_postgres{suffix}"]
    three = figures[f"writes_per_s_3_servers_postgres{suffix}"]
    figures[f"writes_3_servers_vs_1{suffix}"] = round(three / one, 2) if one and three else None
    if cores is not None:
        figures["server_cpu_cap_cores"] = cores
    return figures


def write_latencies(samples: int, runs: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = write_latency(f"sqlite:///{tmp}/writes.db", Path(tmp) / "sqlite", samples, runs)
    figures |= {f"write_{k}_sqlite": v for k, v in sqlite.items()}
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            postgres = write_latency(PG.format(schema=schema), Path(tmp) / "pg", samples, runs)
        figures |= {f"write_{k}_postgres": v for k, v in postgres.items()}
    except Exception as exc:  # null where no PostgreSQL server is reachable
        print(f"PostgreSQL writes skipped: {exc}", file=sys.stderr)
        figures |= {f"write_{k}_postgres": None for k in sqlite}
    finally:
        _drop_schema(schema)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--writers", type=int, default=4, help="client threads per server (scale-out)")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of a scale-out round")
    parser.add_argument("--server-cores", type=float, default=0.3, help="CPU cap of each server (capped scale-out)")
    parser.add_argument("--part", choices=("all", "reads", "writes", "scale"), default="all")
    args = parser.parse_args()
    figures: dict[str, Any] = {"samples": args.samples, "runs": args.runs}
    if args.part in ("all", "writes"):
        figures |= write_latencies(args.samples, args.runs)
    if args.part in ("all", "writes", "scale"):
        for cores in (None, args.server_cores):
            figures |= scale_out(args.writers, args.seconds, args.runs, cores)
    if args.part in ("all", "reads"):
        figures |= reads_and_sse(args.events, args.samples, args.runs)
    emit(figures)


def reads_and_sse(events: int, samples: int, runs: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"events": events}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/events.db"
        store = open_store(url)
        started = time.perf_counter()
        build_log(store, events)
        figures["events"] = store.head()
        print(f"built {store.head()} events in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        served = Served(url, Path(tmp) / "sqlite")
        try:
            figures["startup_s_sqlite"] = round(served.startup_s, 2)
            measured = reads(served, samples, runs)
            sse, base = sse_latency(served, store, 50)
        finally:
            served.stop()
            store.close()
    figures |= {f"{name}_{k}": v for name, row in measured.items() for k, v in row.items()}
    healthz = measured["healthz"]["p50_ms"]
    figures |= {f"{name}_p50_vs_healthz": round(measured[name]["p50_ms"] / healthz, 2) for name in measured}
    figures |= {"sse_p50_ms_sqlite": round(sse, 2), "sse_baseline_poll_ms_sqlite": round(base, 2)}

    return figures | postgres_sse()


if __name__ == "__main__":
    main()
