"""The profile (core memory) as every interface reads it: the user's standing instructions,
preferences and facts about themselves that the dreams found, current first, each naming its
turns; the memory block puts it first and ``wake_up`` carries it (issue 36)."""

from __future__ import annotations

from typing import Protocol

from oneiros.projections._profile import ProfileItem, profile_of
from oneiros.projections._recall import episode_refs
from oneiros.projections._service import Projections


class _Reader(Protocol):
    """What the profile reads through: the read models, kept up with the log, and the golem check."""

    @property
    def projections(self) -> Projections: ...

    def _fresh(self, *names: str, sweep: bool = ...) -> None: ...

    def _exists(self, golem_id: str) -> None: ...


__all__ = ["profile_items"]


def profile_items(app: _Reader, golem_id: str, *, history: bool = False) -> list[ProfileItem]:
    """The golem's profile: the entries in force (with ``history``, the superseded ones too), in
    the order they were first said."""
    app._fresh("golems", "profile", "recall")
    app._exists(golem_id)
    db = app.projections.db
    entries = [e for e in profile_of(db, golem_id) if history or e.current]
    refs = episode_refs(db, golem_id, (t for e in entries for t in e.source_ticks))
    return [
        ProfileItem(
            key=e.key,
            text=e.text,
            ref=e.ref,
            current=e.current,
            since=e.since,
            until=e.until,
            superseded_by=e.superseded_by,
            source_ticks=e.source_ticks,
            source_refs=tuple(r for t in e.source_ticks if (r := refs.get(t))),
        )
        for e in entries
    ]
