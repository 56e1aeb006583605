"""What an agent recalled: every ``recall_memory`` query and what it found (Dense-Mem).

Recalls live in the ``<golem>:recall`` side stream, so a recall never races a dream cycle for the
golem's next version. How often, and under how many distinct queries, an entry is recalled is a
fold of these events (OpenClaw's deep phase promotes only what passes 3 recalls and 3 distinct
queries; a later issue reads the counts).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from oneiros.events._types import Event, event_type

__all__ = ["RECALL_STREAM", "MemoryRecalled", "RecallHit", "RecallKind"]

RECALL_STREAM = "recall"

RecallKind = Literal["episode", "belief", "insight", "memory", "dream", "observation", "profile"]
"""What a hit is: a waking episode, a belief, a promoted insight, a MEMORY.md line, a staged dream
(proposed or reinforced), a dream's observation, thread or summary (``DreamObservation``), or a
profile entry (a ``DreamObservation`` of kind ``profile``); the last three are returned apart from
the results, as ``related_dreams``."""


class RecallHit(msgspec.Struct, frozen=True, kw_only=True):
    kind: RecallKind
    ref: str
    """The episode tick, the entry id, ``MEMORY.md:v<version>:<line>``, or an observation's event id."""
    score: Annotated[float, msgspec.Meta(ge=0.0)]


@event_type("MemoryRecalled")
class MemoryRecalled(Event, frozen=True, kw_only=True):
    """One recall: the query as asked, the results and the related dreams it returned."""

    golem_id: Annotated[str, msgspec.Meta(min_length=1)]
    query: str
    hits: tuple[RecallHit, ...] = ()
    related_dreams: tuple[RecallHit, ...] = ()
