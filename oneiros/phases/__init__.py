"""The phase engines: what each dream phase does with the episodes."""

from oneiros.phases._context import PhaseContext, PhaseEngine
from oneiros.phases._engines import ENGINES
from oneiros.phases._integration import classify, integration, polarity
from oneiros.phases._nrem import ReplayPick, batches, gain, need, nrem, select_replay, triage, utility
from oneiros.phases._onset import onset, waking_residue
from oneiros.phases._pairs import PairDraw, select_distant_pairs
from oneiros.phases._rem import MODES, rem
from oneiros.phases._return import (
    OBSERVATION_PRIORITY,
    Priority,
    dream_report,
    hypnopompic_return,
    openseed_wake_up,
    wake_up_text,
)

__all__ = [
    "ENGINES",
    "MODES",
    "OBSERVATION_PRIORITY",
    "PairDraw",
    "PhaseContext",
    "PhaseEngine",
    "Priority",
    "ReplayPick",
    "batches",
    "classify",
    "dream_report",
    "gain",
    "hypnopompic_return",
    "integration",
    "need",
    "nrem",
    "onset",
    "openseed_wake_up",
    "polarity",
    "rem",
    "select_distant_pairs",
    "select_replay",
    "triage",
    "utility",
    "wake_up_text",
    "waking_residue",
]
