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
from oneiros.workers._executor import CycleResult, Executor, InProcessExecutor
from oneiros.workers._log import GolemLog, GolemLogs
from oneiros.workers._metered import MeteredGenerator
from oneiros.workers._phases import PhaseOutcome, run_phase
from oneiros.workers._rq import (
    JsonSerializer,
    PhaseWorker,
    RqExecutor,
    SimplePhaseWorker,
    cycle_result,
    make_worker,
    phase_job,
    phase_job_id,
    sweep_failed_phases,
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
    "CycleResult",
    "CycleTimeout",
    "DelayedGenerator",
    "Executor",
    "GolemLog",
    "GolemLogs",
    "InProcessExecutor",
    "JsonSerializer",
    "Ledger",
    "MeteredGenerator",
    "PhaseOutcome",
    "PhaseWorker",
    "Refusal",
    "RqExecutor",
    "SimplePhaseWorker",
    "SpanFileExporter",
    "SpanRecord",
    "Spend",
    "WorkerConfig",
    "WorkerError",
    "budget_report",
    "configure_tracing",
    "cycle_result",
    "cycle_spans",
    "flush_spans",
    "load_generator",
    "make_worker",
    "phase_budget",
    "phase_job",
    "phase_job_id",
    "phase_money",
    "read_spans",
    "run_phase",
    "set_worker_config",
    "sweep_failed_phases",
    "worst_case_tokens",
]
