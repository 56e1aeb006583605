"""The GolemMode / DreamPhase hierarchical machine.

The machine is the one place that says which command is legal in which state, where it leads, the
order of the dream phases and which states a move exits and enters. It is declared once with
transitions' HierarchicalMachine and read as a declaration (its transitions and its state tree),
never run: golems do not each build (or leak into) a machine, no lock is needed, and replay never
fires triggers: it folds events.

Adding a phase is one edit here (a child of ``Dreaming``, in order) plus its engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any, Final

from transitions.extensions.nesting import HierarchicalMachine, NestedState

from oneiros.events._types import DREAM_PHASES, DreamPhaseName

__all__ = [
    "MACHINE_STATES",
    "PHASE_STATE",
    "TRIGGERS",
    "destination",
    "next_phase",
    "phase_state",
    "transition_path",
]

PHASE_STATE: Final[dict[DreamPhaseName, str]] = {
    "hypnagogic_onset": "HypnagogicOnset",
    "nrem": "NREM",
    "rem": "REM",
    "integration": "Integration",
    "hypnopompic_return": "HypnopompicReturn",
}

_STATES: list[Any] = [
    "Waking",
    {"name": "Dreaming", "children": [PHASE_STATE[p] for p in DREAM_PHASES], "initial": PHASE_STATE[DREAM_PHASES[0]]},
    {"name": "Dying", "final": True},
]

# advance: each phase to the next, in the order Dreaming declares them, up to integration.
_ADVANCE: list[dict[str, object]] = [
    {"trigger": "advance", "source": f"Dreaming_{a}", "dest": f"Dreaming_{b}"}
    for a, b in pairwise(PHASE_STATE[p] for p in DREAM_PHASES[: DREAM_PHASES.index("integration") + 1])
]
_TRANSITIONS: list[dict[str, object]] = [
    {"trigger": "fall_asleep", "source": "Waking", "dest": "Dreaming"},
    *_ADVANCE,
    {"trigger": "complete", "source": "Dreaming_Integration", "dest": "Dreaming_HypnopompicReturn"},
    {"trigger": "wake", "source": "Dreaming_HypnopompicReturn", "dest": "Waking"},
    {"trigger": "interrupt", "source": "Dreaming", "dest": "Waking"},
    {"trigger": "die", "source": ["Waking", "Dreaming"], "dest": "Dying"},
    # Internal transitions: legal where listed, and they leave the state as it is.
    {"trigger": "record_episode", "source": ["Waking", "Dreaming"], "dest": None},
    # Host facts that are neither episodes nor dream outputs: activity, held messages, decisions.
    {"trigger": "record", "source": ["Waking", "Dreaming"], "dest": None},
    {"trigger": "record_output", "source": "Dreaming", "dest": None},
]

_machine = HierarchicalMachine(
    model=None,
    states=_STATES,
    transitions=_TRANSITIONS,
    initial="Waking",
    auto_transitions=False,
)
_SEP: Final[str] = _machine.state_cls.separator


def _walk(states: dict[str, NestedState], prefix: str = "") -> Iterator[tuple[str, NestedState, str | None]]:
    for name, state in states.items():
        full = f"{prefix}{_SEP}{name}" if prefix else name
        yield full, state, prefix or None
        yield from _walk(state.states, full)


_TREE: Final[dict[str, tuple[NestedState, str | None]]] = {name: (st, up) for name, st, up in _walk(_machine.states)}
MACHINE_STATES: Final[tuple[str, ...]] = tuple(_TREE)
TRIGGERS: Final[tuple[str, ...]] = tuple(_machine.events)
_PHASE_OF_STATE: Final[dict[str, DreamPhaseName]] = {f"Dreaming{_SEP}{s}": p for p, s in PHASE_STATE.items()}


def phase_state(phase: DreamPhaseName) -> str:
    """``"Dreaming_NREM"`` for ``"nrem"``."""
    return f"Dreaming{_SEP}{PHASE_STATE[phase]}"


def _ancestry(state: str) -> list[str]:
    """``state`` and its parents in the declared tree, outermost first."""
    chain: list[str] = []
    current: str | None = state
    while current is not None:
        chain.append(current)
        current = _TREE[current][1]
    return chain[::-1]


def _settled(state: str) -> str:
    """Where entering ``state`` ends: a compound state enters its initial child."""
    node = _TREE[state][0]
    while node.initial:
        state = f"{state}{_SEP}{node.initial}"
        node = _TREE[state][0]
    return state


def destination(state: str, trigger: str) -> str | None:
    """The state ``trigger`` leads to from ``state``, or None if the machine forbids it.

    Read from the declaration: the innermost state (or parent) that declares the trigger decides,
    as transitions does when it runs one. An internal transition leads back to ``state``.
    """
    if state not in _TREE or trigger not in TRIGGERS:
        return None
    for source in reversed(_ancestry(state)):
        for transition in _machine.get_transitions(trigger=trigger, source=source):
            return state if transition.dest is None else _settled(transition.dest)
    return None


def next_phase(phase: DreamPhaseName) -> DreamPhaseName | None:
    """The phase that follows ``phase`` in the machine (by ``advance`` or ``complete``), if any."""
    for trigger in ("advance", "complete"):
        dest = destination(phase_state(phase), trigger)
        if dest in _PHASE_OF_STATE:
            return _PHASE_OF_STATE[dest]
    return None


def transition_path(source: str, dest: str) -> tuple[list[str], list[str]]:
    """The states exited (innermost first) and entered (outermost first) going ``source`` → ``dest``."""
    if source == dest:
        return [], []
    up = _ancestry(source) if source in _TREE else [source]
    down = _ancestry(dest) if dest in _TREE else [dest]
    common = 0
    while common < min(len(up), len(down)) and up[common] == down[common]:
        common += 1
    return list(reversed(up[common:])), down[common:]
