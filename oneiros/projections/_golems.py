"""The golems read model: each golem's state at the head, so listing golems and reading one never
replays the log (``oneiros.fsm.replay`` and ``Golems.state(until=...)`` still do, for any position)."""

from __future__ import annotations

import msgspec

from oneiros.events import Event, Recorded
from oneiros.fsm import GolemState
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Rows

__all__ = ["GolemsProjection", "golem_state", "golem_states"]


class GolemsProjection:
    """Rows ``state/<golem>``: the fold of the golem's own stream (side streams are not golems)."""

    name = "golems"
    types: tuple[type[Event], ...] = ()

    def apply(self, record: Recorded, rows: Rows) -> None:
        golem_id = record.meta.golem_id
        if ":" in golem_id:
            return
        state = rows.edit("state", golem_id, GolemState)
        if state is None:
            state = GolemState(golem_id=golem_id)
            rows.put("state", golem_id, state)
        state.apply(record)


def golem_states(db: ProjectionDB) -> list[GolemState]:
    """Every golem that was created, by id."""
    states = [msgspec.json.decode(d, type=GolemState) for _k, _key, d in db.scan("golems", "state")]
    return [s for s in states if s.exists]


def golem_state(db: ProjectionDB, golem_id: str) -> GolemState | None:
    data = db.get("golems", "state", golem_id)
    state = None if data is None else msgspec.json.decode(data, type=GolemState)
    return state if state is not None and state.exists else None
