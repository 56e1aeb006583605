"""The schedule read model: each golem's :class:`~oneiros.scheduling._schedule_state.ScheduleState` at the head, so
``oneiros should-dream`` and the server's ``/should-dream`` answer from one row rather than a fold of
the golem's whole stream (9.1 s and 2.0 GB at a million episodes). The daemon still folds the
stream itself: it starts once and then keeps the state live."""

from __future__ import annotations

import msgspec

from oneiros.projections._db import ProjectionDB
from oneiros.projections._golems import OwnStreamFold
from oneiros.scheduling._schedule_state import ScheduleState

__all__ = ["ScheduleProjection", "schedule_state"]


class ScheduleProjection(OwnStreamFold):
    """Each golem's :func:`~oneiros.scheduling._schedule_state.fold_schedule` at the head."""

    name = "schedule"
    state_type = ScheduleState


def schedule_state(db: ProjectionDB, golem_id: str) -> ScheduleState | None:
    """The golem's schedule state, or None when it was never created."""
    data = db.get("schedule", "state", golem_id)
    state = None if data is None else msgspec.json.decode(data, type=ScheduleState)
    return state if state is not None and state.mode is not None else None
