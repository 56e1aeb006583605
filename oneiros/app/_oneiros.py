"""The class a user holds: every use case of oneiros, once, for the CLI, REST, MCP and Python."""

from __future__ import annotations

from oneiros.app._items import Keeping
from oneiros.app._lab import Lab
from oneiros.app._memory_block import MemoryBlock, memory_block
from oneiros.app._profile import profile_items
from oneiros.projections._profile import ProfileItem

__all__ = ["Oneiros"]


class Oneiros(Lab, Keeping):
    """oneiros over one store: record what a golem lives through, dream, read what dreaming
    produced, decide on it, and look into how dreaming goes.

    ``store`` is a store URL (opened here, closed by :meth:`close`), an open
    :class:`~oneiros.EventStore` (left to its owner) or None (``$ONEIROS_STORE``, the
    config's ``store``, else ``sqlite:///.oneiros/events.db``); ``config`` the settings every
    process reads (default: ``oneiros.toml`` and ``ONEIROS_*``, as ``load_config()`` gives them);
    ``deps`` the clock, ids and seed. Each method returns a Struct of :mod:`oneiros.app` (the
    shape ``oneiros ... --json``, the REST API and the MCP tools answer with) and raises an error
    of the :class:`~oneiros.OneirosError` tree for a mistake.

    >>> with Oneiros("memory://") as app:
    ...     app.create_golem("g1").mode
    'Waking'
    """

    def memory_block(
        self, golem_id: str, query: str | None = None, *, budget_tokens: int | None = None, limit: int | None = None
    ) -> MemoryBlock:
        """What the golem knows, as a prompt section of at most ``budget_tokens`` tokens (the
        config's ``memory_block.budget_tokens`` if None): MEMORY.md's lines, then what recall ranks
        for ``query`` (its first ``limit`` results and related dreams; the config's
        ``memory_block.limit`` if None), each line whole, dated and naming its turns. A read:
        records no recall."""
        return memory_block(self, golem_id, query, budget_tokens=budget_tokens, limit=limit)

    def profile(self, golem_id: str, *, history: bool = False) -> list[ProfileItem]:
        """The golem's profile (core memory): the user's standing instructions, preferences and
        facts about themselves the dreams found, each naming its turns; with ``history``, the
        entries later ones replaced too, with when each held."""
        return profile_items(self, golem_id, history=history)
