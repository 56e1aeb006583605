"""Every projection of a store in one place: build, follow, read, rebuild and verify.

Read models only: the staging process whose decisions the ``staging`` projection reads is in
:mod:`oneiros.validation`, which runs it ahead of these (``oneiros.daemon._catch_up.update``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import TracebackType

import msgspec

from oneiros._errors import UnknownProjection
from oneiros.fsm._golem import GolemState
from oneiros.projections._db import ProjectionDB, default_projection_url, open_projection_db
from oneiros.projections._golems import GolemsProjection, golem_state, golem_states
from oneiros.projections._index import GolemIndex
from oneiros.projections._journal import JournalEntry, JournalProjection, JournalSettings
from oneiros.projections._profile import ProfileProjection
from oneiros.projections._recall import RecallIndex, RecallSettings
from oneiros.projections._runner import CommitListener, Projection, ProjectionRunner, RunnerSettings
from oneiros.projections._schedule import ScheduleProjection, schedule_state
from oneiros.projections._sinks import SinkSettings, sink_projections
from oneiros.projections._staging import StagedEntry, StagingProjection
from oneiros.scheduling._schedule_state import ScheduleState
from oneiros.store._store import EventStore

__all__ = ["ProjectionSettings", "Projections", "VerifyResult", "make_projections"]


class ProjectionSettings(msgspec.Struct, frozen=True, kw_only=True):
    journal: JournalSettings = JournalSettings()
    sinks: SinkSettings = SinkSettings()
    runner: RunnerSettings = RunnerSettings()
    recall: RecallSettings = RecallSettings()


class VerifyResult(msgspec.Struct, frozen=True, kw_only=True):
    projection: str
    position: int
    live: str
    rebuilt: str

    @property
    def ok(self) -> bool:
        return self.live == self.rebuilt


def make_projections(settings: ProjectionSettings) -> list[Projection]:
    """The journal, the staging buffer, every enabled sink, the golems' states and schedules, the
    recall index and the profile."""
    return [
        JournalProjection(settings.journal),
        StagingProjection(),
        *sink_projections(settings.sinks),
        GolemsProjection(),
        ScheduleProjection(),
        GolemIndex(),
        RecallIndex(settings.recall),
        ProfileProjection(),
    ]


class Projections:
    """The read models of ``store`` in ``db`` (by default beside the store)."""

    def __init__(
        self, store: EventStore, db: ProjectionDB | None = None, settings: ProjectionSettings | None = None
    ) -> None:
        self.store = store
        self.settings = settings or ProjectionSettings()
        self.db = db or open_projection_db(default_projection_url(store.url))
        self.projections = make_projections(self.settings)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.projections)

    def runner(self, names: Sequence[str] = (), on_commit: CommitListener | None = None) -> ProjectionRunner:
        return ProjectionRunner(self.store, self.db, self._chosen(names), self.settings.runner, on_commit)

    def _chosen(self, names: Sequence[str]) -> list[Projection]:
        for name in names:
            if name not in self.names:
                raise UnknownProjection(name, self.names)
        return [p for p in self.projections if not names or p.name in names]

    def update(self, names: Sequence[str] = (), on_commit: CommitListener | None = None) -> dict[str, int]:
        """Bring the projections ``names`` (every one if none) to the head; ``on_commit`` hears each
        commit's projection and position."""
        return self.runner(names, on_commit).catch_up()

    def follow(self, stop: threading.Event) -> None:
        """Keep every projection up with the log until ``stop``."""
        self.runner().follow(stop)

    def rebuild(self, name: str | None = None, until: int | None = None) -> dict[str, int]:
        return self.runner([name] if name else ()).rebuild(name, until)

    def verify(self) -> list[VerifyResult]:
        """Rebuild every projection into a scratch database, to the position of the live one, and
        compare row digests."""
        results: list[VerifyResult] = []
        scratch = open_projection_db("memory://")
        try:
            for projection in self.projections:
                position, live = self.db.position_and_digest(projection.name)
                ProjectionRunner(self.store, scratch, [projection], self.settings.runner).catch_up(until=position)
                results.append(
                    VerifyResult(
                        projection=projection.name,
                        position=position,
                        live=live,
                        rebuilt=scratch.digest(projection.name),
                    )
                )
        finally:
            scratch.close()
        return results

    # -- reading ---------------------------------------------------------------------------------

    def journal(self, golem_id: str | None = None) -> list[JournalEntry]:
        entries = [msgspec.json.decode(d, type=JournalEntry) for _k, _key, d in self.db.scan("journal", "cycle")]
        chosen = [e for e in entries if golem_id is None or e.golem_id == golem_id]
        return sorted(chosen, key=lambda e: e.started_position)

    def staging(self, golem_id: str | None = None, statuses: Sequence[str] = ()) -> list[StagedEntry]:
        entries = [msgspec.json.decode(d, type=StagedEntry) for _k, _key, d in self.db.scan("staging", "entry")]
        chosen = [
            e
            for e in entries
            if (golem_id is None or e.golem_id == golem_id) and (not statuses or e.status in statuses)
        ]
        return sorted(chosen, key=lambda e: e.lineage.source_position)

    def golems(self) -> list[GolemState]:
        """Every golem's state at the projection's position."""
        return golem_states(self.db)

    def golem(self, golem_id: str) -> GolemState | None:
        return golem_state(self.db, golem_id)

    def schedule(self, golem_id: str) -> ScheduleState | None:
        """The golem's schedule state at the projection's position (None if it was never created)."""
        return schedule_state(self.db, golem_id)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Projections:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
