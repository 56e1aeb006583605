"""Running dream phases: budgets, the phase runner and the executors."""

from oneiros._errors import CycleTimeout, WorkerError
from oneiros.workers._budget import (
    BudgetGuard,
    Ledger,
    Refusal,
    Spend,
    budget_report,
    phase_budget,
    phase_money,
    worst_case_tokens,
)
from oneiros.workers._diff import CycleDiff, CycleSummary, diff_cycles, summarize_cycle
from oneiros.workers._dispatch import PhaseReport, RqExecutor
from oneiros.workers._executor import CycleResult, Executor, InProcessExecutor, cycle_result
from oneiros.workers._log import GolemLog, GolemLogs
from oneiros.workers._logging import JsonFormatter, configure_logging
from oneiros.workers._metered import MeteredGenerator
from oneiros.workers._phases import PhaseOutcome, run_phase
from oneiros.workers._reconcile import JobLook, PhaseJobs, Reconciler, Resolution
from oneiros.workers._rerun import Divergence, RecordedGenerator, RerunReport, fork_cycle, rerun_cycle
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
from oneiros.workers._runtime import DelayedGenerator, WorkerConfig, load_generator, set_worker_config
from oneiros.workers._tracing import (
    SpanFileExporter,
    SpanRecord,
    configure_tracing,
    cycle_spans,
    flush_spans,
    read_spans,
)

__all__ = [
    "BudgetGuard",
    "CycleDiff",
    "CycleResult",
    "CycleSummary",
    "CycleTimeout",
    "DelayedGenerator",
    "Divergence",
    "Executor",
    "GolemLog",
    "GolemLogs",
    "InProcessExecutor",
    "JobLook",
    "JsonFormatter",
    "JsonSerializer",
    "Ledger",
    "MeteredGenerator",
    "PhaseJobs",
    "PhaseOutcome",
    "PhaseReport",
    "PhaseWorker",
    "Reconciler",
    "RecordedGenerator",
    "Refusal",
    "RerunReport",
    "Resolution",
    "RqExecutor",
    "RqPhaseJobs",
    "SimplePhaseWorker",
    "SpanFileExporter",
    "SpanRecord",
    "Spend",
    "WorkerConfig",
    "WorkerError",
    "budget_report",
    "check_worker_store",
    "configure_logging",
    "configure_tracing",
    "cycle_result",
    "cycle_spans",
    "diff_cycles",
    "flush_spans",
    "fork_cycle",
    "load_generator",
    "make_worker",
    "phase_budget",
    "phase_job",
    "phase_job_id",
    "phase_money",
    "read_spans",
    "reconciling",
    "rerun_cycle",
    "run_phase",
    "set_worker_config",
    "summarize_cycle",
    "waiting_golems",
    "worst_case_tokens",
]
