"""What a golem knows, as an agent reads it before a turn: the profile (core memory) and the
memory block (the profile, MEMORY.md and what recall ranks, within a token budget). Both are reads:
neither records a recall."""

from __future__ import annotations

from oneiros.app._concerns import use_case
from oneiros.app._core import Core
from oneiros.app._memory_block import MemoryBlock, memory_block
from oneiros.app._profile import profile_items
from oneiros.projections._profile import ProfileItem

__all__ = ["Knowledge"]


class Knowledge:
    """The use cases that hand an agent what its golem knows."""

    def __init__(self, core: Core) -> None:
        self.core = core

    # Every read model: the block reads MEMORY.md, the staging buffer, the journal, the profile
    # and recall's indexes.
    @use_case(reads=(), golem="exists")
    def memory_block(
        self, golem_id: str, query: str | None = None, *, budget_tokens: int | None = None, limit: int | None = None
    ) -> MemoryBlock:
        """What the golem knows, as a prompt section of at most ``budget_tokens`` tokens (the
        config's ``memory_block.budget_tokens`` if None): MEMORY.md's lines, then what recall ranks
        for ``query`` (its first ``limit`` results and related dreams; the config's
        ``memory_block.limit`` if None), each line whole, dated and naming its turns. A read:
        records no recall."""
        return memory_block(self.core, golem_id, query, budget_tokens=budget_tokens, limit=limit)

    @use_case(reads=("golems", "profile", "recall"), golem="exists")
    def profile(self, golem_id: str, *, history: bool = False) -> list[ProfileItem]:
        """The golem's profile (core memory): the user's standing instructions, preferences and
        facts about themselves the dreams found, each naming its turns; with ``history``, the
        entries later ones replaced too, with when each held."""
        return profile_items(self.core.projections.db, golem_id, history=history)
