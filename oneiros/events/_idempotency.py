"""Idempotency keys: a request a client may retry (``Idempotency-Key``) writes its key with its
first append, in the same transaction, to a side stream of its own.

The stream ``<golem>:idempotency:<digest of the key>`` holds version 1, the key and what the request
asked (a digest of it), written with the request's own events, so a key is recorded if and only if
they are; the stream's version 1 can be taken once, so of two servers handling the same key one
appends and the other conflicts. Version 2 holds the answer the first request got, once it has one:
a retry gets it back rather than running again. A write whose answer is only the events it wrote
(episodes, activity) can have that answer rebuilt from the log if its first request stopped before
version 2 was written: version 1 says how many of the events just before it were that write.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

import msgspec

from oneiros.events._types import Event, event_type

__all__ = ["IDEMPOTENCY_STREAM", "IdempotencyKeyUsed", "idempotency_stream"]

IDEMPOTENCY_STREAM = "idempotency"


def idempotency_stream(golem_id: str, key: str) -> str:
    """The side stream of ``key`` on ``golem_id``: a digest names it, whatever characters the key has."""
    return f"{golem_id}:{IDEMPOTENCY_STREAM}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"


@event_type("IdempotencyKeyUsed")
class IdempotencyKeyUsed(Event, frozen=True, kw_only=True):
    """A request with an idempotency key: the key and a digest of what it asked (version 1), or
    the answer it got (version 2: ``status`` and the JSON ``answer``)."""

    key: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    request: str
    """SHA-256 of the operation and its arguments: the same key with another request is refused."""
    status: int = 0
    answer: str = ""
    rode: int = 0
    """Version 1: how many events of the request's write came just before this one in its
    transaction (0: none, or recorded before ``rode`` existed). They are the write a retry finds
    when its first request stopped before answering, and its answer is rebuilt from them."""
