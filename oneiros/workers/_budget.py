"""How a cycle's token budget is shared among its five phases."""

from __future__ import annotations

from typing import Final

import msgspec

from oneiros.events import BehavioralPhase, DreamPhaseName

__all__ = ["PHASE_SHARES", "CycleBudget", "phase_budget"]

# Bardo 001_*, "Budget allocation by behavioral phase": onset and return are fixed at 10% and 5%;
# the remaining 85% moves from exploration (NREM, REM) to consolidation as the golem ages.
PHASE_SHARES: Final[dict[BehavioralPhase, dict[DreamPhaseName, float]]] = {
    "thriving": {"hypnagogic_onset": 0.10, "nrem": 0.34, "rem": 0.30, "integration": 0.21, "hypnopompic_return": 0.05},
    "stable": {"hypnagogic_onset": 0.10, "nrem": 0.30, "rem": 0.30, "integration": 0.25, "hypnopompic_return": 0.05},
    "conservation": {
        "hypnagogic_onset": 0.10,
        "nrem": 0.25,
        "rem": 0.20,
        "integration": 0.40,
        "hypnopompic_return": 0.05,
    },
    "declining": {"hypnagogic_onset": 0.10, "nrem": 0.20, "rem": 0.16, "integration": 0.49, "hypnopompic_return": 0.05},
    "terminal": {"hypnagogic_onset": 0.10, "nrem": 0.16, "rem": 0.12, "integration": 0.57, "hypnopompic_return": 0.05},
}


class CycleBudget(msgspec.Struct, frozen=True, kw_only=True):
    """Token budget of one dream cycle."""

    cycle_tokens: int = 8_000
    """Tokens for a whole [CORE] cycle. Bardo 001_* prices a CORE cycle at $0.001-0.003 of T0
    (Haiku-class) inference, about 8k tokens at T0 prices."""


def phase_budget(budget: CycleBudget, behavioral_phase: BehavioralPhase, phase: DreamPhaseName) -> int:
    """The whole tokens ``phase`` may spend; rounding down keeps the sum within the cycle's budget."""
    return int(budget.cycle_tokens * PHASE_SHARES[behavioral_phase][phase])
