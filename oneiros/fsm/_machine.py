"""The GolemMode / DreamPhase hierarchical machine.

The machine is the one place that says which command is legal in which state. It is declared once
with transitions' HierarchicalMachine and consulted through a single probe model, so golems do not
each build (or leak into) a machine, and replay never fires triggers: it folds events.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from transitions.extensions import HierarchicalMachine

from oneiros.events import DREAM_PHASES, DreamPhaseName

__all__ = ["MACHINE_STATES", "PHASE_STATE", "TRIGGERS", "destination", "phase_state", "transition_path"]

PHASE_STATE: Final[dict[DreamPhaseName, str]] = {
    "hypnagogic_onset": "HypnagogicOnset",
    "nrem": "NREM",
    "rem": "REM",
    "integration": "Integration",
    "hypnopompic_return": "HypnopompicReturn",
}
_SEP = "_"

_STATES: list[Any] = [
    "Waking",
    {"name": "Dreaming", "children": [PHASE_STATE[p] for p in DREAM_PHASES], "initial": "HypnagogicOnset"},
    {"name": "Dying", "final": True},
]


def phase_state(phase: DreamPhaseName) -> str:
    """``"Dreaming_NREM"`` for ``"nrem"``."""
    return f"Dreaming{_SEP}{PHASE_STATE[phase]}"


_TRANSITIONS: list[dict[str, object]] = [
    {"trigger": "fall_asleep", "source": "Waking", "dest": "Dreaming"},
    {"trigger": "advance", "source": phase_state("hypnagogic_onset"), "dest": phase_state("nrem")},
    {"trigger": "advance", "source": phase_state("nrem"), "dest": phase_state("rem")},
    {"trigger": "advance", "source": phase_state("rem"), "dest": phase_state("integration")},
    {"trigger": "complete", "source": phase_state("integration"), "dest": phase_state("hypnopompic_return")},
    {"trigger": "wake", "source": phase_state("hypnopompic_return"), "dest": "Waking"},
    {"trigger": "interrupt", "source": "Dreaming", "dest": "Waking"},
    {"trigger": "die", "source": ["Waking", "Dreaming"], "dest": "Dying"},
    # Internal transitions: legal where listed, and they leave the state as it is.
    {"trigger": "record_episode", "source": ["Waking", "Dreaming"], "dest": None},
    # Host facts that are neither episodes nor dream outputs: activity, held messages, decisions.
    {"trigger": "record", "source": ["Waking", "Dreaming"], "dest": None},
    {"trigger": "record_output", "source": "Dreaming", "dest": None},
]

TRIGGERS: Final[tuple[str, ...]] = tuple(dict.fromkeys(str(t["trigger"]) for t in _TRANSITIONS))


class _Probe:
    state: str = "Waking"


_machine = HierarchicalMachine(
    model=None,
    states=_STATES,
    transitions=_TRANSITIONS,
    initial="Waking",
    auto_transitions=False,
    ignore_invalid_triggers=False,
)
_probe = _Probe()
_machine.add_model(_probe)
_lock = threading.Lock()

MACHINE_STATES: Final[tuple[str, ...]] = tuple(_machine.get_nested_state_names())


def destination(state: str, trigger: str) -> str | None:
    """The state ``trigger`` leads to from ``state``, or None if the machine forbids it.

    Runs the trigger on the shared probe model; the probe's callbacks are none, so this has no
    side effect beyond the probe's own state.
    """
    if trigger not in TRIGGERS or state not in MACHINE_STATES:
        return None
    with _lock:
        _machine.set_state(state, model=_probe)
        if not getattr(_probe, f"may_{trigger}")():
            return None
        getattr(_probe, trigger)()
        return _probe.state


def _ancestry(state: str) -> list[str]:
    parts = state.split(_SEP)
    return [_SEP.join(parts[: i + 1]) for i in range(len(parts))]


def transition_path(source: str, dest: str) -> tuple[list[str], list[str]]:
    """The states exited (innermost first) and entered (outermost first) going ``source`` → ``dest``."""
    if source == dest:
        return [], []
    up, down = _ancestry(source), _ancestry(dest)
    common = 0
    while common < min(len(up), len(down)) and up[common] == down[common]:
        common += 1
    return list(reversed(up[common:])), down[common:]
