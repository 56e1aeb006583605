"""Phase jobs on RQ: the job that runs one phase, and the workers (the executor is ``_dispatch.py``).

Each phase of a cycle is one RQ job whose payload is ids only (golem, cycle, phase), serialized as
JSON on both sides; never pickle, which would let anyone who can write to Redis run code on the
workers. RQ's own tools read these jobs with ``--serializer oneiros.workers.JsonSerializer``
(``rq info``, ``rq requeue``, ``rq worker``). What a phase runs with comes from the cycle's
DreamStart in the log, never from the job or the worker's own config.

The chain is driven by the log, not by RQ dependencies: when a phase's events are committed, the
job enqueues the job of the phase the golem is now in. While it runs, a phase job holds the
golem's lease on its phase (``_liveness.py``), so the reconciler (``_reconcile.py``) can tell a
phase that runs from one nobody runs any more: a killed worker, a job Redis lost, a crash between
the commit and the enqueue. It resumes such a phase with a job of a new attempt number
(:func:`phase_job_id`), so a late run of an abandoned job and the resumed one never share a job.
A phase job that finds another live holder's lease on its phase, or its phase already done,
appends nothing and enqueues nothing.

RQ's own registries and maintenance stay as RQ ships them; a phase that failed for good (its
retries spent) ends its cycle interrupted, with the reason, from RQ's failure callback or, when
that never ran, from the reconciler.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, NamedTuple

import msgspec
from redis import Redis
from redis.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Callback, Queue, Retry, SimpleWorker, Worker
from rq.job import Job, JobStatus, get_current_job

from oneiros._errors import GolemNotFound, OneirosError, StreamConflict
from oneiros.events._types import DreamPhaseName
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.runtime._budget import phase_budget
from oneiros.runtime._executor import cycle_result
from oneiros.runtime._holding import Claim, holder_name, holding
from oneiros.runtime._phase import PhaseOutcome, run_phase
from oneiros.runtime._process import Runtime, WorkerConfig, runtime, set_worker_config
from oneiros.runtime._reconcile import JobLook, Reconciler
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import RqSettings
from oneiros.store._leases import open_leases
from oneiros.telemetry._logging import log_fields
from oneiros.telemetry._spans import (
    current_span,
    flush_spans,
    outcome_attributes,
    traced_phase,
)
from oneiros.workers._commands import CommandListener

__all__ = [
    "JsonSerializer",
    "PhaseWorker",
    "RqPhaseJobs",
    "SimplePhaseWorker",
    "check_worker_store",
    "cycle_result",
    "end_failed_cycle",
    "enqueue_phase",
    "make_worker",
    "phase_failed",
    "phase_job",
    "phase_job_id",
    "reconciling",
    "waiting_golems",
]

_log = logging.getLogger("oneiros.workers")
PHASE_JOB = "oneiros.workers._rq.phase_job"
PHASE_FAILED = "oneiros.workers._rq.phase_failed"
_RECONCILER_JOIN_SECONDS = 3.0
"""How long a stopping worker waits for a reconciler pass under way (a pass takes milliseconds when
the store and the queue answer; a stop is to take no more than 5 s)."""
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


def phase_job_id(cycle_id: str, phase: DreamPhaseName, attempt: int = 0) -> str:
    """One job id per phase of a cycle and resume attempt, so a duplicate enqueue finds the live
    job instead; the reconciler's ``attempt``-th resume gets a job of its own.

    RQ takes only letters, digits, ``_`` and ``-`` in an id, so the cycle id goes in as a digest."""
    digest = hashlib.blake2b(cycle_id.encode(), digest_size=12).hexdigest()
    return f"oneiros-{digest}-{phase}" + (f"-r{attempt}" if attempt else "")


def _queue(connection: Redis, settings: RqSettings) -> Queue:
    return Queue(settings.queue, connection=connection, serializer=JsonSerializer)


def enqueue_phase(  # noqa: PLR0913 - the queue, the phase and its trace and budget; the rest keyword-only
    connection: Redis,
    settings: RqSettings,
    state: GolemState,
    carrier: Mapping[str, str],
    budget_tokens: int,
    *,
    current_job_id: str | None = None,
    attempt: int = 0,
) -> Job | None:
    """Enqueue the job of the phase ``state`` is in, unless a live job already has it.

    ``carrier`` is the cycle's trace context (``trace_carrier`` of its root span); ``attempt`` is
    the reconciler's resume number (0 for the phase's first job)."""
    assert state.cycle_id is not None
    assert state.phase is not None
    queue = _queue(connection, settings)
    job_id = phase_job_id(state.cycle_id, state.phase, attempt)
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
    """Run one phase of one cycle from the log, then enqueue whatever phase the golem is in next.

    Holds the golem's lease on the phase meanwhile; leaves the phase alone when another live holder
    has it (a resumed run, or the run this job was abandoned by)."""
    job = get_current_job()
    assert job is not None, "phase_job runs inside an RQ job"
    rt = runtime()
    worker = job.worker_name or os.environ.get("RQ_WORKER_ID", "")
    fields: dict[str, Any] = {"cycle": cycle_id, "golem": golem_id, "phase": phase, "worker": worker}
    with holding(rt.leases(), rt.config.recovery, Claim(golem_id, cycle_id, phase, holder_name(job.id))) as other:
        if other is not None:
            log_fields(_log, "phase held elsewhere", {**fields, "holder": other.holder})
            return msgspec.to_builtins(PhaseOutcome(phase=phase, ran=False))  # type: ignore[no-any-return]
        return _run_phase_job(_Running(job, rt, golem_id, cycle_id, phase, fields))


class _Running(NamedTuple):
    """The phase job under way: the RQ job, this process's runtime, the phase's address (golem,
    cycle, phase) and the fields every log line of it carries."""

    job: Job
    rt: Runtime
    golem_id: str
    cycle_id: str
    phase: DreamPhaseName
    fields: dict[str, Any]


def _run_phase_job(running: _Running) -> dict[str, Any]:
    job, rt, golem_id, cycle_id, phase, fields = running
    carrier = _carrier(job)
    attributes = {
        **_cycle_attributes(golem_id, cycle_id),
        "rq.job_id": job.id,
        "rq.attempt": _attempt(job, rt.config.rq),
        "rq.worker": fields["worker"],
        "host.name": socket.gethostname(),
    }
    log_fields(_log, "phase start", {**fields, "attempt": attributes["rq.attempt"]})
    started = time.monotonic()
    golems = rt.golems()
    outcome = PhaseOutcome(phase=phase, ran=False)
    try:
        with traced_phase(carrier, phase, attributes) as span:
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
            if _in_cycle(state, cycle_id) and outcome.ran:
                _enqueue_next(running, state, carrier, outcome)
            elif not _in_cycle(state, cycle_id):
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


def _enqueue_next(running: _Running, state: GolemState, carrier: Mapping[str, str], outcome: PhaseOutcome) -> None:
    """Enqueue the phase this one led to. The phase is committed whatever happens here: a queue
    that cannot be reached costs a line in the log, and the reconciler enqueues the phase later."""
    job, rt, fields = running.job, running.rt, running.fields
    assert state.phase is not None
    budget = outcome.next_budget_tokens or phase_budget(rt.config.cycle.budget, state.behavioral_phase, state.phase)
    try:
        enqueue_phase(job.connection, rt.config.rq, state, carrier, budget, current_job_id=job.id)
    except RedisError as exc:
        log_fields(
            _log,
            "next phase not enqueued; the reconciler will resume it",
            {**fields, "next": state.phase, "error": f"{type(exc).__name__}: {exc}"},
            logging.WARNING,
        )


def _attempts(job: Job, settings: RqSettings) -> int:
    """How many attempts the job was enqueued with (its producer's settings, not this worker's)."""
    return int((job.meta or {}).get("attempts") or settings.retries + 1)


def _attempt(job: Job, settings: RqSettings) -> int:
    left = job.retries_left if job.retries_left is not None else _attempts(job, settings) - 1
    return _attempts(job, settings) - left


def end_failed_cycle(  # noqa: PLR0913 - RQ's failure path: the cycle's address and reason, keyword-only
    golems: Golems, carrier: Mapping[str, str], *, golem_id: str, cycle_id: str, phase: str, reason: str
) -> bool:
    """Interrupt the cycle with ``reason`` if the golem is still in ``phase`` of it and no live
    lease says another run of the phase is under way; True if it did."""
    with current_span(
        "interrupt",
        {**_cycle_attributes(golem_id, cycle_id), "oneiros.phase": phase, "oneiros.reason": reason},
        parent=carrier,
    ):
        try:
            state = golems.state(golem_id)
            if not _in_cycle(state, cycle_id) or state.phase != phase:
                return False
            lease = open_leases(golems.store).get(golem_id)
            if lease is not None and lease.covers(cycle_id, phase) and lease.in_force():
                return False  # a resumed run holds the phase: the failure of an older job is moot
            golems.interrupt(golem_id, "failure", reason, known=state)
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


class RqPhaseJobs:
    """The queue as the reconciler sees it: a phase's jobs, one per resume attempt."""

    def __init__(self, connection: Redis, settings: RqSettings, recovery: RecoverySettings) -> None:
        self.connection = connection
        self.settings = settings
        self.recovery = recovery

    def look(self, cycle_id: str, phase: DreamPhaseName, attempts: int) -> JobLook:
        """Live when a job of the phase waits in the queue or has just started (its lease is not
        taken yet); ``failed`` when the latest one failed for good in this worker's store's way."""
        ids = [phase_job_id(cycle_id, phase, attempt) for attempt in range(attempts + 1)]
        jobs = Job.fetch_many(ids, connection=self.connection, serializer=JsonSerializer)
        now = datetime.now(UTC)
        failed: str | None = None
        latest = True
        for job in reversed(jobs):
            if job is None:
                continue
            status = job.get_status(refresh=False)
            if status in (JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED):
                return JobLook(live=True, detail=f"job {job.id} {status.value}")
            if status == JobStatus.STARTED and _age(job.started_at, now) < self.recovery.grace_seconds:
                return JobLook(live=True, detail=f"job {job.id} just started on {job.worker_name or '?'}")
            if latest and status == JobStatus.FAILED:
                text = _failure_text(job)
                # A worker whose store lacks the golem is a wrong worker, not a failed phase.
                failed = None if "GolemNotFound" in (text or "") else _why(text)
            latest = False
        return JobLook(live=False, failed=failed)

    def enqueue(self, state: GolemState, attempt: int, budget_tokens: int, carrier: Mapping[str, str]) -> None:
        enqueue_phase(self.connection, self.settings, state, carrier, budget_tokens, attempt=attempt)


def _age(started: datetime | None, now: datetime) -> float:
    if started is None:
        return 0.0
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return (now - started).total_seconds()


class _PhaseWorkerMixin:
    """A phase job's failure in one log line, a worker that outlives Redis going away, and one that
    stops within seconds of SIGTERM (once its job, if any, has ended)."""

    oneiros_settings: RqSettings = RqSettings()
    connection: Redis
    pubsub_channel_name: str  # RQ's (a property of its worker)
    handle_payload: Callable[[dict[str, Any]], None]  # RQ's: runs a command sent on the channel
    pubsub: PubSub | None
    _commands: CommandListener | None = None

    def subscribe(self) -> None:
        # RQ's teardown waited on redis-py's listener thread with no bound (``_commands.py`` says
        # why); ours stops within its JOIN_SECONDS. RQ's ``pubsub_thread`` stays None.
        listener = CommandListener(self.connection, self.pubsub_channel_name, self.handle_payload)
        self._commands = listener.start()
        self.pubsub = listener.pubsub

    def unsubscribe(self) -> None:
        listener, self._commands = self._commands, None
        if listener is not None and not listener.stop():
            _log.warning("command listener %s still in a handler; left to end with the process", listener.channel)

    def execute_job(self, job: Job, queue: Queue) -> None:
        try:
            super().execute_job(job, queue)  # type: ignore[misc]  # the mixin precedes an RQ worker class
        except (RedisConnectionError, RedisTimeoutError) as exc:
            # RQ's bookkeeping after the job could not reach Redis (restarted, or gone). The phase's
            # events are committed or not, as the log says; the reconciler resumes what is left.
            _log.warning("job %s: queue unreachable after the job (%s); waiting for it", job.id, exc)
            self._wait_for_redis()

    # RQ retries a dequeue that cannot connect, but quits its work loop, exit status 0, on a Redis
    # *timeout*: what a restarted Redis gave a worker's heartbeat or blocking pop now and then (the
    # liveness test saw a worker quit). Both calls wait for Redis and try again instead.

    def dequeue_job_and_maintain_ttl(self, timeout: int | None, max_idle_time: int | None = None) -> Any:
        while True:
            try:
                return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)  # type: ignore[misc]
            except RedisTimeoutError as exc:
                _log.warning("queue timed out while waiting for a job (%s); waiting for it", exc)
                self._wait_for_redis()

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        while True:
            try:
                super().heartbeat(timeout, pipeline)  # type: ignore[misc]
                return
            except RedisTimeoutError as exc:
                _log.warning("queue timed out on the worker's heartbeat (%s); waiting for it", exc)
                self._wait_for_redis()

    def _wait_for_redis(self) -> None:
        pause = 0.5
        while True:
            try:
                self.connection.ping()
                return
            except RedisError:
                time.sleep(pause)
                pause = min(pause * 2, 5.0)


def _one_line(
    job: Job, exc_type: type[BaseException], exc_value: BaseException, traceback: TracebackType | None
) -> bool:
    """The worker's exception handler: a failed phase job in one line at WARNING (RQ keeps the
    traceback in the job's result, for ``rq info``, and logs it on its own logger, ``log.rq_level``)."""
    _log.warning("job %s failed: %s: %s", job.id, exc_type.__name__, exc_value)
    _log.debug("job %s traceback", job.id, exc_info=(exc_type, exc_value, traceback))
    return False


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
        exception_handlers=[_one_line],
        # RQ's "default exception handler" is what records a job that failed for good: its place
        # in the failed registry and its traceback in the job's result. Without it `rq info` and
        # `rq requeue` never see the job, and the reconciler cannot tell a wrong worker's
        # GolemNotFound from a failed phase (it ended such cycles "job failed").
        disable_default_exception_handler=False,
    )
    worker.oneiros_settings = settings
    return worker


def check_worker_store(connection: Redis) -> list[str]:
    """The golems of phase jobs waiting on the queue that this worker's store does not have (a
    worker pointed at the wrong store). Opens the store of the process's runtime (after
    :func:`make_worker`), which must exist: a worker never creates one (:class:`NoStore`)."""
    rt = runtime(create=False)
    golems = rt.golems()
    missing = []
    for golem_id in waiting_golems(connection, rt.config.rq.queue):
        try:
            golems.state(golem_id)
        except GolemNotFound:
            missing.append(golem_id)
    return missing


def waiting_golems(connection: Redis, queue_name: str, limit: int = 100) -> list[str]:
    """The golems of the first ``limit`` phase jobs waiting on the queue, in queue order, once each.

    Raises the connection's error when Redis cannot be reached."""
    queue = Queue(queue_name, connection=connection, serializer=JsonSerializer)
    golems: dict[str, None] = {}
    for job in queue.get_jobs(0, limit - 1):
        try:
            if job.func_name == PHASE_JOB:
                golems[str(job.kwargs["golem_id"])] = None
        except Exception:  # a job this serializer cannot read is not a phase job of ours
            continue
    return list(golems)


@contextmanager
def reconciling(connection: Redis) -> Iterator[Reconciler]:
    """A reconciler for this worker's store (its runtime's, after :func:`make_worker`) and queue:
    one pass now, then one every ``recovery.interval_seconds`` on a thread of its own until the
    block ends (so a worker busy with a long phase, or a forking worker waiting on its
    work-horse, still reconciles)."""
    rt = runtime()
    config = rt.config
    reconciler = rt.reconciler(RqPhaseJobs(connection, config.rq, config.recovery))
    stop = threading.Event()
    try:
        reconciler.pass_once()
    except Exception as exc:  # the store or the queue is down: the thread tries again
        _log.warning("reconciler pass failed: %s: %s", type(exc).__name__, exc)
    thread = threading.Thread(target=reconciler.watch, args=(stop.wait,), name="oneiros-reconciler", daemon=True)
    thread.start()
    try:
        yield reconciler
    finally:
        stop.set()
        # A pass stuck on a store or queue that does not answer is left to die with the process: each
        # of its writes is a transaction, and what it left undone the next reconciler finds.
        thread.join(_RECONCILER_JOIN_SECONDS)
        if thread.is_alive():
            _log.warning("reconciler pass still under way after %s s; stopping without it", _RECONCILER_JOIN_SECONDS)
