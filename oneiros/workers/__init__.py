"""RQ phase workers: each phase of a cycle one job, the executor that dispatches them, the worker classes."""

from oneiros._errors import CycleTimeout, WorkerError
from oneiros.workers._dispatch import PhaseReport, RqExecutor
from oneiros.workers._rq import (
    JsonSerializer,
    PhaseWorker,
    RqPhaseJobs,
    SimplePhaseWorker,
    check_worker_store,
    make_worker,
    phase_job,
    phase_job_id,
    reconciling,
    waiting_golems,
)

__all__ = [
    "CycleTimeout",
    "JsonSerializer",
    "PhaseReport",
    "PhaseWorker",
    "RqExecutor",
    "RqPhaseJobs",
    "SimplePhaseWorker",
    "WorkerError",
    "check_worker_store",
    "make_worker",
    "phase_job",
    "phase_job_id",
    "reconciling",
    "waiting_golems",
]
