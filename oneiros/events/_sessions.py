"""What an agent framework's session takes back from a golem.

A session (an OpenAI Agents SDK ``Session``) shows the golem's episodes that carry an item
(``Episode.item``), in tick order. Taking its last item back or clearing it is an event, and the
session is a fold of the log, so nothing recorded is changed or deleted: the episodes stay what the
golem lived through, for dreaming and recall; only the session no longer shows them.
"""

from __future__ import annotations

from oneiros.events._types import Count, Event, event_type

__all__ = ["SessionCleared", "SessionItemPopped"]


@event_type("SessionItemPopped")
class SessionItemPopped(Event, frozen=True, kw_only=True):
    """The session took back its newest item, the episode at ``tick`` (the SDK's ``pop_item``)."""

    tick: Count


@event_type("SessionCleared")
class SessionCleared(Event, frozen=True, kw_only=True):
    """Every item the session showed left it (the SDK's ``clear_session``); items recorded later
    are shown again. ``items`` is how many it showed, for whoever reads the log."""

    items: Count = 0
