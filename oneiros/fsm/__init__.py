"""The GolemMode/DreamPhase machine, the golem fold, the ``Golems`` command service and observers."""

from oneiros.fsm._golem import CycleCounts, GolemState, fold
from oneiros.fsm._machine import MACHINE_STATES, TRIGGERS, destination, next_phase, phase_state, transition_path
from oneiros.fsm._observers import Observers, Transition, follow_log
from oneiros.fsm._races import is_host_fact, retry_race
from oneiros.fsm._service import Golems, replay

__all__ = [
    "MACHINE_STATES",
    "TRIGGERS",
    "CycleCounts",
    "GolemState",
    "Golems",
    "Observers",
    "Transition",
    "destination",
    "fold",
    "follow_log",
    "is_host_fact",
    "next_phase",
    "phase_state",
    "replay",
    "retry_race",
    "transition_path",
]
