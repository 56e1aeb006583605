"""The dream phases: one table that the machine, the engines, the budget, the CLI, the inspector
and the docs all read.

A cycle runs the table's phases in order. The first opens the cycle (``fall_asleep``; a cycle
under the credit floor is suppressed there), each one ``advance``\\ s to the next, the one before
the last closes the cycle's work (``complete``, with DreamComplete) and the last wakes the golem
(``wake``). Adding a phase is one :class:`PhaseSpec` in a table plus its engine (a mapping keyed
by phase name, ``oneiros.phases._engines``); a table other than :data:`PHASES` is passed to
``Golems(phases=...)`` and the executors, never registered at import.

The five canonical phases are the log's own vocabulary: old logs name them, so they stay as they are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Final

import msgspec

from oneiros._errors import ConfigError
from oneiros.settings._scheduling import PhaseValues
from oneiros.settings._vocabulary import BEHAVIORAL_PHASES, BardoPhase, BehavioralPhase, DreamPhaseName

__all__ = ["PHASES", "PhaseSpec", "PhaseTable"]

# What events and the machine can carry: a phase name like ``hypnagogic_onset``, a state like ``NREM``.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_STATE = re.compile(r"[A-Z][A-Za-z0-9]{0,63}")


class PhaseSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One dream phase."""

    name: DreamPhaseName
    """The phase as events name it (``DreamPhase.phase``, ``GenerationRecorded.phase``...)."""
    state: BardoPhase
    """Its state in the machine (``Dreaming_<state>``), which is also Bardo's name for it
    (``DreamPhase.bardo_phase``)."""
    stream: str
    """Its name on the event stream's ``dream_progress`` (Bardo: ``onset``, ``return``...)."""
    label: str
    """What people read: the inspector's diagram and the docs."""
    description: str
    """What the phase does, in a sentence."""
    shares: PhaseValues
    """Its share of the cycle's tokens and dollars, by the golem's behavioral phase."""


class PhaseTable(msgspec.Struct, frozen=True):
    """The phases of a cycle, in the order it runs them. Checked when made: unique names, states and
    stream names; every share between 0 and 1 and each behavioral phase's and together at most 1, so the
    phases' budgets never promise more than the cycle has."""

    phases: tuple[PhaseSpec, ...]

    def __post_init__(self) -> None:
        if len(self.phases) < 2:
            raise ConfigError(
                f"a cycle needs at least two phases (one to work, one to wake from); got {len(self.phases)}"
            )
        shapes = (("name", _NAME, "lower-case letters, digits and _"), ("state", _STATE, "letters and digits"))
        for field, pattern, shape in shapes:
            bad = next((v for v in (getattr(p, field) for p in self.phases) if not pattern.fullmatch(v)), None)
            if bad is not None:
                raise ConfigError(f"phase {field} {bad!r} must be {shape}, starting with a letter, at most 64")
        for field in ("name", "state", "stream"):
            values = [getattr(p, field) for p in self.phases]
            twice = next((v for v in values if values.count(v) > 1), None)
            if twice is not None:
                raise ConfigError(f"phase {field} {twice!r} appears twice in the phase table")
        for spec in self.phases:
            values = [spec.shares.of(b) for b in BEHAVIORAL_PHASES]
            bad_share = next((s for s in values if not (math.isfinite(s) and 0.0 <= s <= 1.0)), None)
            if bad_share is not None:
                raise ConfigError(f"phase {spec.name!r} has share {bad_share!r}; a share is between 0 and 1")
        for behavioral in BEHAVIORAL_PHASES:
            total = sum(p.shares.of(behavioral) for p in self.phases)
            if total > 1.0 + 1e-9:
                raise ConfigError(f"the phases' {behavioral} shares add up to {total:.4g}; at most 1 (the whole cycle)")

    def __iter__(self) -> Iterator[PhaseSpec]:
        return iter(self.phases)

    def __len__(self) -> int:
        return len(self.phases)

    @property
    def names(self) -> tuple[DreamPhaseName, ...]:
        return tuple(p.name for p in self.phases)

    @property
    def first(self) -> PhaseSpec:
        """The phase a cycle opens in."""
        return self.phases[0]

    @property
    def last(self) -> PhaseSpec:
        """The phase a cycle wakes from."""
        return self.phases[-1]

    def get(self, name: str) -> PhaseSpec | None:
        return next((p for p in self.phases if p.name == name), None)

    def spec(self, name: str) -> PhaseSpec:
        """The phase called ``name``; :class:`ConfigError` naming the table's phases if none is."""
        found = self.get(name)
        if found is None:
            raise ConfigError(f"unknown dream phase {name!r}; the phases are {', '.join(self.names)}")
        return found

    def after(self, name: str) -> tuple[DreamPhaseName, ...]:
        """``name`` and the phases after it, in order: what is left of a cycle in that phase."""
        names = self.names
        return names[names.index(self.spec(name).name) :]

    def share(self, behavioral_phase: BehavioralPhase, name: str) -> float:
        """The share of the cycle's budget phase ``name`` may spend at ``behavioral_phase``."""
        return self.spec(name).shares.of(behavioral_phase)

    def reference(self) -> str:
        """The table as Markdown, for the docs (``docs/reference/phases.md`` is generated from it)."""
        header = ["#", "phase", "machine state", "stream", "label", "what it does", *BEHAVIORAL_PHASES]
        lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for n, p in enumerate(self.phases, start=1):
            shares = [f"{p.shares.of(b):.0%}" for b in BEHAVIORAL_PHASES]
            cells = [str(n), f"`{p.name}`", f"`Dreaming_{p.state}`", f"`{p.stream}`", p.label, p.description, *shares]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return "\n".join(lines) + "\n"


def _shares(*by_behavioral: float) -> PhaseValues:
    return PhaseValues(**dict(zip(BEHAVIORAL_PHASES, by_behavioral, strict=True)))


# Bardo, "Budget allocation by behavioral phase" (thriving, stable, conservation, declining,
# terminal): onset and return are fixed at 10% and 5%; the remaining 85% moves from exploration
# (NREM, REM) to consolidation as the golem ages.
PHASES: Final[PhaseTable] = PhaseTable(
    (
        PhaseSpec(
            name="hypnagogic_onset",
            state="HypnagogicOnset",
            stream="onset",
            label="Hypnagogic Onset",
            description="The waking residue dissolves into a few raised-temperature partial completions; "
            "a cheap judge keeps the novel ones as low-confidence predictions.",
            shares=_shares(0.10, 0.10, 0.10, 0.10, 0.10),
        ),
        PhaseSpec(
            name="nrem",
            state="NREM",
            stream="nrem",
            label="NREM",
            description="Replays the episodes worth replaying (utility = gain x need) in batches, forward, "
            "reverse and perturbed, and triages them.",
            shares=_shares(0.34, 0.30, 0.25, 0.20, 0.16),
        ),
        PhaseSpec(
            name="rem",
            state="REM",
            stream="rem",
            label="REM",
            description="Imagines counterfactuals, creative recombinations and threats, depotentiates "
            "charged episodes and dreams over distant pairs.",
            shares=_shares(0.30, 0.30, 0.20, 0.16, 0.12),
        ),
        PhaseSpec(
            name="integration",
            state="Integration",
            stream="integration",
            label="Integration",
            description="Classifies every output and stages it with a validation criterion, crystallizes "
            "insights, assesses the dream and writes its journal entry.",
            shares=_shares(0.21, 0.25, 0.40, 0.49, 0.57),
        ),
        PhaseSpec(
            name="hypnopompic_return",
            state="HypnopompicReturn",
            stream="return",
            label="Hypnopompic Return",
            description="Writes the typed dream report and the wake-up text the agent reads.",
            shares=_shares(0.05, 0.05, 0.05, 0.05, 0.05),
        ),
    )
)
"""The five phases of a cycle (Bardo)."""
