"""When to dream: the gates and triggers of every source document, urgency and intensity, the
schedule state folded from the log, and the pure ``should_dream`` decision."""

from oneiros.scheduling._gates import Check
from oneiros.scheduling._schedule_state import ScheduleState, fold_schedule
from oneiros.scheduling._scheduler import Decision, should_dream
from oneiros.scheduling._urgency import Intensity, Signals, clock_urgency, dream_intensity, dream_urgency, urgency_terms

__all__ = [
    "Check",
    "Decision",
    "Intensity",
    "ScheduleState",
    "Signals",
    "clock_urgency",
    "dream_intensity",
    "dream_urgency",
    "fold_schedule",
    "should_dream",
    "urgency_terms",
]
