"""The closed vocabularies every layer shares: modes, phases, behavioral phases, tiers, tasks.

They live at the bottom so that settings can name them without importing the event log.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "BARDO_PHASES",
    "BEHAVIORAL_PHASES",
    "DREAM_PHASES",
    "BardoPhase",
    "BardoTrigger",
    "BehavioralPhase",
    "DreamPhaseName",
    "DreamTrigger",
    "Mode",
    "StagedKind",
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
BardoPhase = Literal["HypnagogicOnset", "NREM", "REM", "Integration", "HypnopompicReturn"]
"""Bardo 001_*'s names for the five phases: its ``DreamPhase`` enum for the two liminal ones and
its ``DreamPhase`` event's ``"NREM"|"REM"|"Integration"`` for the three core ones."""
BARDO_PHASES: dict[DreamPhaseName, BardoPhase] = {
    "hypnagogic_onset": "HypnagogicOnset",
    "nrem": "NREM",
    "rem": "REM",
    "integration": "Integration",
    "hypnopompic_return": "HypnopompicReturn",
}
DreamTrigger = Literal[
    "owner",
    "urgency",
    "window",
    "interval",
    "idle",
    "fatigue",
    "voluntary",
    "daily",
    "emergency",
]
"""What started a cycle, in the scheduler's own terms: the owner directive, urgency, windows and the
tick interval (Bardo 001_*), idle (Bumblebee 000_*, Ethos 003_*), fatigue and voluntary sleep
(OpenSeed 004_*), the daily run (Dense-Mem 002_*), the emergency dream at death (Bardo)."""
BardoTrigger = Literal["time", "emotional_load", "novelty_streak"]
"""Bardo 001_*'s ``DreamStart`` trigger: ``"time"|"emotional_load"|"novelty_streak"``."""
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
StagedKind = Literal[
    "confirmed_pattern",
    "novel_insight",
    "strategy_hypothesis",
    "threat",
    "playbook_revision",
    "contradiction",
    "creative_prediction",
]
"""Bardo 001_*'s classification of dream outputs in the Integration phase."""
