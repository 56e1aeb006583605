"""The profile (core memory) as every interface reads it: the user's standing instructions,
preferences and facts about themselves that the dreams found, current first, each naming its
turns; the memory block puts it first and ``wake_up`` carries it (issue 36)."""

from __future__ import annotations

from oneiros.projections._db import ProjectionDB
from oneiros.projections._profile import ProfileItem, profile_of
from oneiros.projections._recall import episode_refs

__all__ = ["profile_items"]


def profile_items(db: ProjectionDB, golem_id: str, *, history: bool = False) -> list[ProfileItem]:
    """The golem's profile: the entries in force (with ``history``, the superseded ones too), in
    the order they were first said. The caller's use case declares the read models it reads
    (golems, profile, recall) and checks the golem."""
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
