"""The GolemMode / DreamPhase hierarchical machine.

The machine is the one place that says which command is legal in which state, where it leads and
which states a move exits and enters. It is declared with transitions' HierarchicalMachine and read
as a declaration (its transitions and its state tree), never run: golems do not each build (or
leak into) a machine, no lock is needed, and replay never fires triggers: it folds events.

The dream phases and their order come from a phase table (``oneiros.settings._phases``): each is a
child of ``Dreaming``; ``advance`` leads from each to the next, ``complete`` from the one before
the last to the last, and ``wake`` from the last. :data:`MACHINE` is the machine of the canonical
table; ``Golems(phases=...)`` builds one for another table.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final

from oneiros.settings._phases import PHASES, PhaseTable
from oneiros.settings._vocabulary import DreamPhaseName

__all__ = [
    "MACHINE",
    "MACHINE_STATES",
    "SEPARATOR",
    "TRIGGERS",
    "Machine",
    "canonical_machine",
    "destination",
    "machine_for",
    "next_phase",
    "phase_state",
    "transition_path",
]

if TYPE_CHECKING:
    from transitions.extensions.nesting import NestedState

SEPARATOR: Final[str] = "_"
"""Between a state and its child in a state's full name (``Dreaming_NREM``): transitions' own
(:class:`Machine` checks they agree), written out so that reading a state's name loads no machine."""


def _walk(states: dict[str, NestedState], prefix: str = "") -> Iterator[tuple[str, NestedState, str | None]]:
    for name, state in states.items():
        full = f"{prefix}{SEPARATOR}{name}" if prefix else name
        yield full, state, prefix or None
        yield from _walk(state.states, full)


class Machine:
    """The machine of one phase table, read through :meth:`destination`."""

    def __init__(self, phases: PhaseTable) -> None:
        # transitions loads its asyncio extension too: a machine is built on first use, so a command
        # that only reads projections never pays for it.
        from transitions.extensions.nesting import HierarchicalMachine  # noqa: PLC0415

        if HierarchicalMachine.state_cls.separator != SEPARATOR:
            raise RuntimeError(f"transitions separates nested states with {HierarchicalMachine.state_cls.separator!r}")
        self.phases = phases
        children = [p.state for p in phases]
        states: list[Any] = [
            "Waking",
            {"name": "Dreaming", "children": children, "initial": children[0]},
            {"name": "Dying", "final": True},
        ]
        work, closing, waking = children[:-1], children[-2], children[-1]
        # advance: each phase to the next, in the order Dreaming declares them, up to the one that completes.
        advance: list[dict[str, object]] = [
            {"trigger": "advance", "source": f"Dreaming{SEPARATOR}{a}", "dest": f"Dreaming{SEPARATOR}{b}"}
            for a, b in pairwise(work)
        ]
        transitions: list[dict[str, object]] = [
            {"trigger": "fall_asleep", "source": "Waking", "dest": "Dreaming"},
            *advance,
            {"trigger": "complete", "source": f"Dreaming{SEPARATOR}{closing}", "dest": f"Dreaming{SEPARATOR}{waking}"},
            {"trigger": "wake", "source": f"Dreaming{SEPARATOR}{waking}", "dest": "Waking"},
            {"trigger": "interrupt", "source": "Dreaming", "dest": "Waking"},
            {"trigger": "die", "source": ["Waking", "Dreaming"], "dest": "Dying"},
            # Internal transitions: legal where listed, and they leave the state as it is.
            {"trigger": "record_episode", "source": ["Waking", "Dreaming"], "dest": None},
            # Host facts that are neither episodes nor dream outputs: activity, held messages, decisions.
            {"trigger": "record", "source": ["Waking", "Dreaming"], "dest": None},
            {"trigger": "record_output", "source": "Dreaming", "dest": None},
        ]
        self.declaration: Final = (states, transitions)
        """The states and transitions as given to transitions' HierarchicalMachine."""
        self._machine = HierarchicalMachine(
            model=None, states=states, transitions=transitions, initial="Waking", auto_transitions=False
        )
        self._tree: dict[str, tuple[NestedState, str | None]] = {
            name: (st, up) for name, st, up in _walk(self._machine.states)
        }
        self.states: tuple[str, ...] = tuple(self._tree)
        """Every state's full name, in declared order (``Waking``, ``Dreaming``, ``Dreaming_NREM``...)."""
        self.triggers: tuple[str, ...] = tuple(self._machine.events)
        self._phase_of_state = {self.phase_state(p.name): p.name for p in phases}

    def phase_state(self, phase: DreamPhaseName) -> str:
        """``"Dreaming_NREM"`` for ``"nrem"``."""
        return f"Dreaming{SEPARATOR}{self.phases.spec(phase).state}"

    def _ancestry(self, state: str) -> list[str]:
        """``state`` and its parents in the declared tree, outermost first."""
        chain: list[str] = []
        current: str | None = state
        while current is not None:
            chain.append(current)
            current = self._tree[current][1]
        return chain[::-1]

    def _settled(self, state: str) -> str:
        """Where entering ``state`` ends: a compound state enters its initial child."""
        node = self._tree[state][0]
        while node.initial:
            state = f"{state}{SEPARATOR}{node.initial}"
            node = self._tree[state][0]
        return state

    def destination(self, state: str, trigger: str) -> str | None:
        """The state ``trigger`` leads to from ``state``, or None if the machine forbids it.

        Read from the declaration: the innermost state (or parent) that declares the trigger decides,
        as transitions does when it runs one. An internal transition leads back to ``state``.
        """
        if state not in self._tree or trigger not in self.triggers:
            return None
        for source in reversed(self._ancestry(state)):
            for transition in self._machine.get_transitions(trigger=trigger, source=source):
                return state if transition.dest is None else self._settled(transition.dest)
        return None

    def next_phase(self, phase: DreamPhaseName) -> DreamPhaseName | None:
        """The phase that follows ``phase`` in the machine (by ``advance`` or ``complete``), if any."""
        for trigger in ("advance", "complete"):
            dest = self.destination(self.phase_state(phase), trigger)
            if dest in self._phase_of_state:
                return self._phase_of_state[dest]
        return None

    def transition_path(self, source: str, dest: str) -> tuple[list[str], list[str]]:
        """The states exited (innermost first) and entered (outermost first) going ``source`` → ``dest``."""
        if source == dest:
            return [], []
        up = self._ancestry(source) if source in self._tree else [source]
        down = self._ancestry(dest) if dest in self._tree else [dest]
        common = 0
        while common < min(len(up), len(down)) and up[common] == down[common]:
            common += 1
        return list(reversed(up[common:])), down[common:]


@cache
def canonical_machine() -> Machine:
    """The machine of the canonical phase table, built on first use."""
    return Machine(PHASES)


if TYPE_CHECKING:
    MACHINE: Machine
    """The machine of the canonical phase table."""
    MACHINE_STATES: tuple[str, ...]
    TRIGGERS: tuple[str, ...]


def __getattr__(name: str) -> Any:
    # The canonical machine's names, built on first use (see canonical_machine).
    if name == "MACHINE":
        return canonical_machine()
    if name == "MACHINE_STATES":
        return canonical_machine().states
    if name == "TRIGGERS":
        return canonical_machine().triggers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def machine_for(phases: PhaseTable) -> Machine:
    """:data:`MACHINE` for the canonical table, else a machine of ``phases``."""
    return canonical_machine() if phases == PHASES else Machine(phases)


def phase_state(phase: DreamPhaseName) -> str:
    """``"Dreaming_NREM"`` for ``"nrem"`` (the canonical machine)."""
    return canonical_machine().phase_state(phase)


def destination(state: str, trigger: str) -> str | None:
    """:meth:`Machine.destination` of the canonical machine."""
    return canonical_machine().destination(state, trigger)


def next_phase(phase: DreamPhaseName) -> DreamPhaseName | None:
    """:meth:`Machine.next_phase` of the canonical machine."""
    return canonical_machine().next_phase(phase)


def transition_path(source: str, dest: str) -> tuple[list[str], list[str]]:
    """:meth:`Machine.transition_path` of the canonical machine."""
    return canonical_machine().transition_path(source, dest)
