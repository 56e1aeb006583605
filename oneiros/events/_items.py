"""Items an agent framework keeps for a golem: a key-value store over the log (LangGraph's
``BaseStore``, ``oneiros.integrations.langgraph``).

An item lives in a namespace (a path of labels) under a key, and holds a JSON object. Keeping one
is an event, and so is forgetting it: what a store holds is the fold of these events, nothing is
updated in place. The text of an item that is indexed is recorded beside it as an episode, in the
same transaction, so recall finds it and dreams replay it; ``tick`` names that episode.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from oneiros.events._types import Event, event_type

__all__ = ["ItemForgotten", "ItemKept", "Namespace"]

_Label = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Namespace = Annotated[tuple[_Label, ...], msgspec.Meta(min_length=1, max_length=32)]
_Key = Annotated[str, msgspec.Meta(max_length=1024)]


@event_type("ItemKept")
class ItemKept(Event, frozen=True, kw_only=True):
    """The agent kept ``value`` under ``key`` in ``namespace`` (a new item, or a new value of one).
    ``tick`` is the episode recorded with it (its text, which recall and dreams read), None when
    the item is kept unindexed."""

    namespace: Namespace
    key: _Key
    value: dict[str, Any]
    tick: int | None = None


@event_type("ItemForgotten")
class ItemForgotten(Event, frozen=True, kw_only=True):
    """The agent deleted the item under ``key`` in ``namespace``. Its episode stays in the log (the
    golem lived it); the store's reads and searches no longer show the item."""

    namespace: Namespace
    key: _Key
