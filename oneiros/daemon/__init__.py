"""The heartbeat daemon behind ``oneiros run`` and the log follower it keeps running (validation sweep, health
alarms, projections), and micro-consolidation between dreams.

No name here is public: the modules are private and import each other directly.
Run it with ``oneiros run``; from Python the use cases are methods of :class:`oneiros.Oneiros`.
"""

__all__: list[str] = []
