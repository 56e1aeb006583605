"""The GolemMode/DreamPhase machine, the golem aggregate, its service and observers, and the scheduler."""

from oneiros.fsm._gates import Check
from oneiros.fsm._golem import CycleCounts, GolemState, cycle_outputs, fold, register_cycle_output
from oneiros.fsm._machine import MACHINE_STATES, TRIGGERS, destination, phase_state, transition_path
from oneiros.fsm._observers import Observers, Transition, follow_log
from oneiros.fsm._schedule_state import ScheduleState, fold_schedule
from oneiros.fsm._scheduler import Decision, should_dream
from oneiros.fsm._service import Golems, replay
from oneiros.fsm._urgency import Intensity, Signals, clock_urgency, dream_intensity, dream_urgency

__all__ = [
    "MACHINE_STATES",
    "TRIGGERS",
    "Check",
    "CycleCounts",
    "Decision",
    "GolemState",
    "Golems",
    "Intensity",
    "Observers",
    "ScheduleState",
    "Signals",
    "Transition",
    "clock_urgency",
    "cycle_outputs",
    "destination",
    "dream_intensity",
    "dream_urgency",
    "fold",
    "fold_schedule",
    "follow_log",
    "phase_state",
    "register_cycle_output",
    "replay",
    "should_dream",
    "transition_path",
]
