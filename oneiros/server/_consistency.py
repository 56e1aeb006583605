"""Consistency tokens over HTTP: a write answers with the log position it reached (the
``Oneiros-Position`` header, and ``position`` in its body), and a read that passes a position back
(``?min_position=`` or the ``Oneiros-Consistency`` header) answers from projections that include
it, waiting for them at most ``server.consistency_seconds`` (then 503 ``ProjectionBehind`` with
``Retry-After``). eventsourcing's and DBOS's way: the writer holds no lock while the read models
catch up, and a reader that needs a write names it."""

from __future__ import annotations

from collections.abc import Mapping

from oneiros._errors import InputError

__all__ = ["CONSISTENCY_HEADER", "MIN_POSITION", "POSITION_HEADER", "RETRY_AFTER_SECONDS", "floor_of"]

POSITION_HEADER = "Oneiros-Position"
CONSISTENCY_HEADER = "Oneiros-Consistency"
MIN_POSITION = "min_position"
RETRY_AFTER_SECONDS = 1
"""What a 503 ProjectionBehind tells a client to wait: the follower applies a batch in milliseconds,
so a projection still behind after seconds is catching up a long stretch."""

_LARGEST = 2**63 - 1


def _position(where: str, raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise InputError(f"{where}={raw!r} must be a log position (an integer)") from None
    if not 0 <= value <= _LARGEST:
        raise InputError(f"{where}={value} must be 0-{_LARGEST}")
    return value


def floor_of(headers: Mapping[str, str], query: Mapping[str, str]) -> int:
    """The position a request's reads must include: the larger of ``?min_position=`` and the
    ``Oneiros-Consistency`` header (0 when neither is given)."""
    floor = 0
    raw = query.get(MIN_POSITION)
    if raw:
        floor = _position(f"query parameter {MIN_POSITION}", raw)
    header = headers.get(CONSISTENCY_HEADER.lower())
    if header:
        floor = max(floor, _position(f"header {CONSISTENCY_HEADER}", header))
    return floor
