"""The heartbeat daemon behind ``oneiros run`` and the log follower it keeps running (validation sweep, health
alarms, projections), and micro-consolidation between dreams."""

from oneiros.daemon._catch_up import follow, update
from oneiros.daemon._daemon import SESSION_PREFIX, Daemon, Delivery, Message, interactive_history, session_key
from oneiros.daemon._follower import LogFollower

__all__ = [
    "SESSION_PREFIX",
    "Daemon",
    "Delivery",
    "LogFollower",
    "Message",
    "follow",
    "interactive_history",
    "session_key",
    "update",
]
