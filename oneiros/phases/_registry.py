"""Which engine runs which phase."""

from __future__ import annotations

from oneiros.events._types import DreamPhaseName
from oneiros.phases._context import PhaseEngine
from oneiros.phases._integration import integration
from oneiros.phases._nrem import nrem
from oneiros.phases._onset import onset
from oneiros.phases._rem import rem
from oneiros.phases._return import hypnopompic_return

__all__ = ["ENGINES"]

ENGINES: dict[DreamPhaseName, PhaseEngine] = {
    "hypnagogic_onset": onset,
    "nrem": nrem,
    "rem": rem,
    "integration": integration,
    "hypnopompic_return": hypnopompic_return,
}
