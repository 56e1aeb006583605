"""Running dream phases: budgets, the phase runner and the executors."""

from oneiros.workers._budget import PHASE_SHARES, CycleBudget, phase_budget
from oneiros.workers._executor import CycleResult, Executor, InProcessExecutor
from oneiros.workers._phases import CycleSettings, PhaseOutcome, run_phase

__all__ = [
    "PHASE_SHARES",
    "CycleBudget",
    "CycleResult",
    "CycleSettings",
    "Executor",
    "InProcessExecutor",
    "PhaseOutcome",
    "phase_budget",
    "run_phase",
]
