"""Running dream phases: budgets, the phase runner and the executors."""

from oneiros._errors import CycleTimeout, WorkerError
from oneiros.workers._budget import (
    DEFAULT_PRICES,
    PHASE_SHARES,
    BudgetGuard,
    CycleBudget,
    Ledger,
    ModelPrice,
    Refusal,
    Spend,
    phase_budget,
    phase_money,
    worst_case_tokens,
)
from oneiros.workers._executor import CycleResult, Executor, InProcessExecutor
from oneiros.workers._metered import MeteredGenerator
from oneiros.workers._phases import CycleSettings, PhaseOutcome, run_phase
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
from oneiros.workers._runtime import DelayedGenerator, RqSettings, WorkerConfig, load_generator, set_worker_config
from oneiros.workers._tracing import (
    DEFAULT_SPANS_PATH,
    SpanFileExporter,
    SpanRecord,
    TracingSettings,
    configure_tracing,
    flush_spans,
    read_spans,
)

__all__ = [
    "DEFAULT_PRICES",
    "DEFAULT_SPANS_PATH",
    "PHASE_SHARES",
    "BudgetGuard",
    "CycleBudget",
    "CycleResult",
    "CycleSettings",
    "CycleTimeout",
    "DelayedGenerator",
    "Executor",
    "InProcessExecutor",
    "JsonSerializer",
    "Ledger",
    "MeteredGenerator",
    "ModelPrice",
    "PhaseOutcome",
    "PhaseWorker",
    "Refusal",
    "RqExecutor",
    "RqSettings",
    "SimplePhaseWorker",
    "SpanFileExporter",
    "SpanRecord",
    "Spend",
    "TracingSettings",
    "WorkerConfig",
    "WorkerError",
    "configure_tracing",
    "cycle_result",
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
