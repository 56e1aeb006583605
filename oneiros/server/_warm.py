"""Build msgspec's type information for every Struct before the server starts its threads.

msgspec fills in a Struct type's decoding information the first time a decoder for it is built,
and while it does, a second thread that builds one for the same type can see it half-made and
crash the process (a NULL read in ``json_decode_struct_map_inner``, seen under load with
msgspec 0.22 on CPython 3.11). The CLI is single-threaded; the server decodes from request
threads, the projection follower and the event streams at once. So everything the server can
decode is imported and given a decoder once, in the main thread, before any of those start.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import msgspec

from oneiros.events._codec import current_decoder, topics_for
from oneiros.events._types import registered_events

__all__ = ["warm_decoders"]

# What the server runs on request threads: cycles (workers, engines, generators), projections,
# and its own request bodies.
_MODULES = (
    "oneiros.episodes",
    "oneiros.generators",
    "oneiros.phases",
    "oneiros.workers",
    "oneiros.projections",
    "oneiros.config",
    "oneiros.app",
    "oneiros.server._models",
)


def _structs(cls: type[msgspec.Struct]) -> Iterator[type[msgspec.Struct]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _structs(sub)


def warm_decoders() -> int:
    """Import the server's modules and build a decoder for every Struct type; returns how many."""
    for name in _MODULES:
        importlib.import_module(name)
    for cls in registered_events().values():
        for topic in topics_for(cls):
            current_decoder(topic)
    count = 0
    for struct in set(_structs(msgspec.Struct)):
        try:
            msgspec.json.Decoder(struct)
        except (TypeError, ValueError):
            continue  # a Struct msgspec cannot decode on its own (a forward reference, a bare base)
        count += 1
    return count
