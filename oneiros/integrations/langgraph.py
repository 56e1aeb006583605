"""LangGraph's long-term memory store over oneiros: :class:`OneirosStore`, a ``BaseStore`` whose
items live in golems' logs, so what an agent keeps is what its golem dreams about.

A namespace maps to a golem: its first label names the golem (``("alice", "memories")`` is golem
``alice``), or, with ``StoreSettings(golem="agent")``, every namespace maps to that one golem; either
way the whole namespace stays on the item. ``put`` records the item (an ``ItemKept`` event) and
its text as an episode of that golem, in one transaction; ``delete`` records ``ItemForgotten``;
``get``, ``search`` and ``list_namespaces`` read the fold of those events, caught up with the log on
every call, so another store (another process) on the same log sees the same items. A search with
a query is oneiros recall: items and what the golem's dreams made of them in one ranking, each
with its BM25 relevance as ``score``. See docs/integrations/langgraph.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import msgspec

from oneiros import ConfigError, GolemNotFound, InputError
from oneiros.app import Oneiros, StoredItem

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError:
    raise ConfigError("oneiros.integrations.langgraph needs LangGraph: pip install 'oneiros[langgraph]'") from None

__all__ = ["OneirosStore", "StoreSettings"]


class StoreSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How an :class:`OneirosStore` maps LangGraph's items onto golems."""

    golem: str | None = None
    """The golem every item goes to; None: each namespace's first label names its golem."""
    fields: tuple[str, ...] = ("$",)
    """The value's fields whose text an item's episode holds, as paths (``"text"``,
    ``"memory.summary"``; ``"$"`` for the whole value), when ``put`` names no ``index`` of its
    own: recall finds an item by this text and dreams replay it. An item with no text there is kept
    unindexed."""
    dreams: str | None = "dreams"
    """The label of the namespace a query search shows the golem's dream outputs in (under the
    golem's namespace, ``("alice", "dreams")``, or at the top with ``golem`` set); None leaves
    dreams out of searches. Nothing may be put there."""
    record_recalls: bool = True
    """Log each query search as a recall (``MemoryRecalled``), which recall-driven promotion counts."""


class OneirosStore(BaseStore):
    """A LangGraph ``BaseStore`` over ``oneiros``: an :class:`~oneiros.Oneiros` (left open: its
    owner closes it), or a store URL or None (``$ONEIROS_STORE``, the config's store), opened here
    and closed by :meth:`close`.

    >>> with OneirosStore("memory://") as store:
    ...     store.put(("alice", "memories"), "m1", {"text": "likes green tea"})
    ...     store.get(("alice", "memories"), "m1").value
    {'text': 'likes green tea'}
    """

    supports_ttl = False

    def __init__(self, oneiros: Oneiros | str | None = None, settings: StoreSettings | None = None) -> None:
        self._owned = not isinstance(oneiros, Oneiros)
        self.oneiros = oneiros if isinstance(oneiros, Oneiros) else Oneiros(oneiros)
        self.settings = settings or StoreSettings()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="oneiros-store")

    def close(self) -> None:
        """Close the oneiros this store opened (one it was given stays open)."""
        self._worker.shutdown()
        if self._owned:
            self.oneiros.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- BaseStore ------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, each seeing the writes of those before it."""
        results: list[Result] = []
        for op in ops:
            match op:
                case GetOp(namespace=namespace, key=key):
                    results.append(self._get(namespace, key))
                case SearchOp():
                    results.append(self._search(op))
                case PutOp(namespace=namespace, key=key, value=None):
                    self._delete(namespace, key)
                    results.append(None)
                case PutOp():
                    self._put(op)
                    results.append(None)
                case ListNamespacesOp():
                    results.append(self._namespaces(op))
                case _:
                    raise InputError(f"OneirosStore cannot run a {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` on the store's own thread: oneiros's calls block, and the event loop must
        not; one thread runs every call in the order it was made, so ``gather(aput, adelete, aput)``
        on one key ends as a caller reading it in order expects."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, self.batch, list(ops))

    # -- the operations -------------------------------------------------------------------------

    def _golem(self, namespace: tuple[str, ...]) -> str:
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        return self.settings.golem or namespace[0]

    def _dream_namespace(self, golem: str) -> tuple[str, ...] | None:
        label = self.settings.dreams
        if label is None:
            return None
        return (label,) if self.settings.golem is not None else (golem, label)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        found = self.oneiros.item(self._golem(namespace), namespace, key)
        return None if found is None else _item(found)

    def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise InputError(f"OneirosStore keeps items until they are deleted: put {op.key!r} with ttl=None")
        golem = self._golem(op.namespace)
        dreams = self._dream_namespace(golem)
        if dreams is not None and op.namespace[: len(dreams)] == dreams:
            raise InputError(
                f"namespace {op.namespace!r} is where OneirosStore shows {golem!r}'s dreams: put items elsewhere"
            )
        value = dict(op.value or {})
        fields = None if op.index is False else tuple(op.index) if op.index is not None else self.settings.fields
        text = None if fields is None else item_text(value, fields)
        self.oneiros.keep_item(golem, op.namespace, op.key, value, text=text)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        self.oneiros.forget_item(self._golem(namespace), namespace, key)

    def _golems(self, prefix: Sequence[str]) -> list[str]:
        """The golems whose items a read under ``prefix`` may see (one that does not exist has none)."""
        if self.settings.golem is not None:
            return [self.settings.golem]
        if prefix and prefix[0] != "*":
            return [prefix[0]]
        return [golem.golem_id for golem in self.oneiros.golems().items]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix, wanted = op.namespace_prefix, op.filter or {}
        query = (op.query or "").strip()
        golems = self._golems(prefix)
        found: list[SearchItem] = []
        for golem in golems:
            items = [i for i in self.oneiros.items(golem) if _under(i.namespace, prefix) and _matches(i.value, wanted)]
            found.extend(self._recalled(golem, query, op, items) if query else (_search_item(i, None) for i in items))
        if not query:
            found.sort(key=lambda i: i.updated_at, reverse=True)
        elif len(golems) > 1:  # one golem's are in recall's order; several golems' merge by relevance
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset : op.offset + op.limit]

    def _recalled(self, golem: str, query: str, op: SearchOp, items: list[StoredItem]) -> list[SearchItem]:
        """The golem's items and dream outputs in recall's one ranking, the items it did not rank
        after them with score 0."""
        by_tick = {i.tick: i for i in items if i.tick is not None}
        dreams = self._dream_namespace(golem)
        show_dreams = dreams is not None and _under(dreams, op.namespace_prefix)
        if not items and not show_dreams:
            return []  # nothing recall could rank here: ask nothing, log no recall
        depth = len(items) + op.offset + op.limit
        try:
            hits = self.oneiros.recall(golem, query, depth, record=self.settings.record_recalls).ranking()
        except GolemNotFound:  # a prefix naming no golem: nothing to rank
            hits = []
        ranked: list[SearchItem] = []
        seen: set[tuple[tuple[str, ...], str]] = set()
        for hit in hits:
            if hit.kind == "episode":
                item = by_tick.get(int(hit.ref))
                if item is not None and (item.namespace, item.key) not in seen:
                    seen.add((item.namespace, item.key))
                    ranked.append(_search_item(item, hit.relevance))
            elif show_dreams and dreams is not None:
                value = _dream_value(hit, by_tick)
                if _matches(value, op.filter or {}):
                    at = _time(hit.time)
                    ranked.append(SearchItem(dreams, hit.ref, value, at, at, hit.relevance))
        rest = sorted((i for i in items if (i.namespace, i.key) not in seen), key=lambda i: i.updated_at, reverse=True)
        return ranked + [_search_item(i, 0.0) for i in rest]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefixes = [c.path for c in conditions if c.match_type == "prefix"]
        golems = self._golems(prefixes[0] if prefixes else ())
        every = {item.namespace for golem in golems for item in self.oneiros.items(golem)}
        chosen = {
            ns[: op.max_depth] if op.max_depth is not None else ns
            for ns in every
            if all(_meets(ns, condition) for condition in conditions)
        }
        return sorted(chosen)[op.offset : op.offset + op.limit]


# -- what items are, and how they match ----------------------------------------------------------


def item_text(value: Mapping[str, Any], fields: Sequence[str]) -> str | None:
    """The text of ``value`` at ``fields`` (paths such as ``"text"``, ``"a.b"``, ``"$"`` for the
    whole value): its strings and numbers in order, joined by ``"; "``; None when there are none."""
    parts: list[str] = []
    for field in fields:
        at: list[Any] = [value]
        for step in () if field in ("$", "") else field.removeprefix("$.").split("."):
            at = [x[step] for x in _spread(at) if isinstance(x, Mapping) and step in x]
        parts.extend(_leaves(at))
    text = "; ".join(p for p in parts if p.strip())
    return text or None


def _spread(values: list[Any]) -> Iterator[Any]:
    for value in values:
        if isinstance(value, list):
            yield from value
        else:
            yield value


def _leaves(values: Iterable[Any]) -> Iterator[str]:
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, bool) or value is None:
            continue  # a flag or a gap says nothing recall could find it by
        elif isinstance(value, int | float):
            yield str(value)
        elif isinstance(value, Mapping):
            yield from _leaves(value.values())
        elif isinstance(value, list):
            yield from _leaves(value)


_COMPARE = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether ``value`` passes LangGraph's filter ``wanted``: each key equal to its value, or
    meeting each ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/``$lte`` of it; a nested dict matches
    a nested value."""
    for key, condition in wanted.items():
        if isinstance(condition, Mapping) and condition and all(str(k).startswith("$") for k in condition):
            if key not in value:
                return False
            for op, operand in condition.items():
                compare = _COMPARE.get(op)
                if compare is None:
                    raise InputError(f"unknown filter operator {op!r}: use one of {', '.join(_COMPARE)}")
                try:
                    if not compare(value[key], operand):
                        return False
                except TypeError:  # a string compared with a number: not a match
                    return False
        elif isinstance(condition, Mapping):
            if not (isinstance(value.get(key), Mapping) and _matches(value[key], condition)):
                return False
        elif key not in value or value[key] != condition:
            return False
    return True


def _under(namespace: tuple[str, ...], prefix: Sequence[str]) -> bool:
    return len(namespace) >= len(prefix) and all(p in ("*", n) for p, n in zip(prefix, namespace, strict=False))


def _meets(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if condition.match_type == "prefix":
        return _under(namespace, path)
    if len(path) > len(namespace):
        return False
    return _under(namespace[len(namespace) - len(path) :], path)


def _item(found: StoredItem) -> Item:
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _search_item(found: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(found.namespace, found.key, found.value, found.created_at, found.updated_at, score)


def _dream_value(hit: Any, by_tick: Mapping[int, StoredItem]) -> dict[str, Any]:
    """A dream output as a search item's value: its text, what it is (``kind``, ``standing``
    ``dream`` for a hypothesis, ``fact`` for a validated belief or insight), and the items it
    stands for."""
    sources = [by_tick[t] for t in hit.source_ticks if t in by_tick]
    return {
        "text": hit.text,
        "kind": hit.kind,
        "standing": hit.standing,
        "status": hit.status,
        "confidence": hit.confidence,
        "source_items": [{"namespace": list(s.namespace), "key": s.key} for s in sources],
    }


def _time(text: str | None) -> datetime:
    """When a dream output is about, where recall knows it; else now (a dream output is no item
    and has no creation time of its own)."""
    if text:
        try:
            at = datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return datetime.now(UTC)
