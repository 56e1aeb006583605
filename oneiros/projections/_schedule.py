"""The schedule read model: each golem's :class:`~oneiros.scheduling.ScheduleState` at the head, so
``oneiros should-dream`` and the server's ``/should-dream`` answer from one row rather than a fold of
the golem's whole stream (13.7 s and 2.1 GB at a million episodes). The daemon still folds the
stream itself: it starts once and then keeps the state live."""

from __future__ import annotations

import msgspec

from oneiros.events import Event, Recorded
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Rows
from oneiros.scheduling import ScheduleState

__all__ = ["ScheduleProjection", "schedule_state"]


class ScheduleProjection:
    """Rows ``state/<golem>``: :func:`~oneiros.scheduling.fold_schedule` of the golem's own stream.

    It reads every event (no ``types``) so the state's ``version`` and ``position`` are the stream's
    head, as the fold's are: the daemon resumes a stream read from ``version``."""

    name = "schedule"
    types: tuple[type[Event], ...] = ()

    def apply(self, record: Recorded, rows: Rows) -> None:
        golem_id = record.meta.golem_id
        if ":" in golem_id:  # side streams (golem:lineage, ...) are not the golem's own
            return
        state = rows.edit("state", golem_id, ScheduleState)
        if state is None:
            state = ScheduleState(golem_id=golem_id)
            rows.put("state", golem_id, state)
        state.apply(record)


def schedule_state(db: ProjectionDB, golem_id: str) -> ScheduleState | None:
    """The golem's schedule state, or None when it was never created."""
    data = db.get("schedule", "state", golem_id)
    state = None if data is None else msgspec.json.decode(data, type=ScheduleState)
    return state if state is not None and state.mode is not None else None
