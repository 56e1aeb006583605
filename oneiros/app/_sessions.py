"""A golem's episodes as an agent framework's session (an OpenAI Agents SDK ``Session``).

The session's items are the golem's episodes that carry an ``item`` (the framework's own JSON for
it, kept byte for byte), in tick order. Adding items records episodes at the next free ticks;
taking the newest back and clearing are events (``SessionItemPopped``, ``SessionCleared``); what
the session shows is a fold of the golem's stream, read incrementally, so another object, process
or machine on the same store sees the same items, and the episodes stay the golem's to dream on.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence

import msgspec

from oneiros._errors import GolemExists
from oneiros.app._concerns import use_case
from oneiros.app._core import Core
from oneiros.events._codec import encode_event
from oneiros.events._sessions import SessionCleared, SessionItemPopped
from oneiros.events._types import Episode, EpisodeRecorded, Event, EventMeta
from oneiros.fsm._golem import GolemState
from oneiros.store._store import Recorded

__all__ = ["SessionItems", "SessionView", "Sessions"]

_FOLDED: tuple[type[Event], ...] = (EpisodeRecorded, SessionItemPopped, SessionCleared)
"""The events that move a session; a reader skips the rest (a golem's dreams) in the database."""


class SessionView:
    """The fold: which episodes the session shows, as of stream ``version``."""

    __slots__ = ("items", "next_tick", "version")

    def __init__(self) -> None:
        self.items: dict[int, str] = {}
        """Item JSON by tick."""
        self.next_tick = 0
        """One past the highest tick any episode of the golem has: episodes recorded elsewhere
        (an import, ``record_episodes``) hold their ticks, and a session item never replaces one."""
        self.version = 0

    def apply(self, record: Recorded) -> None:
        match record.event:
            case EpisodeRecorded(episode=episode):
                self.next_tick = max(self.next_tick, episode.tick + 1)
                if episode.item is not None:
                    self.items[episode.tick] = episode.item
                else:  # recorded again without an item: that tick is no longer the session's
                    self.items.pop(episode.tick, None)
            case SessionItemPopped(tick=tick):
                self.items.pop(tick, None)
            case SessionCleared():
                self.items.clear()
        self.version = record.version

    def ordered(self) -> list[int]:
        return sorted(self.items)


class SessionItems:
    """The session of ``golem_id`` over ``core``'s store: its items as JSON texts, oldest first.

    Blocking: each method reads the golem's stream from where this object last read it. One
    object serves one thread at a time (a lock orders its calls); any number of objects, in any
    number of processes, may share the golem, since every write is built from the stream as the
    append finds it."""

    def __init__(self, core: Core, golem_id: str) -> None:
        self.core = core
        self.golem_id = golem_id
        self._view = SessionView()
        self._lock = threading.Lock()

    def items(self, limit: int | None = None) -> list[str]:
        """The newest ``limit`` items (every one if None), oldest first."""
        return [item for _tick, item in self.entries(limit)]

    def entries(self, limit: int | None = None) -> list[tuple[int, str]]:
        """The newest ``limit`` items (every one if None) with their episodes' ticks, oldest first."""
        with self._lock:
            view = self._caught_up()
            ticks = view.ordered()
            if limit is not None:
                ticks = ticks[-limit:] if limit > 0 else []
            return [(tick, view.items[tick]) for tick in ticks]

    def add(self, episodes: Sequence[Episode]) -> list[int]:
        """Record ``episodes`` (each carrying its ``item``) at the golem's next free ticks, in one
        transaction, creating the golem if it is new; each without a ``time`` gets the clock's.
        The ticks they took."""
        if not episodes:
            return []
        with self._lock:
            golems = self.core.golems()
            now = self.core.deps.clock()
            if not golems.created(self.golem_id):
                # The first items make the golem: an item the log would refuse must not leave an empty one.
                meta = EventMeta(time=now, event_id="unwritten", golem_id=self.golem_id)
                for episode in episodes:
                    encode_event(meta, EpisodeRecorded(episode=episode))
                with contextlib.suppress(GolemExists):  # another writer created it first: theirs is ours
                    golems.create(self.golem_id)

            def build(state: GolemState) -> list[Event]:
                first = self._caught_up(state.version).next_tick
                return [
                    EpisodeRecorded(
                        episode=msgspec.structs.replace(episode, tick=first + index, time=episode.time or now)
                    )
                    for index, episode in enumerate(episodes)
                ]

            records = golems.record_built(self.golem_id, build)
            self._settle(records)
            return [r.event.episode.tick for r in records if isinstance(r.event, EpisodeRecorded)]

    def pop(self) -> str | None:
        """Take the newest item out of the session and return it; None when it shows none."""
        with self._lock:
            if not self.core.golems().created(self.golem_id):
                return None
            taken: list[str] = []

            def build(state: GolemState) -> list[Event]:
                view = self._caught_up(state.version)
                taken.clear()
                if not view.items:
                    return []
                tick = max(view.items)
                taken.append(view.items[tick])
                return [SessionItemPopped(tick=tick)]

            self._settle(self.core.golems().record_built(self.golem_id, build))
            return taken[0] if taken else None

    def clear(self) -> int:
        """Take every item out of the session; how many it showed (0: nothing is written)."""
        with self._lock:
            if not self.core.golems().created(self.golem_id):
                return 0
            held: list[int] = [0]

            def build(state: GolemState) -> list[Event]:
                held[0] = len(self._caught_up(state.version).items)
                return [SessionCleared(items=held[0])] if held[0] else []

            self._settle(self.core.golems().record_built(self.golem_id, build))
            return held[0]

    def _caught_up(self, version: int | None = None) -> SessionView:
        """The fold up to stream ``version`` (the head if None). A fold already past it (another
        object's write read in between) is kept: the append at ``version`` then loses its race and
        is built again from the head."""
        view = self._view
        if version is not None and view.version >= version:
            return view
        for record in self.core.store.read_stream(self.golem_id, after_version=view.version, types=_FOLDED):
            if version is not None and record.version > version:
                break
            view.apply(record)
        if version is not None:  # the read covered the stream up to it: the other events change nothing here
            view.version = max(view.version, version)
        return view

    def _settle(self, records: list[Recorded]) -> None:
        """Fold the write in, and where a follower keeps the read models up, make the call's reads
        to come include it. Where reads catch the read models up themselves (``catch_up``), the
        sweep and projections are left for the next read rather than run on every turn: an agent
        records two writes a turn, and catching up after each took three quarters of its time."""
        if not records:
            return
        for record in records:
            if record.version == self._view.version + 1:  # else a read of the stream catches up
                self._view.apply(record)
        if not self.core.catch_up:
            self.core.written(records[-1].position, "golems", shown=False)


class Sessions:
    """The use cases of an agent framework's session over a golem's episodes: one
    :class:`SessionItems` per golem, kept for the application's life, so each call reads the
    golem's stream only from where the last one left it.

    Each write is watched by :meth:`SessionItems._settle`, not declared: where reads catch up
    themselves it leaves the read models for the next read, which a declared write would not."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._held: dict[str, SessionItems] = {}
        self._lock = threading.Lock()

    @use_case()
    def session_items(self, golem_id: str, limit: int | None = None) -> list[str]:
        """The newest ``limit`` items of the session of ``golem_id`` (every one if None), as the
        framework's JSON texts, oldest first; none for a golem that does not exist."""
        return self._session(golem_id).items(limit)

    @use_case()
    def session_entries(self, golem_id: str, limit: int | None = None) -> list[tuple[int, str]]:
        """:meth:`session_items` with the tick of each item's episode."""
        return self._session(golem_id).entries(limit)

    @use_case()
    def append_session_items(self, golem_id: str, episodes: Sequence[Episode]) -> list[int]:
        """Record ``episodes`` (each carrying its ``item``) at the golem's next free ticks, in one
        transaction, creating the golem if it is new; the ticks they took."""
        return self._session(golem_id).add(episodes)

    @use_case()
    def pop_session_item(self, golem_id: str) -> str | None:
        """Take the newest item out of the session and return it; None when it shows none."""
        return self._session(golem_id).pop()

    @use_case()
    def clear_session(self, golem_id: str) -> int:
        """Take every item out of the session; how many it showed (0: nothing is written)."""
        return self._session(golem_id).clear()

    def _session(self, golem_id: str) -> SessionItems:
        with self._lock:
            held = self._held.get(golem_id)
            if held is None:
                held = self._held[golem_id] = SessionItems(self.core, golem_id)
            return held
