"""Dreaming health: the process that raises and clears alarms after each cycle and decision, and reports.

No name here is public: the modules are private and import each other directly.
From Python: :meth:`oneiros.Oneiros.health`; on the command line, ``oneiros health``.
"""

__all__: list[str] = []
