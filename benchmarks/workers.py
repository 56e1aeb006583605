"""Phase workers: cycles per second with 1, 2, 4 and 8 workers when every generator call takes a
simulated 200 ms, and the cost of a phase job against a no-op RQ job, in one run.

Runs its own redis-server on a free port and uses PostgreSQL at 127.0.0.1:5432 (database ``test``,
a schema of its own, dropped afterwards) when it answers, else a SQLite file. Workers are real
``oneiros worker`` processes (the default forking worker class), started and registered before
the clock starts; times are RQ's own job start and end stamps. Each figure is the median of ``--runs`` runs.

Figures (last line, JSON):
- ``cycles_per_s_{n}_workers``: cycles finished per second with n workers and 4n cycles started at once;
- ``speedup_8_workers``: throughput with 8 workers over throughput with 1;
- ``noop_job_ms`` and ``phase_job_ms``: wall time per job on one worker, queue kept full;
- ``phase_job_vs_noop``: ``phase_job_ms / noop_job_ms``;
- ``phase_work_ms``: the mean time inside a phase job's span (reading the log, the engine, the
  appends, enqueueing the next phase);
- ``job_overhead_vs_noop``: what a phase job costs besides its phase work, over a whole no-op job:
  ``(phase_job_ms - phase_work_ms) / noop_job_ms``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import msgspec
from redis import Redis
from rq import Queue, Worker
from rq.job import Job, JobStatus

from oneiros import Golems, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._phases import PHASES
from oneiros.settings._runtime import RqSettings
from oneiros.telemetry._spanfile import read_spans
from oneiros.workers._dispatch import RqExecutor
from oneiros.workers._rq import JsonSerializer, phase_job_id

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = RqSettings(queue="bench")
NOOP_JOBS = 150
NOOP = "benchmarks.workers.noop"  # the workers import it by this name from the repository root
CYCLES_PER_WORKER = 4  # cycles in flight per worker: enough that ramp-up and tail weigh little
OVERHEAD_CYCLES = 30  # five phase jobs each


def noop() -> None:
    """The baseline job: RQ's own cost and nothing else."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _postgres_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
    except OSError:
        return False
    return True


class Bench:
    def __init__(self, work: Path) -> None:
        self.work = work
        port = _free_port()
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.redis_proc = subprocess.Popen(
            [server, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(work)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        self.redis = Redis.from_url(self.redis_url)
        while True:
            try:
                self.redis.ping()
                break
            except Exception:
                time.sleep(0.05)
        self.schema: str | None = None
        self.spans = work / "spans.jsonl"

    def fresh_store(self) -> str:
        self.drop_schema()
        self.redis.flushall()
        if _postgres_up():
            self.schema = f"bench_{uuid.uuid4().hex[:10]}"
            return f"postgresql://postgres@127.0.0.1:5432/test?schema={self.schema}"
        path = self.work / f"{uuid.uuid4().hex}.db"
        return f"sqlite:///{path}"

    def drop_schema(self) -> None:
        if self.schema is None:
            return
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        self.schema = None

    def start_workers(self, store_url: str, count: int) -> list[subprocess.Popen[bytes]]:
        command = [
            sys.executable, "-m", "oneiros", "worker", "--queue", self.redis_url, "--store", store_url,
            "--spans", str(self.spans),
            "--rq-settings", msgspec.json.encode(SETTINGS).decode(),
        ]  # fmt: skip
        procs = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL) for _ in range(count)]
        queue = Queue(SETTINGS.queue, connection=self.redis, serializer=JsonSerializer)
        while Worker.count(queue=queue) < count:
            time.sleep(0.05)
        return procs

    @staticmethod
    def stop_workers(procs: list[subprocess.Popen[bytes]]) -> None:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)

    def run_jobs(self, store_url: str, workers: int, job_ids: list[str]) -> float:
        """Start the workers on jobs already queued (or to be enqueued by them) and return the time
        from the first job's start to the last one's end, as RQ recorded them: worker start-up and
        the enqueueing side stay out of the figure."""
        procs = self.start_workers(store_url, workers)
        try:
            deadline = time.monotonic() + 600
            while True:
                jobs = Job.fetch_many(job_ids, connection=self.redis, serializer=JsonSerializer)
                if all(j is not None and j.get_status(refresh=False) == JobStatus.FINISHED for j in jobs):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("jobs unfinished after 600 s")
                time.sleep(0.05)
        finally:
            self.stop_workers(procs)
        finished = [j for j in jobs if j is not None and j.started_at and j.ended_at]
        return (max(j.ended_at for j in finished) - min(j.started_at for j in finished)).total_seconds()

    def start_cycles(self, count: int, generator: str) -> tuple[str, list[str]]:
        """A fresh store with ``count`` golems, each with a cycle started on ``generator`` (the cycle
        records it; the workers run what it says); returns the store and the ids of every phase job
        the cycles will run."""
        store_url = self.fresh_store()
        with open_store(store_url) as store:
            golems = Golems(store)
            episodes = load_episodes(sample_episodes_path())
            cycle = CycleSettings(generator=GeneratorSettings(kind=generator))
            executor = RqExecutor(golems, self.redis, SETTINGS, cycle)
            job_ids = []
            for index in range(count):
                golems.create(f"b{index:03d}")
                golems.record_episodes(f"b{index:03d}", episodes)
                cycle_id = executor.start_cycle(f"b{index:03d}")
                job_ids.extend(phase_job_id(cycle_id, phase) for phase in PHASES.names)
        return store_url, job_ids

    def cycles_per_second(self, workers: int, generator: str) -> float:
        cycles = CYCLES_PER_WORKER * workers
        store_url, job_ids = self.start_cycles(cycles, generator)
        return cycles / self.run_jobs(store_url, workers, job_ids)

    def noop_job_seconds(self) -> float:
        self.fresh_store()
        queue = Queue(SETTINGS.queue, connection=self.redis, serializer=JsonSerializer)
        job_ids = [queue.enqueue_call(NOOP).id for _ in range(NOOP_JOBS)]
        return self.run_jobs("memory://", 1, job_ids) / NOOP_JOBS

    def phase_job_seconds(self) -> tuple[float, float]:
        """Time per phase job on one worker, and the mean time inside a phase job's span."""
        store_url, job_ids = self.start_cycles(OVERHEAD_CYCLES, "offline")
        self.spans.unlink(missing_ok=True)
        per_job = self.run_jobs(store_url, 1, job_ids) / len(job_ids)
        phases = [s.duration_ms / 1000 for s in read_spans(self.spans) if s.name.startswith("phase ")]
        return per_job, sum(phases) / len(phases)

    def close(self) -> None:
        self.drop_schema()
        self.redis_proc.terminate()
        self.redis_proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.2, help="Seconds per simulated generator call.")
    args = parser.parse_args()
    os.environ.setdefault("ONEIROS_SPANS", "off")
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp))
        try:
            figures: dict[str, float | str] = {"store": "postgresql" if _postgres_up() else "sqlite", "runs": args.runs}
            throughput: dict[int, float] = {}
            for workers in (1, 2, 4, 8):
                samples = [bench.cycles_per_second(workers, f"sleep:{args.delay}") for _ in range(args.runs)]
                throughput[workers] = statistics.median(samples)
                figures[f"cycles_per_s_{workers}_workers"] = round(throughput[workers], 3)
                print(f"{workers} workers: {throughput[workers]:.3f} cycles/s (runs: {[round(s, 3) for s in samples]})")
            figures["speedup_8_workers"] = round(throughput[8] / throughput[1], 3)
            noop_runs, phase_runs, work_runs = [], [], []
            for _ in range(args.runs):  # interleaved, so a burst of load falls on both sides
                noop_runs.append(bench.noop_job_seconds())
                phase, work = bench.phase_job_seconds()
                phase_runs.append(phase)
                work_runs.append(work)
            noop_s, phase_s, work_s = (statistics.median(x) for x in (noop_runs, phase_runs, work_runs))
            figures |= {
                "noop_job_ms": round(noop_s * 1000, 2),
                "phase_job_ms": round(phase_s * 1000, 2),
                "phase_work_ms": round(work_s * 1000, 2),
                "phase_job_vs_noop": round(phase_s / noop_s, 3),
                "job_overhead_vs_noop": round((phase_s - work_s) / noop_s, 3),
            }
            print(
                f"no-op job {noop_s * 1000:.1f} ms, phase job {phase_s * 1000:.1f} ms"
                f" ({work_s * 1000:.1f} ms of phase work)"
            )
        finally:
            bench.close()
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
