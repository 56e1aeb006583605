"""The vocabularies every layer shares: modes, phase names, behavioral phases, tiers, tasks.

They live at the bottom so that settings can name them without importing the event log.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

__all__ = [
    "BEHAVIORAL_PHASES",
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
DreamPhaseName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
"""A dream phase as events name it: a name from the phase table (``oneiros.settings._phases``),
whose five canonical phases are ``hypnagogic_onset``, ``nrem``, ``rem``, ``integration`` and
``hypnopompic_return``. Open rather than a closed Literal so that a table with another phase can
record it: the table checks a name's shape when it is made, and the machine, not the decoder, says
which phases a golem may be in (a pattern here cost every decode of a phase field about 270 ns, a
third of decoding a GenerationRecorded)."""
BardoPhase = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
"""A phase's name in the machine and in Bardo's ``DreamPhase`` (``HypnagogicOnset``,
``NREM``, ``REM``, ``Integration``, ``HypnopompicReturn`` for the canonical five)."""
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
tick interval (Bardo), idle (Bumblebee, Ethos), fatigue and voluntary sleep
(OpenSeed), the daily run (Dense-Mem), the emergency dream at death (Bardo)."""
BardoTrigger = Literal["time", "emotional_load", "novelty_streak"]
"""Bardo's ``DreamStart`` trigger: ``"time"|"emotional_load"|"novelty_streak"``."""
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
    "observe",
    "thread",
    "summary",
    "profile",
    "timeline",
    "contradiction",
]
Tier = Literal["core", "hardened"]
"""Bardo's compute tiers: [CORE] T0 rule-based or Haiku-class, [HARDENED] T1/T2."""
StagedKind = Literal[
    "confirmed_pattern",
    "novel_insight",
    "strategy_hypothesis",
    "threat",
    "playbook_revision",
    "contradiction",
    "creative_prediction",
]
"""Bardo's classification of dream outputs in the Integration phase."""
