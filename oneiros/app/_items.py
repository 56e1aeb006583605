"""Items an agent framework keeps for a golem (LangGraph's store, ``oneiros.integrations``): keeping
one records its text as an episode and the item itself as an event, in one transaction; what the
golem holds is a fold of those events, caught up with the log on every read."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec

from oneiros._errors import GolemExists, InputError
from oneiros.app._concerns import command
from oneiros.app._core import Core
from oneiros.events._codec import encode_event
from oneiros.events._items import ItemForgotten, ItemKept
from oneiros.events._types import Episode, EpisodeRecorded, Event, EventMeta
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.store._unit import UnitOfWork

__all__ = ["Items", "StoredItem"]

_SUMMARY_MAX = 16_384
"""An episode's summary holds at most this much (``events._types.Summary``): a longer text is
recorded cut there, while the item keeps its whole value."""
_REF_MAX = 256


class StoredItem(msgspec.Struct, frozen=True, kw_only=True):
    """An item as the log says it is now: its namespace, key and JSON value, when it was first kept
    (since it was last forgotten) and last kept, and the episode that holds its text (``tick``,
    None when it is kept unindexed)."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    tick: int | None = None


def _own(item: StoredItem) -> StoredItem:
    """``item`` with a value of the caller's own: a caller that edits what it read (to put it back
    changed) must not change what the fold holds, which only the log may."""
    return msgspec.structs.replace(item, value=msgspec.json.decode(msgspec.json.encode(item.value)))


class _Items:
    """One golem's items folded from its ItemKept and ItemForgotten events, to stream ``version``."""

    __slots__ = ("live", "ticks", "version")

    def __init__(self) -> None:
        self.version = 0
        self.live: dict[tuple[tuple[str, ...], str], StoredItem] = {}
        # Kept after an item is forgotten: keeping its key again replaces the same episode, so
        # recall and dreams hold one text per item, never a stale one beside the new.
        self.ticks: dict[tuple[tuple[str, ...], str], int] = {}

    def apply(self, event: Event, time: datetime) -> None:
        match event:
            case ItemKept(namespace=namespace, key=key, value=value, tick=tick):
                before = self.live.get((namespace, key))
                created = before.created_at if before is not None else time
                self.live[namespace, key] = StoredItem(
                    namespace=namespace, key=key, value=value, created_at=created, updated_at=time, tick=tick
                )
                if tick is not None:
                    self.ticks[namespace, key] = tick
            case ItemForgotten(namespace=namespace, key=key):
                self.live.pop((namespace, key), None)
            case _:  # pragma: no cover - the read asks for these two types only
                pass


class Items:
    """The use cases of a key-value store over a golem's log."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._local = threading.local()  # each thread's folds: a fold is caught up as it is read

    def items(self, golem_id: str) -> list[StoredItem]:
        """The golem's items as the log holds them now, in the order they were first kept; none
        for a golem that does not exist (a read never creates one)."""
        return [_own(item) for item in self._items(golem_id).live.values()]

    def item(self, golem_id: str, namespace: Sequence[str], key: str) -> StoredItem | None:
        """The item under ``key`` in ``namespace``, or None."""
        found = self._items(golem_id).live.get((tuple(namespace), key))
        return None if found is None else _own(found)

    @command(writes=("golems",), shown=False)
    def keep_item(  # noqa: PLR0913 - `unit` is the command decorator's (app/_concerns.py), never a caller's
        self,
        unit: UnitOfWork,
        golem_id: str,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        *,
        text: str | None,
    ) -> StoredItem:
        """Keep ``value`` under ``key`` in ``namespace`` for ``golem_id`` (created if it is new).
        ``text`` is recorded as the item's episode, which recall finds and dreams replay (the
        episode it had before, if any, replaced); None or blank keeps the item unindexed."""
        Golems.check_id(golem_id)
        ns = tuple(namespace)
        try:
            # Through msgspec's JSON: what is stored is what comes back, or a clear error now.
            held = msgspec.json.decode(msgspec.json.encode(dict(value)))
        except (TypeError, msgspec.EncodeError) as exc:
            raise InputError(f"the value of item {key!r} in {ns!r} is not JSON: {exc}") from None
        said = (text or "").strip()[:_SUMMARY_MAX]
        path = "/".join((*ns, key))
        ref = path if len(path) <= _REF_MAX else None

        def episode(tick: int) -> EpisodeRecorded:
            return EpisodeRecorded(episode=Episode(tick=tick, summary=said, time=self.core.deps.clock(), ref=ref))

        # Checked as the store will check them before the golem is created: an item the log
        # refuses (a key or label too long) leaves no golem behind it either.
        trial = EventMeta(time=self.core.deps.clock(), event_id="trial", golem_id=golem_id)
        for event in (ItemKept(namespace=ns, key=key, value=held, tick=0), *((episode(0),) if said else ())):
            encode_event(trial, event)
        golems = self.core.golems(unit)
        if not golems.created(golem_id):
            # Another writer may create it first: the item goes to the same golem.
            with contextlib.suppress(GolemExists):
                golems.create(golem_id)

        def build(state: GolemState) -> list[Event]:
            items = self._items(golem_id)
            tick = None
            events: list[Event] = []
            if said:
                tick = items.ticks.get((ns, key))
                if tick is None:
                    tick = self._next_tick(golem_id, items)
                events.append(episode(tick))
            events.append(ItemKept(namespace=ns, key=key, value=held, tick=tick))
            return events

        golems.record_built(golem_id, build)
        found = self.item(golem_id, ns, key)
        assert found is not None  # just appended, and the fold reads the log
        return found

    @command(writes=("golems",), shown=False)
    def forget_item(self, unit: UnitOfWork, golem_id: str, namespace: Sequence[str], key: str) -> bool:
        """Forget the item under ``key`` in ``namespace``: an event, its episode left in the log.
        False, and nothing written, when there is no such item."""
        ns = tuple(namespace)
        if (ns, key) not in self._items(golem_id).live:
            return False

        def build(state: GolemState) -> list[Event]:
            # Read again on each try: a racing delete that won leaves nothing to forget.
            live = (ns, key) in self._items(golem_id).live
            return [ItemForgotten(namespace=ns, key=key)] if live else []

        return bool(self.core.golems(unit).record_built(golem_id, build))

    def _items(self, golem_id: str) -> _Items:
        """This thread's fold of the golem's items, caught up with its stream (one indexed read of
        the two item types after the version it holds)."""
        folds: dict[str, _Items] | None = getattr(self._local, "items", None)
        if folds is None:
            folds = self._local.items = {}
        fold = folds.get(golem_id)
        if fold is None:
            fold = folds[golem_id] = _Items()
        for record in self.core.store.read_stream(
            golem_id, after_version=fold.version, types=(ItemKept, ItemForgotten)
        ):
            fold.apply(record.event, record.meta.time)
            fold.version = record.version
        return fold

    def _next_tick(self, golem_id: str, items: _Items) -> int:
        """A tick no episode of the golem has: after its newest, so the item's episode follows
        what the golem lived before it."""
        ticks = self.core.logs().read(golem_id).memory.columns().ticks
        newest = int(ticks.max()) if len(ticks) else -1
        return max(newest, *items.ticks.values(), -1) + 1
