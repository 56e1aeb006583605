"""The cycle runtime every executor uses: the phase runner, budgets, the metered generator, leases held
while a phase runs, the reconciler, and the in-process executor.

No name here is public: the modules are private and import each other directly.
What a user needs is :class:`oneiros.InProcessExecutor` and :class:`oneiros.CycleResult`.
"""

__all__: list[str] = []
