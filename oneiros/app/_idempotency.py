"""Running a write once per idempotency key (the events' side of it: ``oneiros.events._idempotency``).

A write given a key records the key with its own first append, in one transaction, then the
answer it gives: the key joins the write's :class:`~oneiros.store._unit.UnitOfWork`, so it goes
only with an append the write makes through that unit, never with another append made meanwhile.
The same key again, with the same request, appends nothing and gets that answer back, from this
process or any other on the store, before or after a restart; with another request it is
IdempotencyKeyReused. A write whose answer is only the events it appended (given ``rebuild``) is
answered from them when its first request stopped before answering (its server was killed
between the two appends): the key says how many events it rode behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from oneiros._deps import Deps
from oneiros._errors import IdempotencyKeyReused, IllegalCommand, InputError, StreamConflict
from oneiros.events._idempotency import IdempotencyKeyUsed, idempotency_stream
from oneiros.events._types import EventMeta
from oneiros.store._store import EventStore, Recorded, StreamAppend
from oneiros.store._unit import UnitOfWork

__all__ = ["MAX_KEY", "once"]

T = TypeVar("T")
MAX_KEY = 256
_WAIT_S = 10.0
"""How long a retry waits for the answer of a first request still running (another thread or server)."""


def _digest(operation: str, request: Any) -> str:
    return hashlib.sha256(msgspec.json.encode([operation, request], order="deterministic")).hexdigest()


def _found(store: EventStore, stream: str) -> list[tuple[int, IdempotencyKeyUsed]]:
    """The key's events, each with its log position."""
    return [(r.position, r.event) for r in store.read_stream(stream) if isinstance(r.event, IdempotencyKeyUsed)]


def _again(  # noqa: PLR0913 - private; the key's address, and how its answer is read back (keyword-only)
    store: EventStore,
    golem_id: str,
    key: str,
    digest: str,
    *,
    kind: type[T],
    rebuild: Callable[[list[Recorded]], T] | None,
) -> T:
    """The first answer to ``key``, waited for while the first request still runs (or, with
    ``rebuild``, made again from the events the first request's write appended)."""
    deadline = time.monotonic() + _WAIT_S
    stream = idempotency_stream(golem_id, key)
    while True:
        found = _found(store, stream)
        if found and found[0][1].request != digest:
            raise IdempotencyKeyReused(key, golem_id)
        if len(found) > 1:
            return msgspec.json.decode(found[1][1].answer, type=kind)
        if found and found[0][1].rode and rebuild is not None:
            # The key is committed with the write, so the write is whole: whether its request is
            # still running or its server died before answering, this is the answer it gives.
            position, rode = found[0][0], found[0][1].rode
            return rebuild(list(store.read_all(after=position - rode - 1, until=position - 1)))
        if time.monotonic() > deadline:
            raise IllegalCommand(
                golem_id, "answering", "retry", f"the request with idempotency key {key!r} was recorded but has "
                "not answered (it is still running, or its server stopped before answering)"
            )  # fmt: skip
        time.sleep(0.05)


def once(  # noqa: PLR0913 - the concern the command decorator applies (app/_concerns.py)
    unit: UnitOfWork,
    deps: Deps,
    golem_id: str,
    key: str | None,
    *,
    request: tuple[str, Any],
    kind: type[T],
    run: Callable[[], T],
    rebuild: Callable[[list[Recorded]], T] | None = None,
) -> T:
    """``run()``'s answer, run only if ``key`` (None: always run) has not come with a request on
    ``golem_id`` before; ``request`` (an operation name and its arguments) says what it asked.
    ``run()`` writes through ``unit``, whose first transaction records the key with its events.
    ``rebuild`` makes the answer from the events of that transaction, where the answer is nothing
    more."""
    if key is None:
        return run()
    if not 1 <= len(key) <= MAX_KEY or not key.isprintable():
        raise InputError(f"an idempotency key is 1-{MAX_KEY} printable characters, not {key[:40]!r}")
    store = unit.store
    digest = _digest(*request)
    stream = idempotency_stream(golem_id, key)
    if _found(store, stream):
        return _again(store, golem_id, key, digest, kind=kind, rebuild=rebuild)
    first = IdempotencyKeyUsed(key=key, request=digest)
    meta = EventMeta(time=deps.clock(), event_id=deps.ids(), golem_id=stream)

    def keyed(own: int) -> StreamAppend:
        rode = own if rebuild is not None else 0
        return StreamAppend(stream, 0, [(meta, msgspec.structs.replace(first, rode=rode))])

    unit.join(keyed)
    try:
        answer = run()
    except StreamConflict as exc:
        if exc.golem_id != stream:
            raise
        return _again(
            store, golem_id, key, digest, kind=kind, rebuild=rebuild
        )  # another request with the key appended first
    answered = IdempotencyKeyUsed(key=key, request=digest, status=1, answer=msgspec.json.encode(answer).decode())
    then = (EventMeta(time=deps.clock(), event_id=deps.ids(), golem_id=stream), answered)
    if not unit.pending:  # the key went with the write: its answer follows
        store.append(stream, 1, [then])
        return answer
    # Nothing written through the unit carried the key: a cycle the server runs appends its start
    # on a thread of its own. The key follows the start, with the answer; a retry in between finds
    # the golem dreaming (409) rather than starting the cycle twice.
    with contextlib.suppress(StreamConflict):  # another request with the key recorded it first
        store.append(stream, 0, [(meta, first), then])
    return answer
