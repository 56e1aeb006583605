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
from rq.job import Job
from rq.registry import FailedJobRegistry
from rq.results import Result

from oneiros import ConfigError, Golems, InProcessExecutor, open_store
from oneiros.cli._workers import rq_settings
from oneiros.episodes import load_episodes, sample_episodes_path
from oneiros.settings import RqSettings, TracingSettings
from oneiros.workers import (
    CycleTimeout,
    JsonSerializer,
    RqExecutor,
    WorkerConfig,
    cycle_result,
    load_generator,
    make_worker,
    phase_job_id,
    sweep_failed_phases,
)
from tests.workers.support import FAST, cycle_events, new_golems


def _config(store_url: str, tmp_path: Path, generator: str = "offline", settings: RqSettings = FAST) -> WorkerConfig:
    simple = msgspec.structs.replace(settings, worker_class="simple")
    return WorkerConfig(
        store_url=store_url,
        generator=generator,
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
    expected = [
        "oneiros.workers._rq.phase_job",
        None,
        [],
        {"golem_id": golem_id, "cycle_id": "c1", "phase": "hypnagogic_onset"},
    ]
    assert expected == json.loads(data)
    meta = json.loads(connection.hget(f"rq:job:{phase_job_id(cycle_id, 'hypnagogic_onset')}", "meta") or b"")
    assert {"traceparent", "cycle_start_ns", "attempts"} == set(meta)


def test_rq_cycle_equals_in_process_cycle(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """The same phase code on a worker gives, event for event, the cycle the in-process executor gives."""
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
    again = queue.enqueue_call(done.func_name, kwargs=done.kwargs, job_id=done.id, meta=done.meta)
    make_worker(_config(sqlite_url, tmp_path), connection).work(burst=True)
    assert head == store.head()
    result = again.latest_result()
    assert result is not None
    assert (False, "nrem", 0) == (
        result.return_value["ran"],
        result.return_value["phase"],
        result.return_value["events_appended"],
    )


def test_phase_failing_for_good_interrupts_the_cycle(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """When a phase's last attempt fails, the cycle ends interrupted (source failure) with the reason."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    settings = msgspec.structs.replace(FAST, retries=1)
    executor = RqExecutor(golems, connection, settings)
    cycle_id = executor.start_cycle(golem_id)
    config = _config(sqlite_url, tmp_path, "tests.workers.support:failing_generator", settings)
    make_worker(config, connection).work(burst=True)
    result = executor.wait(golem_id, cycle_id, timeout=5)
    assert result.complete is None
    assert (
        "hypnagogic_onset failed for good after 2 attempts: "
        "RuntimeError: model router unavailable for hypnagogic_onset:partial:0" == result.interrupted
    )
    assert "Waking" == golems.state(golem_id).mode


def test_sweep_ends_a_cycle_whose_job_failed_without_callback(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """A phase job RQ marked failed on its own (no callback ran) still ends its cycle at the next
    sweep, with the failure's last line as the reason; a failed job of a vanished golem is passed over."""
    _store, golems, (golem_id,) = new_golems(sqlite_url, 1)
    connection = Redis.from_url(redis_url)
    cycle_id = RqExecutor(golems, connection, FAST).start_cycle(golem_id)
    job = Job.fetch(phase_job_id(cycle_id, "hypnagogic_onset"), connection=connection, serializer=JsonSerializer)
    registry = FailedJobRegistry(FAST.queue, connection=connection, serializer=JsonSerializer)
    registry.add(job, ttl=FAST.failure_ttl)
    Result.create_failure(job, FAST.failure_ttl, "Traceback...\nWork-horse terminated unexpectedly")
    queue = Queue(FAST.queue, connection=connection, serializer=JsonSerializer)
    ghost = queue.enqueue_call(job.func_name, kwargs={**job.kwargs, "golem_id": "ghost"}, job_id="ghost-job")
    registry.add(ghost, ttl=FAST.failure_ttl, exc_string="GolemNotFound")
    make_worker(_config(sqlite_url, tmp_path), connection)  # configures this process to run phase code
    assert 1 == sweep_failed_phases(connection, FAST)
    assert 0 == sweep_failed_phases(connection, FAST)
    state = golems.state(golem_id)
    assert "Waking" == state.mode
    assert 1 == state.cycles_interrupted
    assert (
        "hypnagogic_onset failed for good: Work-horse terminated unexpectedly"
        == cycle_result(golems, golem_id, cycle_id).interrupted
    )


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
        rq_settings('{"retrys": 2}')
    assert "--rq-settings: Object contains unknown field `retrys`" == str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_generator("sleep:soon")
    assert "generator 'sleep:soon': the delay after 'sleep:' must be seconds, as in sleep:0.2" == str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_generator("gpt")
    assert "generator 'gpt': expected offline, openai, sleep:SECONDS or module:factory" == str(caught.value)


def test_job_timeout_follows_the_phase_budget() -> None:
    """A phase job's timeout grows with its token budget, above a floor."""
    settings = RqSettings(min_job_timeout=60, seconds_per_token=0.05)
    assert 60 == settings.job_timeout(800)
    assert 120 == settings.job_timeout(2400)
