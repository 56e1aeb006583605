"""The GolemMode/DreamPhase machine, the golem fold, the ``Golems`` command service and observers.

No name here is public: the modules are private and import each other directly.
What a user needs is :class:`oneiros.Golems`, :class:`oneiros.GolemState`, :class:`oneiros.Observers`,
:class:`oneiros.Transition` and :func:`oneiros.replay`.
"""

__all__: list[str] = []
