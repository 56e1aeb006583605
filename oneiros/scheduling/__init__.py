"""When to dream: the gates and triggers of every source document, urgency and intensity, the
schedule state folded from the log, and the pure ``should_dream`` decision.

No name here is public: the modules are private and import each other directly.
From Python: :meth:`oneiros.Oneiros.should_dream`; the settings are :class:`oneiros.settings.ScheduleSettings`.
"""

__all__: list[str] = []
