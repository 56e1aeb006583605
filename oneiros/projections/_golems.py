"""The golems read model: each golem's state at the head, so listing golems and reading one never
replays the log (``oneiros.replay`` and ``Golems.state(until=...)`` still do, for any position)."""

from __future__ import annotations

from typing import ClassVar, Protocol

import msgspec

from oneiros.events._types import Event
from oneiros.fsm._golem import GolemState
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Rows
from oneiros.store._store import Recorded, Tally

__all__ = ["GolemsProjection", "OwnStreamFold", "golem_state", "golem_states"]


class _Fold(Protocol):
    """A state that is a fold of one golem's stream, moved only by ``apply``: a msgspec Struct (a
    Protocol cannot say so, hence the two ignores below)."""

    def __init__(self, *, golem_id: str) -> None: ...

    def apply(self, record: Recorded) -> None: ...

    def apply_tally(self, tally: Tally) -> None: ...

    @staticmethod
    def tallied() -> tuple[type[Event], ...]: ...


class OwnStreamFold:
    """Rows ``state/<golem>``: ``state_type`` folded over the golem's own stream (side streams are
    not golems). Every event is read, so the state's version is the stream's head, as a fold's is;
    caught up on its own, the events the state only counts come as tallies (a
    :class:`~oneiros.projections._runner.TallyingProjection`)."""

    name: str
    state_type: ClassVar[type[_Fold]]
    types: tuple[type[Event], ...] = ()

    def apply(self, record: Recorded, rows: Rows) -> None:
        golem_id = record.meta.golem_id
        if ":" not in golem_id:
            self._state(golem_id, rows).apply(record)

    def tallied(self) -> tuple[type[Event], ...]:
        return self.state_type.tallied()

    def tally(self, tally: Tally, rows: Rows) -> None:
        if ":" not in tally.golem_id:
            self._state(tally.golem_id, rows).apply_tally(tally)

    def _state(self, golem_id: str, rows: Rows) -> _Fold:
        state = rows.edit("state", golem_id, self.state_type)  # type: ignore[type-var]
        if state is None:
            state = self.state_type(golem_id=golem_id)
            rows.put("state", golem_id, state)  # type: ignore[arg-type]
        return state


class GolemsProjection(OwnStreamFold):
    """Each golem's :class:`~oneiros.GolemState` at the head."""

    name = "golems"
    state_type = GolemState


def golem_states(db: ProjectionDB) -> list[GolemState]:
    """Every golem that was created, by id."""
    states = [msgspec.json.decode(d, type=GolemState) for _k, _key, d in db.scan("golems", "state")]
    return [s for s in states if s.exists]


def golem_state(db: ProjectionDB, golem_id: str) -> GolemState | None:
    data = db.get("golems", "state", golem_id)
    state = None if data is None else msgspec.json.decode(data, type=GolemState)
    return state if state is not None and state.exists else None
