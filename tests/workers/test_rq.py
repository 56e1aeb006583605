"""Phase jobs on RQ, run in this process by a SimpleWorker against a private redis-server: payloads
are JSON, the same phase code gives the same cycle as in-process, duplicates append nothing, and a
phase that fails for good ends its cycle interrupted with the reason."""

from __future__ import annotations

import json
import pickle
import zlib
from pathlib import Path

import msgspec
import pytest
from redis import Redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from rq.results import Result

from oneiros import ConfigError, Golems, InProcessExecutor, open_store
from oneiros._errors import CycleTimeout
from oneiros.config._load import load_config
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.generators._offline import OfflineGenerator
from oneiros.lab._rerun import rerun_cycle
from oneiros.runtime._executor import cycle_result
from oneiros.runtime._process import WorkerConfig, load_generator
from oneiros.runtime._reconcile import Reconciler
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import RqSettings, TracingSettings
from oneiros.workers._dispatch import RqExecutor
from oneiros.workers._rq import JsonSerializer, RqPhaseJobs, make_worker, phase_job_id
from tests.workers.support import FAST, cycle_events, new_golems


def _config(store_url: str, tmp_path: Path, settings: RqSettings = FAST) -> WorkerConfig:
    simple = msgspec.structs.replace(settings, worker_class="simple")
    return WorkerConfig(
        store_url=store_url,
        rq=simple,
        tracing=TracingSettings(spans_path=str(tmp_path / "spans.jsonl")),
    )


def test_job_payload_in_redis_is_json_with_ids_only(redis_url: str, sqlite_url: str) -> None:
    """The stored job data is zlib-compressed JSON naming the function and three ids; pickle cannot read it."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    cycle_id = RqExecutor(golems, connection, FAST).start_cycle(golem_id, cycle_id="c1")
    raw = connection.hget(f"rq:job:{phase_job_id(cycle_id, 'hypnagogic_onset')}", "data")
    assert isinstance(raw, bytes)
    data = zlib.decompress(raw)
    assert not data.startswith(b"\x80")  # every pickle protocol >= 2 opens with PROTO
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(data)
    expected: list[object] = [
        "oneiros.workers._rq.phase_job",
        None,
        [],
        {"golem_id": golem_id, "cycle_id": "c1", "phase": "hypnagogic_onset"},
    ]
    assert expected == json.loads(data)
    meta = json.loads(connection.hget(f"rq:job:{phase_job_id(cycle_id, 'hypnagogic_onset')}", "meta") or b"")
    assert {"trace", "attempts"} == set(meta)
    assert {"traceparent"} == set(meta["trace"])


def test_rq_cycle_equals_in_process_cycle(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """The same phase code on a worker gives, event for event, the cycle the in-process executor gives,
    and the worker's cycle re-runs identical from the log."""
    store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    executor = RqExecutor(golems, connection, FAST)
    cycle_id = executor.start_cycle(golem_id, cycle_id="same-cycle")
    assert make_worker(_config(sqlite_url, tmp_path), connection).work(burst=True)
    result = executor.wait(golem_id, cycle_id, timeout=5)
    assert result.interrupted is None
    assert result.complete is not None

    reference_store = open_store("memory://")
    reference = Golems(reference_store)
    reference.create(golem_id)
    reference.record_episodes(golem_id, load_episodes(sample_episodes_path()))
    in_process = InProcessExecutor(reference).run_cycle(golem_id, cycle_id="same-cycle")
    assert cycle_events(reference_store, golem_id, "same-cycle") == cycle_events(store, golem_id, cycle_id)
    assert in_process.complete == result.complete
    assert in_process.events_appended == result.events_appended
    rerun = rerun_cycle(store, cycle_id, CycleSettings(), shape_of=OfflineGenerator())
    assert (True, 0) == (rerun.identical, rerun.model_calls)


def test_duplicate_phase_job_appends_nothing(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """A phase job run again after its cycle ended finds the phase done: the log does not move."""
    store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    executor = RqExecutor(golems, connection, FAST)
    cycle_id = executor.start_cycle(golem_id)
    worker = make_worker(_config(sqlite_url, tmp_path), connection)
    worker.work(burst=True)
    head = store.head()
    done = Job.fetch(phase_job_id(cycle_id, "nrem"), connection=connection, serializer=JsonSerializer)
    queue = Queue(FAST.queue, connection=connection, serializer=JsonSerializer)
    assert done.func_name is not None
    again = queue.enqueue_call(done.func_name, kwargs=done.kwargs, job_id=done.id, meta=done.meta)
    make_worker(_config(sqlite_url, tmp_path), connection).work(burst=True)
    assert head == store.head()
    result = again.latest_result()
    assert result is not None
    returned = result.return_value
    assert returned is not None
    assert (False, "nrem", 0) == (returned["ran"], returned["phase"], returned["events_appended"])


def test_phase_failing_for_good_interrupts_the_cycle(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """When a phase's last attempt fails, the cycle ends interrupted (source failure) with the reason."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    settings = msgspec.structs.replace(FAST, retries=1)
    failing = CycleSettings(generator=GeneratorSettings(kind="tests.workers.support:failing_generator"))
    executor = RqExecutor(golems, connection, settings, failing)
    cycle_id = executor.start_cycle(golem_id)
    make_worker(_config(sqlite_url, tmp_path, settings), connection).work(burst=True)
    result = executor.wait(golem_id, cycle_id, timeout=5)
    assert result.complete is None
    assert (
        "hypnagogic_onset failed for good after 2 attempts: "
        "RuntimeError: model router unavailable for hypnagogic_onset:partial:0" == result.interrupted
    )
    assert "Waking" == golems.state(golem_id).mode


def test_reconciler_ends_a_cycle_whose_job_failed_without_callback(
    redis_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    """A phase job RQ marked failed on its own (no callback ran) still ends its cycle at the
    reconciler's next pass, with the failure's last line as the reason; a failed job of a golem
    that does not exist is passed over, and a second pass finds nothing left to do."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    cycle_id = RqExecutor(golems, connection, FAST).start_cycle(golem_id)
    job = Job.fetch(phase_job_id(cycle_id, "hypnagogic_onset"), connection=connection, serializer=JsonSerializer)
    registry = FailedJobRegistry(FAST.queue, connection=connection, serializer=JsonSerializer)
    job.set_status(JobStatus.FAILED)
    registry.add(job, ttl=FAST.failure_ttl)
    Result.create_failure(job, FAST.failure_ttl, "Traceback...\nWork-horse terminated unexpectedly")
    queue = Queue(FAST.queue, connection=connection, serializer=JsonSerializer)
    assert job.func_name is not None
    ghost = queue.enqueue_call(job.func_name, kwargs={**job.kwargs, "golem_id": "ghost"}, job_id="ghost-job")
    registry.add(ghost, ttl=FAST.failure_ttl, exc_string="GolemNotFound")
    reconciler = Reconciler(golems, RecoverySettings(), jobs=RqPhaseJobs(connection, FAST, RecoverySettings()))
    (found,) = reconciler.pass_once()
    assert ("interrupted", "hypnagogic_onset failed for good: Work-horse terminated unexpectedly") == (
        found.action,
        found.detail,
    )
    assert [] == reconciler.pass_once()
    state = golems.state(golem_id)
    assert "Waking" == state.mode
    assert 1 == state.cycles_interrupted
    assert found.detail == cycle_result(golems, golem_id, cycle_id).interrupted


def test_waiting_past_the_timeout_raises_cycle_timeout(redis_url: str, sqlite_url: str) -> None:
    """Waiting on a cycle no worker runs ends with CycleTimeout naming the cycle and the wait."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST)
    cycle_id = executor.start_cycle(golem_id, cycle_id="stuck")
    with pytest.raises(CycleTimeout) as caught:
        executor.wait(golem_id, cycle_id, timeout=0.2)
    assert "cycle 'stuck' of golem 'g000' had not ended after 0.2 s" == str(caught.value)


def test_bad_settings_and_generator_specs_are_config_errors() -> None:
    """A misspelt setting or an unloadable generator is refused with a message naming it."""
    with pytest.raises(ConfigError) as caught:
        load_config(path="/dev/null", environ={"ONEIROS_RQ_SETTINGS": '{"retrys": 2}'})
    assert str(caught.value).startswith(
        "invalid setting rq.retrys = 2 (from env ONEIROS_RQ_SETTINGS): expected one of the keys failure_ttl,"
    )
    with pytest.raises(ConfigError) as caught:
        load_generator("sleep:soon")
    assert "generator 'sleep:soon': the delay after 'sleep:' must be seconds, as in sleep:0.2" == str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_generator("gpt")
    assert (
        "invalid setting cycle.generator.kind = 'gpt': expected offline, openai, sleep:SECONDS or module:factory"
        == str(caught.value)
    )


def test_job_timeout_follows_the_phase_budget() -> None:
    """A phase job's timeout grows with its token budget, above a floor."""
    settings = RqSettings(min_job_timeout=60, seconds_per_token=0.05)
    assert 60 == settings.job_timeout(800)
    assert 120 == settings.job_timeout(2400)


def test_a_worker_without_a_queue_says_which_settings_name_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """`oneiros worker` with no queue in flags, environment or file exits 2 naming the three places."""
    from typer.testing import CliRunner

    from oneiros.cli import app

    monkeypatch.delenv("ONEIROS_QUEUE", raising=False)
    result = CliRunner().invoke(app, ["worker", "--config", "/dev/null"])
    assert 2 == result.exit_code
    expected = "error: no queue configured: set --queue, ONEIROS_QUEUE or `queue` in oneiros.toml"
    assert expected == " ".join(result.output.split())


def test_a_worker_serves_the_queue_the_server_hands_its_cycles_to(
    redis_url: str, sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An oneiros.toml naming only ``server.queue`` (the queue `oneiros serve` enqueues cycles on):
    `oneiros worker --burst` on it serves that queue, finds no job and exits 0, rather than saying
    no queue is configured."""
    from typer.testing import CliRunner

    from oneiros.cli import app

    monkeypatch.delenv("ONEIROS_QUEUE", raising=False)
    open_store(sqlite_url).close()  # a worker serves a store that exists
    config = tmp_path / "oneiros.toml"
    config.write_text(f'store = "{sqlite_url}"\n\n[server]\nqueue = "{redis_url}"\n')
    result = CliRunner().invoke(app, ["worker", "--burst", "--config", str(config)])
    assert (0, "no phase job was waiting") == (result.exit_code, " ".join(result.output.split()))


def test_a_cycle_recorded_before_settings_runs_with_the_workers_own(
    redis_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    """A cycle whose DreamStart carries no settings (written before v2) still runs: its phases
    take the worker's own cycle settings, here a hardened budget, and the cycle completes."""
    from oneiros.events._types import DreamPhase
    from oneiros.workers._rq import enqueue_phase

    store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    cycle_id = golems.fall_asleep(golem_id, "owner", budget_tokens=1000)  # no settings: as before v2
    enqueue_phase(connection, FAST, golems.state(golem_id), {}, 1000)
    hardened = CycleSettings(budget=CycleBudget(tier="hardened"))
    config = msgspec.structs.replace(_config(sqlite_url, tmp_path), cycle=hardened)
    make_worker(config, connection).work(burst=True)
    assert cycle_result(golems, golem_id, cycle_id).complete is not None
    phases = [r.event for r in store.read_stream(golem_id) if isinstance(r.event, DreamPhase)]
    budgets = {e.phase: e.budget_tokens for e in phases}
    assert 18_000 == budgets["rem"]  # a hardened cycle's REM share, from the worker's settings


def test_daemon_resumes_a_cycle_whose_jobs_redis_lost(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """The daemon's tick reconciles its dreaming golem on the queue: a cycle whose job Redis lost
    (FLUSHALL) gets a PhaseResumed and a job of attempt 1, which a worker runs to the cycle's end."""
    import time

    from oneiros.daemon._daemon import Daemon
    from oneiros.events._liveness import PhaseResumed
    from oneiros.settings._recovery import RecoverySettings
    from oneiros.settings._scheduling import ScheduleSettings

    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    executor = RqExecutor(golems, connection, FAST)
    cycle_id = executor.start_cycle(golem_id)
    executor.detach()
    connection.flushall()
    recovery = RecoverySettings(grace_seconds=0.2, interval_seconds=0.1)
    daemon = Daemon(golems, golem_id, executor, schedule=ScheduleSettings(), recovery=recovery)
    time.sleep(0.3)
    assert daemon.tick() is None
    resumed = [r.event for r in golems.store.read_stream(golem_id) if isinstance(r.event, PhaseResumed)]
    assert [("hypnagogic_onset", 1)] == [(e.phase, e.attempt) for e in resumed]
    job = Job.fetch(phase_job_id(cycle_id, "hypnagogic_onset", 1), connection=connection, serializer=JsonSerializer)
    assert JobStatus.QUEUED == job.get_status()
    make_worker(_config(sqlite_url, tmp_path), connection).work(burst=True)
    assert cycle_result(golems, golem_id, cycle_id).complete is not None
    assert "Waking" == golems.state(golem_id).mode


def test_a_job_failed_by_a_worker_of_another_store_is_recorded_and_resumed(
    redis_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    """A worker whose store lacks the golem (two deployments sharing a queue) fails the phase job;
    RQ records that failure (the job in the failed registry, its traceback in the result, as
    `rq info` and `rq requeue` need), so the reconciler of the golem's own store sees a wrong
    worker and resumes the phase instead of ending the cycle with "job failed"."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    settings = msgspec.structs.replace(FAST, retries=1)
    cycle_id = RqExecutor(golems, connection, settings).start_cycle(golem_id)
    other = f"sqlite:///{tmp_path}/other.db"
    open_store(other).close()
    make_worker(_config(other, tmp_path, settings), connection).work(burst=True)
    job_id = phase_job_id(cycle_id, "hypnagogic_onset")
    job = Job.fetch(job_id, connection=connection, serializer=JsonSerializer)
    result = job.latest_result()
    registry = FailedJobRegistry(settings.queue, connection=connection, serializer=JsonSerializer)
    assert (JobStatus.FAILED, [job_id]) == (job.get_status(), registry.get_job_ids())
    assert result is not None
    assert f"oneiros._errors.GolemNotFound: golem '{golem_id}' does not exist" == _last(result.exc_string)
    recovery = RecoverySettings(grace_seconds=0.01)
    reconciler = Reconciler(golems, recovery, jobs=RqPhaseJobs(connection, settings, recovery))
    (found,) = reconciler.pass_once()
    assert ("resumed", 1) == (found.action, found.attempt)
    assert "Dreaming" == golems.state(golem_id).mode


def _last(text: str | None) -> str:
    return (text or "").strip().splitlines()[-1]
