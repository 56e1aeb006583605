"""Phase jobs on RQ: the job that runs one phase, and the workers (the executor is ``_dispatch.py``).

Each phase of a cycle is one RQ job whose payload is ids only (golem, cycle, phase), serialized as
JSON on both sides; never pickle, which would let anyone who can write to Redis run code on the
workers. RQ's own tools read these jobs with ``--serializer oneiros.workers.JsonSerializer``
(``rq info``, ``rq requeue``, ``rq worker``). What a phase runs with comes from the cycle's
DreamStart in the log, never from the job or the worker's own config.

The chain is driven by the log, not by RQ dependencies: when a phase's events are committed, the
job enqueues the job of the phase the golem is now in. A job that finds its phase already done (a
retry after a crash, a duplicate) enqueues the golem's current phase instead, if no live job has
it, so a crash between the commit and the enqueue cannot stall a cycle.

A killed worker leaves its job ``started`` until its registry entry expires; the workers here let
that grace be configured, sweep the registries on a configurable interval (RQ then retries the job,
which resumes from the log), and end the cycle interrupted, with the reason, when a phase has failed
for good.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any, cast

import msgspec
from redis import Redis
from rq import Callback, Queue, Retry, SimpleWorker, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus, get_current_job
from rq.registry import FailedJobRegistry, clean_registries
from rq.utils import now as rq_now
from rq.worker import BaseWorker
from rq.worker_registration import clean_worker_registry

from oneiros._errors import OneirosError, StreamConflict
from oneiros.events import (
    DreamComplete,
    DreamEmpty,
    DreamInterrupted,
    DreamPhaseName,
)
from oneiros.fsm import Golems, GolemState
from oneiros.settings import RqSettings
from oneiros.workers._budget import phase_budget
from oneiros.workers._executor import CycleResult
from oneiros.workers._logging import log_fields
from oneiros.workers._phases import PhaseOutcome, run_phase
from oneiros.workers._runtime import WorkerConfig, runtime, set_worker_config
from oneiros.workers._tracing import (
    context_from,
    flush_spans,
    outcome_attributes,
    traced_phase,
    tracer,
)

__all__ = [
    "JsonSerializer",
    "PhaseWorker",
    "SimplePhaseWorker",
    "cycle_result",
    "end_failed_cycle",
    "enqueue_phase",
    "make_worker",
    "phase_failed",
    "phase_job",
    "phase_job_id",
    "sweep_failed_phases",
]

_log = logging.getLogger("oneiros.workers")
PHASE_JOB = "oneiros.workers._rq.phase_job"
PHASE_FAILED = "oneiros.workers._rq.phase_failed"
_LIVE = frozenset({JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED, JobStatus.SCHEDULED})


class JsonSerializer:
    """RQ's job data, meta and results as msgspec JSON: plain data in, plain data out.

    Never unpickles. A plain ``rq worker`` started without this serializer rewrites a job's meta
    (and its results) as pickle when it fails the job; that text reads back here as empty instead of
    as an error, so the job's phase and cycle can still be found and ended or resumed. The job
    data (function and ids) such a worker cannot rewrite: it never could read it."""

    @staticmethod
    def dumps(obj: Any, /) -> bytes:
        return msgspec.json.encode(obj)

    @staticmethod
    def loads(data: bytes, /) -> Any:
        if data[:1] == b"\x80":  # a pickle (protocol 2+) written by a worker without this serializer
            return {}
        return msgspec.json.decode(data)


def phase_job_id(cycle_id: str, phase: DreamPhaseName) -> str:
    """One job id per phase of a cycle, so a duplicate enqueue finds the live job instead.

    RQ takes only letters, digits, ``_`` and ``-`` in an id, so the cycle id goes in as a digest."""
    digest = hashlib.blake2b(cycle_id.encode(), digest_size=12).hexdigest()
    return f"oneiros-{digest}-{phase}"


def _queue(connection: Redis, settings: RqSettings) -> Queue:
    return Queue(settings.queue, connection=connection, serializer=JsonSerializer)


def enqueue_phase(
    connection: Redis,
    settings: RqSettings,
    state: GolemState,
    carrier: Mapping[str, str],
    budget_tokens: int,
    *,
    current_job_id: str | None = None,
) -> Job | None:
    """Enqueue the job of the phase ``state`` is in, unless a live job already has it.

    ``carrier`` is the cycle's trace context (``trace_carrier`` of its root span)."""
    assert state.cycle_id is not None
    assert state.phase is not None
    queue = _queue(connection, settings)
    job_id = phase_job_id(state.cycle_id, state.phase)
    if job_id == current_job_id:
        # Still in this job's own phase after it ran: another run of it appended first and is
        # alive (it just wrote); it carries the cycle on.
        return None
    existing = queue.fetch_job(job_id)
    if existing is not None and existing.get_status(refresh=False) in _LIVE:
        return None
    return queue.enqueue_call(
        PHASE_JOB,
        kwargs={"golem_id": state.golem_id, "cycle_id": state.cycle_id, "phase": state.phase},
        job_id=job_id,
        at_front=settings.next_phase_at_front and current_job_id is not None,
        timeout=settings.job_timeout(budget_tokens),
        result_ttl=settings.result_ttl,
        failure_ttl=settings.failure_ttl,
        retry=Retry(max=settings.retries),
        on_failure=Callback(PHASE_FAILED),
        meta={"trace": dict(carrier), "attempts": settings.retries + 1},
        description=f"{state.phase} of cycle {state.cycle_id} for golem {state.golem_id}",
    )


def _carrier(job: Job) -> dict[str, str]:
    """The cycle's trace context from the job's meta; an older job kept a bare traceparent, a
    job whose meta was lost (a foreign worker) has none and starts a trace of its own."""
    meta = job.meta or {}
    carrier = meta.get("trace")
    if isinstance(carrier, dict):
        return {str(k): str(v) for k, v in carrier.items()}
    traceparent = meta.get("traceparent")
    return {"traceparent": traceparent} if isinstance(traceparent, str) else {}


def _in_cycle(state: GolemState, cycle_id: str) -> bool:
    return state.mode == "Dreaming" and state.cycle_id == cycle_id


def _cycle_attributes(golem_id: str, cycle_id: str) -> dict[str, Any]:
    return {"oneiros.golem_id": golem_id, "oneiros.cycle_id": cycle_id}


def phase_job(golem_id: str, cycle_id: str, phase: DreamPhaseName) -> dict[str, Any]:
    """Run one phase of one cycle from the log, then enqueue whatever phase the golem is in next."""
    job = get_current_job()
    assert job is not None, "phase_job runs inside an RQ job"
    rt = runtime()
    carrier = _carrier(job)
    worker = job.worker_name or os.environ.get("RQ_WORKER_ID", "")
    attributes = {
        **_cycle_attributes(golem_id, cycle_id),
        "rq.job_id": job.id,
        "rq.attempt": _attempt(job, rt.config.rq),
        "rq.worker": worker,
        "host.name": socket.gethostname(),
    }
    fields: dict[str, Any] = {"cycle": cycle_id, "golem": golem_id, "phase": phase, "worker": worker}
    log_fields(_log, "phase start", {**fields, "attempt": attributes["rq.attempt"]})
    started = time.monotonic()
    golems = rt.golems()
    outcome = PhaseOutcome(phase=phase, ran=False)
    try:
        with traced_phase(context_from(carrier), phase, attributes) as span:
            try:
                outcome = run_phase(
                    golems,
                    golem_id,
                    cycle_id,
                    phase,
                    None,
                    rt.config.cycle,
                    generator_for=rt.generator_for,
                    logs=rt.logs(golems),
                )
            except StreamConflict:
                # Another run of this phase committed first, or the cycle was interrupted (a wake,
                # a death) while it ran: what is in the log stands, and ours was not written.
                outcome = PhaseOutcome(phase=phase, ran=False)
            span.set_attributes(outcome_attributes(outcome))
            state = golems.state(golem_id)
            if _in_cycle(state, cycle_id):
                assert state.phase is not None
                budget = outcome.next_budget_tokens or phase_budget(
                    rt.config.cycle.budget, state.behavioral_phase, state.phase
                )
                enqueue_phase(job.connection, rt.config.rq, state, carrier, budget, current_job_id=job.id)
            else:
                span.set_attribute("oneiros.cycle_ended", True)
        # What the log says came next: the next phase, or the cycle's end (this phase's, or an
        # interrupt a wake or a death recorded while the phase ran).
        then = state.phase if _in_cycle(state, cycle_id) else ("cycle ended" if outcome.ran else "cycle not running")
        log_fields(
            _log,
            "phase end",
            {
                **fields,
                "seconds": round(time.monotonic() - started, 3),
                "tokens": outcome.tokens_spent,
                "cost": round(outcome.cost_usd, 6),
                "ran": outcome.ran,
                "then": then,
            },
        )
        return msgspec.to_builtins(outcome)  # type: ignore[no-any-return]
    except Exception:
        log_fields(_log, "phase failed", {**fields, "seconds": round(time.monotonic() - started, 3)}, logging.WARNING)
        raise
    finally:
        flush_spans()


def _attempts(job: Job, settings: RqSettings) -> int:
    """How many attempts the job was enqueued with (its producer's settings, not this worker's)."""
    return int((job.meta or {}).get("attempts") or settings.retries + 1)


def _attempt(job: Job, settings: RqSettings) -> int:
    left = job.retries_left if job.retries_left is not None else _attempts(job, settings) - 1
    return _attempts(job, settings) - left


def end_failed_cycle(
    golems: Golems, carrier: Mapping[str, str], *, golem_id: str, cycle_id: str, phase: str, reason: str
) -> bool:
    """Interrupt the cycle with ``reason`` if the golem is still in ``phase`` of it; True if it did."""
    with tracer().start_as_current_span(
        "interrupt",
        context=context_from(carrier),
        attributes={**_cycle_attributes(golem_id, cycle_id), "oneiros.phase": phase, "oneiros.reason": reason},
    ):
        try:
            state = golems.state(golem_id)
            if not _in_cycle(state, cycle_id) or state.phase != phase:
                return False
            golems.interrupt(golem_id, "failure", reason)
        except OneirosError:
            # The golem moved on meanwhile (whoever moved it owns the cycle now) or is gone.
            return False
    return True


def phase_failed(
    job: Job, connection: Redis, exc_type: type[BaseException] | None, exc_value: BaseException | None, traceback: Any
) -> None:
    """RQ's failure callback: after the last attempt, end the cycle interrupted with the reason.

    RQ calls it on every failed attempt (and for abandoned jobs during registry cleanup, where an
    exception would stop the cleanup), so it checks for retries left and never raises.
    """
    try:
        if job.retries_left:
            return
        kwargs = job.kwargs
        rt = runtime()
        what = f"{exc_type.__name__}: {exc_value}" if exc_type is not None else "unknown error"
        reason = f"{kwargs['phase']} failed for good after {_attempts(job, rt.config.rq)} attempts: {what}"
        end_failed_cycle(rt.golems(), _carrier(job), reason=reason, **_address(kwargs))
        flush_spans()
    except Exception:  # a callback that raises would abort RQ's registry cleanup for every other job
        _log.exception("could not end the cycle of failed job %s", job.id)


def sweep_failed_phases(connection: Redis, settings: RqSettings, window: float = 3600.0) -> int:
    """End, with the reason, every cycle whose phase job failed (within ``window`` seconds) while
    the golem is still in that phase. Covers failures RQ records without calling the callback
    (a work-horse killed under a live worker with no retries left). Returns the cycles ended."""
    registry = FailedJobRegistry(settings.queue, connection=connection, serializer=JsonSerializer)
    since = time.time() + settings.failure_ttl - window
    ended = 0
    raw_ids: list[bytes] = connection.zrangebyscore(registry.key, since, "+inf")  # type: ignore[assignment]
    for raw in raw_ids:
        try:
            job = Job.fetch(raw.decode(), connection=connection, serializer=JsonSerializer)
        except NoSuchJobError:
            continue
        if job.func_name != PHASE_JOB:
            continue
        kwargs = job.kwargs
        rt = runtime()
        reason = f"{kwargs['phase']} failed for good: {_why(_failure_text(job))}"
        if end_failed_cycle(rt.golems(), _carrier(job), reason=reason, **_address(kwargs)):
            ended += 1
    if ended:
        flush_spans()
    return ended


def _address(kwargs: dict[str, Any]) -> dict[str, str]:
    return {"golem_id": kwargs["golem_id"], "cycle_id": kwargs["cycle_id"], "phase": kwargs["phase"]}


def _failure_text(job: Job) -> str | None:
    result = job.latest_result()
    return str(result.exc_string) if result is not None and result.exc_string else None


def _why(failure: str | None) -> str:
    """A failed job's reason in a line; a worker that could not even read the job is named as such."""
    if failure is not None and "DeserializationError" in failure:
        return (
            "a worker without oneiros's serializer took the job "
            "(run RQ tools with --serializer oneiros.workers.JsonSerializer)"
        )
    return _last_line(failure) or "job failed"


def _last_line(text: str | None) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


class _PhaseWorkerMixin:
    """Configurable heartbeat grace, and a sweep for failed cycles with each registry cleanup."""

    oneiros_settings: RqSettings = RqSettings()
    connection: Redis
    queues: list[Queue]
    _exc_handlers: list[Any]
    last_cleaned_at: Any

    def clean_registries(self) -> None:
        # RQ's own sweep, with the lock's lifetime from the settings instead of a fixed 899 s.
        for queue in self.queues:
            if queue.connection.set(
                queue.registry_cleaning_key, 1, nx=True, ex=self.oneiros_settings.cleaning_lock_ttl
            ):
                clean_registries(queue, self._exc_handlers)
                clean_worker_registry(queue)
                queue.intermediate_queue.cleanup(cast(BaseWorker, self), queue)
                queue.connection.delete(queue.registry_cleaning_key)
        self.last_cleaned_at = rq_now()

    def run_maintenance_tasks(self) -> None:
        super().run_maintenance_tasks()  # type: ignore[misc]  # the mixin precedes an RQ worker class
        try:
            sweep_failed_phases(self.connection, self.oneiros_settings)
        except Exception:  # maintenance must not kill the worker; the next sweep tries again
            _log.exception("sweeping failed phase jobs")


class PhaseWorker(_PhaseWorkerMixin, Worker):
    """A forking worker: each job in a work-horse of its own."""

    def get_heartbeat_ttl(self, job: Job) -> int:
        grace = self.oneiros_settings.heartbeat_grace
        if job.timeout and job.timeout > 0:
            return int(min(job.timeout - self.current_job_working_time, self.job_monitoring_interval)) + grace
        return int(self.job_monitoring_interval) + grace


class SimplePhaseWorker(_PhaseWorkerMixin, SimpleWorker):
    """A worker that runs jobs in its own process, keeping its store connections from job to job.

    RQ's SimpleWorker sends no heartbeat while a job runs, so a killed one is found only after the
    job's whole timeout; a thread here sends them, as a forking worker's main process does.
    """

    def get_heartbeat_ttl(self, job: Job) -> int:
        grace = self.oneiros_settings.heartbeat_grace
        if job.timeout and job.timeout > 0:
            return int(min(job.timeout, self.job_monitoring_interval)) + grace
        return int(self.job_monitoring_interval) + grace

    def execute_job(self, job: Job, queue: Queue) -> None:
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.job_monitoring_interval):
                try:
                    self.maintain_heartbeats(job)
                except Exception:  # a missed heartbeat only brings the abandonment check nearer
                    _log.debug("heartbeat for job %s failed", job.id, exc_info=True)

        heart = threading.Thread(target=beat, name=f"heartbeat-{job.id}", daemon=True)
        heart.start()
        try:
            super().execute_job(job, queue)
        finally:
            done.set()
            heart.join()


def make_worker(config: WorkerConfig, connection: Redis, name: str | None = None) -> PhaseWorker | SimplePhaseWorker:
    """An RQ worker on ``config``'s queue, with this process configured to run phase jobs."""
    set_worker_config(config)
    settings = config.rq
    cls: type[PhaseWorker | SimplePhaseWorker] = PhaseWorker if settings.worker_class == "fork" else SimplePhaseWorker
    worker = cls(
        [settings.queue],
        connection=connection,
        serializer=JsonSerializer,
        name=name,
        worker_ttl=settings.worker_ttl,
        job_monitoring_interval=settings.job_monitoring_interval,
        maintenance_interval=settings.maintenance_interval,
    )
    worker.oneiros_settings = settings
    return worker


def cycle_result(golems: Golems, golem_id: str, cycle_id: str, *, after_version: int = 0) -> CycleResult:
    """What the log says a cycle came to; ``after_version``, where known, skips the stream before it."""
    stream = golems.store.read_stream(golem_id, after_version=after_version)
    records = [r for r in stream if r.meta.cycle_id == cycle_id]
    complete = next((r.event for r in records if isinstance(r.event, DreamComplete)), None)
    interrupted = next((r.event for r in records if isinstance(r.event, DreamInterrupted)), None)
    empty = next((r.event for r in records if isinstance(r.event, DreamEmpty)), None)
    return CycleResult(
        cycle_id=cycle_id,
        golem_id=golem_id,
        events_appended=len(records),
        complete=complete,
        interrupted=(interrupted.reason or interrupted.source) if interrupted is not None else None,
        empty=empty.detail if empty is not None else None,
    )
