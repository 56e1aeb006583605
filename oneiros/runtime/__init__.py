"""The cycle runtime every executor uses: the phase runner, budgets, the metered generator, leases held
while a phase runs, the reconciler, and the in-process executor."""

from oneiros.runtime._budget import (
    BudgetGuard,
    Ledger,
    Refusal,
    Spend,
    budget_report,
    phase_budget,
    phase_money,
    worst_case_tokens,
)
from oneiros.runtime._executor import CycleResult, Executor, InProcessExecutor, cycle_result
from oneiros.runtime._golem_log import GolemLog, GolemLogs
from oneiros.runtime._metered import MeteredGenerator
from oneiros.runtime._phase import PhaseOutcome, run_phase
from oneiros.runtime._process import DelayedGenerator, WorkerConfig, load_generator, set_worker_config
from oneiros.runtime._reconcile import JobLook, PhaseJobs, Reconciler, Resolution

__all__ = [
    "BudgetGuard",
    "CycleResult",
    "DelayedGenerator",
    "Executor",
    "GolemLog",
    "GolemLogs",
    "InProcessExecutor",
    "JobLook",
    "Ledger",
    "MeteredGenerator",
    "PhaseJobs",
    "PhaseOutcome",
    "Reconciler",
    "Refusal",
    "Resolution",
    "Spend",
    "WorkerConfig",
    "budget_report",
    "cycle_result",
    "load_generator",
    "phase_budget",
    "phase_money",
    "run_phase",
    "set_worker_config",
    "worst_case_tokens",
]
