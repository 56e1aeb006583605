"""The closed vocabularies every layer shares: modes, phases, behavioral phases, tiers, tasks.

They live at the bottom so that settings can name them without importing the event log.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "BEHAVIORAL_PHASES",
    "DREAM_PHASES",
    "BehavioralPhase",
    "DreamPhaseName",
    "Mode",
    "Task",
    "Tier",
]

Mode = Literal["Waking", "Dreaming", "Dying"]
DreamPhaseName = Literal["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"]
DREAM_PHASES: tuple[DreamPhaseName, ...] = (
    "hypnagogic_onset",
    "nrem",
    "rem",
    "integration",
    "hypnopompic_return",
)
BehavioralPhase = Literal["thriving", "stable", "conservation", "declining", "terminal"]
BEHAVIORAL_PHASES: tuple[BehavioralPhase, ...] = (
    "thriving",
    "stable",
    "conservation",
    "declining",
    "terminal",
)
Task = Literal[
    "pattern",
    "hypothesis",
    "counterfactual",
    "insight",
    "partial",
    "novelty",
    "reverse",
    "perturbed",
    "threat",
    "depotentiate",
    "dream",
]
Tier = Literal["core", "hardened"]
"""Bardo 001_*'s compute tiers: [CORE] T0 rule-based or Haiku-class, [HARDENED] T1/T2."""
