"""Read models built from the log. The golem states themselves are rebuilt by
:func:`oneiros.fsm.replay`; journal, staging and validation projections live here."""

__all__: list[str] = []
