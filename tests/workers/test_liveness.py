"""No golem is ever stranded: real processes killed, a real Redis restarted empty, with RQ's
DEFAULT settings and the default recovery settings.

- workers (and their work-horses) SIGKILLed mid-phase: the reconciler of a surviving worker
  resumes the phase within 60 s;
- a private redis-server SIGKILLed and restarted without persistence mid-cycle: the workers stay
  up and every cycle resumes within 60 s of Redis answering again;
- an in-process ``oneiros dream`` SIGKILLed mid-cycle: the daemon (``oneiros run``) finishes it;
- ``worker --burst`` against a missing or a wrong store: one line, non-zero, nothing taken.

After each: every cycle completed or ended with a recorded reason, no golem left dreaming,
nothing lost or duplicated, live states equal a replay, projections fed as the log grew equal a
rebuild. ``ONEIROS_CHAOS_SCALE`` (1 by default) multiplies golems and kills; each test prints the
times to resume it measured.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgspec
import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from oneiros import Golems, open_store
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import GenerationRecorded
from oneiros.projections._db import open_projection_db
from oneiros.projections._runner import ProjectionRunner
from oneiros.projections._service import ProjectionSettings, make_projections
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._runtime import RqSettings
from oneiros.store._leases import open_leases
from oneiros.store._store import EventStore
from oneiros.workers._dispatch import RqExecutor
from oneiros.workers._rq import SimplePhaseWorker
from tests.conftest import postgres_url
from tests.projections_support import assert_rows_equal_a_rebuild
from tests.workers.conftest import RedisServer
from tests.workers.support import (
    ROOT,
    Workers,
    check_log,
    new_golems,
    phase_of,
    wait_until_awake,
    worker_command,
)

pytestmark = [pytest.mark.redis]

SCALE = max(1, int(os.environ.get("ONEIROS_CHAOS_SCALE", "1")))
DEFAULT_RQ = RqSettings()
WITHIN = 60.0


class Follower:
    """Projections fed from the log while the chaos goes on, as a follower process would."""

    def __init__(self, store: EventStore, tmp_path: Path) -> None:
        self.store = store
        self.db = open_projection_db(f"sqlite:///{tmp_path}/projections.db")
        self.runner = ProjectionRunner(store, self.db, make_projections(ProjectionSettings()))

    def step(self) -> None:
        self.runner.catch_up()

    def check(self) -> None:
        self.runner.catch_up()
        assert_rows_equal_a_rebuild(self.store, self.db)


def _resumed_at(store: EventStore, golem_id: str) -> list[float]:
    return [r.meta.time.timestamp() for r in store.read_stream(golem_id) if isinstance(r.event, PhaseResumed)]


def _wait(check: object, timeout: float, what: str, follower: Follower | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        if follower is not None:
            follower.step()
        time.sleep(0.3)


@pytest.mark.postgres
@pytest.mark.parametrize("worker_class", ["fork", "simple"])
def test_a_killed_workers_phase_resumes_within_a_minute_with_default_rq_settings(
    worker_class: str, redis_url: str, pg_schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker holding a phase's lease (for the forking class, its work-horse holds it; both
    are killed) is SIGKILLed mid-NREM with RQ's default settings, under which RQ alone had not
    retried the phase after 11 minutes. A surviving worker's reconciler resumes the phase within
    60 s, reusing the recorded generations; every cycle completes with nothing duplicated."""
    url = postgres_url(pg_schema)
    store, golems, ids = new_golems(url, SCALE)
    follower = Follower(store, tmp_path)
    settings = msgspec.structs.replace(DEFAULT_RQ, worker_class=worker_class)
    workers = Workers(worker_command(redis_url, url, tmp_path / "spans.jsonl", settings=settings), tmp_path)
    leases = open_leases(store)
    cycle = CycleSettings(generator=GeneratorSettings(kind="sleep:0.3"))
    executor = RqExecutor(golems, Redis.from_url(redis_url), settings, cycle)
    waits: list[float] = []
    try:
        workers.start(2)
        for golem_id in ids:
            executor.start_cycle(golem_id, cycle_id=f"kill-{golem_id}")
        executor.detach()
        for golem_id in ids:
            _wait(lambda g=golem_id: _mid_nrem(store, g), 60, "NREM never recorded a generation", follower)
            lease = leases.get(golem_id)
            assert lease is not None
            assert "nrem" == lease.phase
            holder = int(lease.holder.split(" pid ")[1].split()[0])
            (victim,) = [p for p in workers.alive() if p.pid == holder or holder in workers.horses(p)]
            killed_at = time.time()
            assert (1 if worker_class == "fork" else 0) == workers.kill(victim)
            workers.start(1)
            _wait(lambda g=golem_id: _resumed_at(store, g), WITHIN, "the killed phase was not resumed", follower)
            waits.append(_resumed_at(store, golem_id)[0] - killed_at)
        wait_until_awake(golems, ids, timeout=120)
        assert len(workers.alive()) == 2
    finally:
        workers.stop()
    with capsys.disabled():
        print(f"\n{worker_class}: time to resume after a worker SIGKILL: {', '.join(f'{w:.1f} s' for w in waits)}")
    assert all(w < WITHIN for w in waits)
    states = check_log(store, golems, ids)
    assert len(ids) == sum(s.cycles_completed for s in states.values())
    follower.check()


def _mid_nrem(store: EventStore, golem_id: str) -> bool:
    records = store.read_stream(golem_id)
    return any(isinstance(r.event, GenerationRecorded) and r.event.phase == "nrem" for r in records)


def test_a_worker_waits_out_a_redis_timeout_rather_than_quitting(redis_server: RedisServer) -> None:
    """A Redis that stops answering for 1.5 s (its process SIGSTOPped, then SIGCONTed) times out a
    worker's heartbeat and its blocking pop: RQ's own loop quits on such a timeout (exit status 0,
    the worker gone, as the Redis-restart test once saw). The phase worker waits for Redis and
    carries on: the heartbeat returns, and the pop finds the queue empty."""
    assert redis_server.proc is not None
    pid = redis_server.proc.pid
    # No retries of redis-py's own (ten by default, which outlast a short stall): the timeout
    # reaches the worker.
    connection = Redis.from_url(redis_server.url, retry=Retry(NoBackoff(), 0))
    worker = SimplePhaseWorker(["phases"], connection=connection)
    # RQ raised the socket timeout above its blocking pop's; a stall longer than that is what a
    # worker meets when Redis stops answering. 0.2 s stands for it here.
    connection.connection_pool.connection_kwargs["socket_timeout"] = 0.2
    connection.connection_pool.reset()  # connections made from now on take it
    # A pop that does not block (None, as in burst mode): a blocking one outlasts the 0.2 s timeout.
    for call in (worker.heartbeat, lambda: worker.dequeue_job_and_maintain_ttl(None)):
        os.kill(pid, signal.SIGSTOP)
        resume = threading.Timer(1.5, os.kill, (pid, signal.SIGCONT))
        resume.start()
        started = time.monotonic()
        try:
            answer = call()
        finally:
            resume.join()
        assert (None, True) == (answer, time.monotonic() - started >= 1.0)


def test_cycles_caught_by_a_redis_restart_resume_within_a_minute(
    redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Redis is SIGKILLed mid-cycle and started again empty (no persistence): every queued job,
    registry and worker registration is gone. The workers do not exit: a phase that committed
    while Redis was away logs a line and is left to the reconciler, which resumes each stranded
    cycle within 60 s of Redis answering again; every cycle completes or ends with a reason."""
    url = f"sqlite:///{tmp_path}/events.db"
    store, golems, ids = new_golems(url, 3 * SCALE)
    follower = Follower(store, tmp_path)
    workers = Workers(worker_command(redis_server.url, url, tmp_path / "spans.jsonl", settings=DEFAULT_RQ), tmp_path)
    cycle = CycleSettings(generator=GeneratorSettings(kind="sleep:0.1"))
    executor = RqExecutor(golems, Redis.from_url(redis_server.url), DEFAULT_RQ, cycle)
    try:
        workers.start(2)
        for golem_id in ids:
            executor.start_cycle(golem_id, cycle_id=f"redis-{golem_id}")
        executor.detach()
        _wait(lambda: _mid_nrem(store, ids[0]), 60, "no cycle got under way", follower)
        redis_server.kill()
        time.sleep(1.5)  # phases finish and commit meanwhile; their next enqueue finds no Redis
        redis_server.start()
        back = time.time()
        _wait(lambda: not _dreaming(golems, ids), 120, "cycles still dreaming after Redis came back", follower)
        exited = [(p.pid, p.returncode) for p in workers.procs if p.poll() is not None]
        assert [] == exited, "a worker exited when Redis went away"
    finally:
        workers.stop()
    waits = [min(at) - back for g in ids if (at := [t for t in _resumed_at(store, g) if t >= back])]
    with capsys.disabled():
        shown = ", ".join(f"{w:.1f} s" for w in waits) or "none needed"
        print(f"\ntime to resume after Redis came back: {shown}")
    assert waits, "no cycle needed the reconciler: the restart came too late to catch one"
    assert all(w < WITHIN for w in waits)
    states = check_log(store, golems, ids)
    assert len(ids) == sum(s.cycles_completed + s.cycles_interrupted for s in states.values())
    follower.check()


def _dreaming(golems: Golems, ids: list[str]) -> list[str]:
    return [g for g in ids if golems.state(g).mode == "Dreaming"]


def test_a_killed_dream_is_finished_by_the_daemon(tmp_path: Path) -> None:
    """An in-process `oneiros dream` SIGKILLed mid-cycle; `oneiros run` on that golem (with no
    dream of its own due) finds the cycle stranded once the lease lapsed and runs the rest of it
    on its cycle thread: the golem wakes with the cycle complete."""
    url = f"sqlite:///{tmp_path}/events.db"
    env = {
        **os.environ,
        "ONEIROS_STORE": url,
        "ONEIROS_SPANS": str(tmp_path / "spans.jsonl"),
        "ONEIROS_GOLEM": "crash",
        "ONEIROS_RECOVERY__LEASE_SECONDS": "1.5",
        "ONEIROS_RECOVERY__RENEW_SECONDS": "0.3",
        "ONEIROS_RECOVERY__GRACE_SECONDS": "0.5",
        "ONEIROS_RECOVERY__INTERVAL_SECONDS": "0.5",
        "ONEIROS_SCHEDULE__MAX_PER_DAY": "0",
    }
    dream = subprocess.Popen(
        [sys.executable, "-m", "oneiros", "dream", "--sample", "--generator", "sleep:0.1"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait(lambda: phase_of(url, "crash") == "nrem", 60, "the dream never reached NREM")
        time.sleep(0.5)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(dream.pid, signal.SIGKILL)
        dream.wait()
    store = open_store(url)
    assert "Dreaming" == Golems(store).state("crash").mode
    run = subprocess.run(
        [sys.executable, "-m", "oneiros", "run", "--ticks", "30", "--tick-seconds", "0.2", "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert 0 == run.returncode, run.stderr
    summary = msgspec.json.decode(run.stdout)
    assert ("Waking", [True]) == (summary["mode"], [c["complete"] for c in summary["cycles"]])
    assert 1 == len(_resumed_at(store, "crash"))
    check_log(store, Golems(store), ["crash"])


def test_a_burst_worker_on_a_missing_or_wrong_store_takes_nothing(redis_url: str, tmp_path: Path) -> None:
    """`worker --burst` pointed at a store that does not exist, or at one without the golem of a
    waiting job, says so in one line and exits 2 before taking a job; the right worker then runs
    the cycle to its end."""
    right = f"sqlite:///{tmp_path}/events.db"
    store, golems, (golem_id,) = new_golems(right, 1)
    open_store(f"sqlite:///{tmp_path}/other.db").close()
    cycle_id = RqExecutor(golems, Redis.from_url(redis_url), DEFAULT_RQ).start_cycle(golem_id)
    spans = tmp_path / "spans.jsonl"

    def burst(store_url: str) -> subprocess.CompletedProcess[str]:
        command = worker_command(redis_url, store_url, spans, "--burst", settings=DEFAULT_RQ)
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)

    missing = burst(f"sqlite:///{tmp_path}/typo.db")
    assert 2 == missing.returncode
    assert missing.stderr.startswith(f"error: no store at sqlite:///{tmp_path}/typo.db")
    assert 1 == len(missing.stderr.strip().splitlines())
    assert not (tmp_path / "typo.db").exists()
    wrong = burst(f"sqlite:///{tmp_path}/other.db")
    assert (2, 1) == (wrong.returncode, len(wrong.stderr.strip().splitlines()))
    assert (
        f"error: phase jobs on queue 'oneiros' are for golems that store sqlite:///{tmp_path}/other.db "
        f"does not have ({golem_id}): point --store at the store their cycles started on"
    ) == " ".join(wrong.stderr.split())
    assert "hypnagogic_onset" == golems.state(golem_id).phase
    ran = burst(right)
    assert 0 == ran.returncode, ran.stderr
    assert golems.state(golem_id).last_complete is not None
    assert cycle_id == golems.state(golem_id).last_cycle_id
    check_log(store, golems, [golem_id])


def test_a_worker_started_before_its_store_waits_for_it(redis_url: str, tmp_path: Path) -> None:
    """A long-running worker started before anything created its store (compose starts workers
    beside the daemon) says once that it waits, then runs the cycle `dream --wait` starts there."""
    store_url = f"sqlite:///{tmp_path}/events.db"
    workers = Workers(worker_command(redis_url, store_url, tmp_path / "spans.jsonl"), tmp_path)
    (proc,) = workers.start()
    log = tmp_path / "worker-0.log"
    try:
        deadline = time.monotonic() + 60
        while "waiting for it to be created" not in log.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.1)
        assert not (tmp_path / "events.db").exists()
        dreamt = subprocess.run(
            [sys.executable, "-m", "oneiros", "dream", "--sample", "--wait", "--store", store_url,
             "--queue", redis_url],
            cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        assert 0 == dreamt.returncode, dreamt.stdout + dreamt.stderr
        assert proc.poll() is None
    finally:
        workers.stop()
    said = [line for line in log.read_text().splitlines() if "waiting for it to be created" in line]
    path = tmp_path / "events.db"
    waiting = "waiting for it to be created (by `oneiros dream`, `run` or `serve`)"
    expected = f"no store at {store_url}: no file '{path}'; {waiting}"
    assert [expected] == said
