"""The heartbeat daemon behind ``oneiros run``: activity in, scheduler decisions and cycles out; the
log follower it keeps running (validation sweep, health alarms, projections); and the offline A/B
behind ``oneiros ab``, which replays a recorded timeline under two arms."""

from oneiros.daemon._ab import ABReport, Arm, ArmReport, TimelineStep, load_timeline, run_ab, run_arm
from oneiros.daemon._daemon import SESSION_PREFIX, Daemon, Delivery, Message, interactive_history, session_key
from oneiros.daemon._follower import LogFollower

__all__ = [
    "SESSION_PREFIX",
    "ABReport",
    "Arm",
    "ArmReport",
    "Daemon",
    "Delivery",
    "LogFollower",
    "Message",
    "TimelineStep",
    "interactive_history",
    "load_timeline",
    "run_ab",
    "run_arm",
    "session_key",
]
