"""Which engine runs which phase."""

from __future__ import annotations

from oneiros.engines._context import PhaseEngine
from oneiros.engines._integration import integration
from oneiros.engines._nrem import nrem
from oneiros.engines._onset import onset
from oneiros.engines._rem import rem
from oneiros.engines._return import hypnopompic_return
from oneiros.events import DreamPhaseName

__all__ = ["ENGINES"]

ENGINES: dict[DreamPhaseName, PhaseEngine] = {
    "hypnagogic_onset": onset,
    "nrem": nrem,
    "rem": rem,
    "integration": integration,
    "hypnopompic_return": hypnopompic_return,
}
