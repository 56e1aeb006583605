"""Helpers shared by the projection tests: a golem with staged dream outputs, without a generator."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from oneiros import Deps, FixedClock, Golems, SequentialIds
from oneiros.daemon._catch_up import update
from oneiros.events._content import DreamStaged
from oneiros.events._types import Episode, Event
from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.projections._runner import ProjectionRunner
from oneiros.projections._service import Projections, ProjectionSettings, make_projections
from oneiros.store._store import EventStore
from oneiros.validation._review import Feedback, OutcomeInput
from oneiros.validation._staged import StagingSettings

START = datetime(2026, 5, 24, 3, 0, tzinfo=UTC)


def deps(prefix: str = "id") -> Deps:
    return Deps(clock=FixedClock(START, timedelta(seconds=1)), ids=SequentialIds(prefix))


class World:
    """A store, a golem service, feedback and projections on an in-memory projection database."""

    def __init__(self, store: EventStore, golem: str = "g1", **settings: object) -> None:
        self.store = store
        self.golem = golem
        self.deps = deps()
        self.golems = Golems(store, deps=self.deps)
        self.feedback = Feedback(store, deps=self.deps)
        self.staging = StagingSettings(**settings)  # type: ignore[arg-type]
        self.projections = Projections(store, open_projection_db("memory://"))
        self.golems.create(golem)
        self.tick = 0

    def episodes(self, *ticks: int, tags: tuple[str, ...] = ("eth",), regime: str = "ranging") -> None:
        self.golems.record_episodes(
            self.golem, [Episode(tick=t, summary=f"episode {t}", tags=tags, regime=regime) for t in ticks]
        )
        self.tick = max(self.tick, *ticks)

    def dream(self, outputs: Sequence[Event] | None = None, /, *, hypotheses: int = 0, insights: int = 0) -> str:
        """One dream cycle that emits the given outputs and is then interrupted by its owner."""
        cycle = self.golems.fall_asleep(self.golem, "owner", budget_tokens=100)
        made: list[Event] = list(outputs or ())
        made += [staged(cycle, i, "strategy_hypothesis", f"hypothesis {i} of {cycle}", 0.2) for i in range(hypotheses)]
        made += [
            staged(cycle, hypotheses + i, "novel_insight", f"[eth] insight {i} of {cycle}", 0.3)
            for i in range(insights)
        ]
        if made:
            self.golems.record_outputs(self.golem, [_with_cycle(e, cycle) for e in made])
        self.golems.interrupt(self.golem, "owner", "test")
        return cycle

    def outcome(self, verdict: str, entry_id: str | None = None, tick: int | None = None, **kw: object) -> None:
        self.tick = tick if tick is not None else self.tick + 1
        self.feedback.record_outcome(self.golem, OutcomeInput(tick=self.tick, verdict=verdict, entry_id=entry_id, **kw))  # type: ignore[arg-type]

    def update(self) -> None:
        update(self.projections, self.staging)

    def entries(self) -> dict[str, object]:
        self.update()
        return {e.entry_id: e for e in self.projections.staging(self.golem)}

    def entry(self, entry_id: str):  # type: ignore[no-untyped-def]
        return self.entries()[entry_id]


def staged(  # noqa: PLR0913 - a test factory: one argument per field a test varies
    cycle: str, n: int, kind: str, content: str, confidence: float, *, ticks: tuple[int, ...] = (1,)
) -> DreamStaged:
    """A classified dream output as the integration phase stages it."""
    return DreamStaged(
        cycle_id=cycle,
        entry_id=f"{cycle}:{n + 1:03d}",
        kind=kind,  # type: ignore[arg-type]
        content=content,
        confidence=confidence,
        validation_criterion=f"Confirm when a live episode repeats it: {content}",
        source_episode_ticks=ticks,
    )


def _with_cycle(event: Event, cycle: str) -> Event:
    import msgspec

    if getattr(event, "cycle_id", None) == "CYCLE":
        return msgspec.structs.replace(event, cycle_id=cycle)
    return event


def build_log(store: EventStore, *, golems: int, cycles: int, hypotheses: int = 2) -> None:
    """A log of many golems' dream cycles (about ``golems * cycles * (5 + hypotheses)`` events),
    kept per golem so each command reads a short stream."""
    service = Golems(store, deps=deps("log"))
    for g in range(golems):
        golem = f"golem-{g:03d}"
        service.create(golem)
        service.record_episodes(golem, [Episode(tick=1, summary="first", tags=("eth",))])
    for c in range(cycles):
        for g in range(golems):
            golem = f"golem-{g:03d}"
            cycle = service.fall_asleep(golem, "owner", budget_tokens=100)
            outputs = [staged(cycle, i, "strategy_hypothesis", f"h{i} c{c} {golem}", 0.2) for i in range(hypotheses)]
            service.record_outputs(golem, outputs)
            service.interrupt(golem, "owner", "enough")


def assert_rows_equal_a_rebuild(store: EventStore, live: ProjectionDB) -> None:
    """``live``'s projections, built as the log grew (by however many runs, crashes and
    restarts), are at the log's head with exactly the rows a from-scratch rebuild gives."""
    head = store.head()
    scratch = open_projection_db("memory://")
    projections = make_projections(ProjectionSettings())
    ProjectionRunner(store, scratch, projections).catch_up()
    assert {p.name: head for p in projections} == {p.name: live.position(p.name) for p in projections}
    assert [(p.name, scratch.digest(p.name)) for p in projections] == [
        (p.name, live.digest(p.name)) for p in projections
    ]
