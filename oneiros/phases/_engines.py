"""Which engine runs which phase: a mapping keyed by the phase table's names.

The table (``oneiros.settings._phases``) sits below the machine, which orders the phases; the
engines sit above it, so binding an engine to a phase is this second mapping rather than a field
of the table. A table with another phase comes with a mapping that has its engine
(:func:`engines_for` checks that every phase has one before a cycle starts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from oneiros._errors import ConfigError
from oneiros.phases._context import PhaseEngine
from oneiros.phases._integration import integration
from oneiros.phases._nrem import nrem
from oneiros.phases._onset import onset
from oneiros.phases._rem import rem
from oneiros.phases._return import hypnopompic_return
from oneiros.settings._phases import PhaseTable
from oneiros.settings._vocabulary import DreamPhaseName

__all__ = ["ENGINES", "engines_for"]

ENGINES: Final[Mapping[DreamPhaseName, PhaseEngine]] = {
    "hypnagogic_onset": onset,
    "nrem": nrem,
    "rem": rem,
    "integration": integration,
    "hypnopompic_return": hypnopompic_return,
}
"""The engines of the canonical phase table (``PHASES``)."""


def engines_for(
    phases: PhaseTable, engines: Mapping[DreamPhaseName, PhaseEngine] = ENGINES
) -> Mapping[DreamPhaseName, PhaseEngine]:
    """``engines``, checked to hold an engine for every phase of ``phases``: a table and engines that
    do not fit fail here, in one line, not halfway through a cycle."""
    missing = [name for name in phases.names if name not in engines]
    if missing:
        raise ConfigError(f"no engine for phase {', '.join(map(repr, missing))}; pass one in engines")
    return engines
