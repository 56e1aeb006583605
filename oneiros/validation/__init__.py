"""The validation sweep that promotes or refutes staged hypotheses against later outcomes, and review
decisions.

No name here is public: the modules are private and import each other directly.
From Python: :meth:`oneiros.Oneiros.record_outcome`, :meth:`~oneiros.Oneiros.review` and
:meth:`~oneiros.Oneiros.reevaluate`.
"""

__all__: list[str] = []
