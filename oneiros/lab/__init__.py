"""The dream lab: re-run, fork and diff recorded cycles, and the offline A/B of a recorded timeline.

No name here is public: the modules are private and import each other directly.
From Python: :meth:`oneiros.Oneiros.rerun`, :meth:`~oneiros.Oneiros.fork` and :meth:`~oneiros.Oneiros.diff`;
on the command line, ``oneiros rerun``, ``fork``, ``diff`` and ``ab``.
"""

__all__: list[str] = []
