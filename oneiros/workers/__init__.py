"""Running dream phases: budgets, the phase runner and the executors."""

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

__all__ = [
    "DEFAULT_PRICES",
    "PHASE_SHARES",
    "BudgetGuard",
    "CycleBudget",
    "CycleResult",
    "CycleSettings",
    "Executor",
    "InProcessExecutor",
    "Ledger",
    "MeteredGenerator",
    "ModelPrice",
    "PhaseOutcome",
    "Refusal",
    "Spend",
    "phase_budget",
    "phase_money",
    "run_phase",
    "worst_case_tokens",
]
