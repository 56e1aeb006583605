"""Exact lineage: which generator call each dream output was made from.

An engine knows, when it makes an output, the call whose parsed answer it made it from; it says so
in one ``OutputsSourced`` event per phase, beside the outputs. Integration carries the call key on to
the ``DreamStaged`` it classifies an output into, and the staging process on to the entry's
``Lineage``, where it names one ``GenerationRecorded`` (by call key, with its request hash). No
response text is matched anywhere on the way.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from oneiros.events._codec import register_upcaster
from oneiros.events._types import DreamOutput, DreamPhaseName, Event, event_type

__all__ = ["OutputSource", "OutputsSourced", "output_digest"]


class OutputSource(msgspec.Struct, frozen=True, kw_only=True):
    """One output of the phase and the call it was made from."""

    output_type: str
    digest: str
    """``output_digest`` of the output."""
    call_key: str


@event_type("OutputsSourced")
class OutputsSourced(DreamOutput, frozen=True, kw_only=True):
    """The generator call behind each output a phase made from one (in the order they were made)."""

    phase: DreamPhaseName
    sources: tuple[OutputSource, ...]


def output_digest(event: Event) -> str:
    """An output's identity: the BLAKE2b of its type and encoded payload, the same when the
    engine makes it and when a later phase reads it back from the log."""
    raw = event.type_name.encode() + b"\0" + msgspec.json.encode(event)
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


@register_upcaster("DreamStaged", from_version=1)
def _dream_staged_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 did not name the call its content came from: ``call_key=""``."""
    return {**data, "call_key": ""}


@register_upcaster("EntryStaged", from_version=1)
def _entry_staged_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1's lineage named the generation only by the prompt and model it found by matching response
    text; v2 names the call exactly, unknown ("") for a v1 entry."""
    lineage = {**data.get("lineage", {}), "call_key": "", "request_hash": ""}
    return {**data, "lineage": lineage}
