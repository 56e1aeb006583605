"""Executors run a whole cycle's phases; in-process here, the same phase code everywhere."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol

import msgspec

from oneiros._errors import GolemNotFound, OneirosError
from oneiros.events._outcome import DreamEmpty
from oneiros.events._types import (
    BardoTrigger,
    DreamComplete,
    DreamInterrupted,
    DreamPhaseName,
    DreamStart,
    DreamTrigger,
)
from oneiros.fsm._service import Golems
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generator
from oneiros.phases._context import PhaseEngine
from oneiros.phases._engines import ENGINES, engines_for
from oneiros.runtime._generators import load_generator
from oneiros.runtime._golem_log import GolemLogs
from oneiros.runtime._holding import Claim, holder_name, holding
from oneiros.runtime._phase import PhaseOutcome, run_phase
from oneiros.runtime._start import open_cycle
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.store._leases import open_leases
from oneiros.store._snapshots import read_cycle
from oneiros.telemetry._spans import (
    Span,
    TracedGenerator,
    TracedStore,
    current_trace_context,
    fail,
    outcome_attributes,
    start_span,
    traced_phase,
    use_span,
)

__all__ = ["CycleResult", "Executor", "InProcessExecutor", "cycle_result", "recorded_settings", "traced_golems"]

PhaseListener = Callable[[DreamPhaseName, PhaseOutcome], None]


class CycleResult(msgspec.Struct, frozen=True, kw_only=True):
    """How a cycle an executor ran ended: complete (with its counts), interrupted or empty, and what
    each phase it ran did."""

    cycle_id: str
    golem_id: str
    events_appended: int
    complete: DreamComplete | None
    interrupted: str | None = None
    """Why the cycle ended early, or None if it completed."""
    empty: str | None = None
    """Why the cycle produced nothing (its DreamEmpty's detail), or None if it produced something.
    A cycle that ended empty is not a success, whether or not it completed."""
    phases: tuple[PhaseOutcome, ...] = ()

    @property
    def outcome(self) -> str:
        """How the cycle ended, as its root span records it: interrupted, empty or complete."""
        return "interrupted" if self.interrupted else "empty" if self.empty else "complete"

    @property
    def failure(self) -> str | None:
        """Why the cycle is not a success (interrupted or empty), or None."""
        return self.interrupted or self.empty


class Executor(Protocol):
    def run_cycle(
        self,
        golem_id: str,
        trigger: DreamTrigger = "owner",
        *,
        cycle_id: str | None = None,
        bardo_trigger: BardoTrigger | None = None,
    ) -> CycleResult: ...


def traced_golems(golems: Golems) -> Golems:
    """The same golems, with every append a span and every event carrying the trace context."""
    store = golems.store if isinstance(golems.store, TracedStore) else TracedStore(golems.store)
    return Golems(
        store,
        deps=golems.deps,
        observers=golems.observers,
        snapshots=golems.snapshot_settings,
        races=golems.races,
        trace_context=current_trace_context,
        phases=golems.phases,
    )


def recorded_settings(golems: Golems, golem_id: str, cycle_id: str) -> CycleSettings | None:
    """The settings ``cycle_id`` recorded when it started (None for a cycle from before they were)."""
    for record in golems.store.read_stream(golem_id, types=(DreamStart,)):
        if isinstance(record.event, DreamStart) and record.event.cycle_id == cycle_id:
            return record.event.settings
    return None


def cycle_result(golems: Golems, golem_id: str, cycle_id: str) -> CycleResult:
    """What the log says a cycle came to."""
    records = read_cycle(golems.store, golem_id, cycle_id)
    complete = next((r.event for r in records if isinstance(r.event, DreamComplete)), None)
    interrupted = next((r.event for r in records if isinstance(r.event, DreamInterrupted)), None)
    empty = next((r.event for r in records if isinstance(r.event, DreamEmpty)), None)
    return CycleResult(
        cycle_id=cycle_id,
        golem_id=golem_id,
        events_appended=len(records),
        complete=complete,
        interrupted=(interrupted.reason or interrupted.source) if interrupted is not None else None,
        empty=empty.detail if empty is not None else None,
    )


class _Running(NamedTuple):
    """A cycle under way in this process: its id, the settings it recorded and its open root span."""

    cycle_id: str
    settings: CycleSettings
    root: Span


class InProcessExecutor:
    """Runs every phase in this process, one after the other: the embedded default.

    Traced exactly like a cycle on RQ workers: a root span for the cycle, a span per phase, and
    per generator call and store append inside it. The phases are ``golems.phases``, each run by
    its engine in ``engines`` (checked here: every phase needs one)."""

    def __init__(  # noqa: PLR0913 - the public constructor: positional as released, engines keyword-only
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
        recovery: RecoverySettings | None = None,
        *,
        engines: Mapping[DreamPhaseName, PhaseEngine] = ENGINES,
    ) -> None:
        self.engines = engines_for(golems.phases, engines)
        self.golems = traced_golems(golems)
        inner = generator or OfflineGenerator(seed=golems.deps.seed)
        self.generator: Generator = inner if isinstance(inner, TracedGenerator) else TracedGenerator(inner)
        self.settings = settings or CycleSettings()
        self.on_phase = on_phase
        self.recovery = recovery or RecoverySettings()
        """How often the lease on a running cycle is renewed and when it lapses."""
        # What the phases read, folded once and caught up phase by phase.
        self.logs = GolemLogs.of(self.golems)

    def run_cycle(
        self,
        golem_id: str,
        trigger: DreamTrigger = "owner",
        *,
        cycle_id: str | None = None,
        bardo_trigger: BardoTrigger | None = None,
    ) -> CycleResult:
        state = self.logs.read(golem_id).state
        if not state.exists:
            raise GolemNotFound(golem_id)
        head_before = self.golems.store.head()
        opened = open_cycle(self.golems, self.settings, state, trigger, cycle_id=cycle_id, bardo_trigger=bardo_trigger)
        names = self.golems.phases.names
        return self._follow(golem_id, _Running(opened.cycle_id, opened.settings, opened.root), head_before, names)

    def resume_cycle(self, golem_id: str, cycle_id: str) -> CycleResult:
        """Run what is left of a cycle nothing runs any more (a killed ``dream``, a crashed daemon):
        the phase the golem is in and the ones after it, with the generator the cycle recorded.
        Its own root span, joined to the cycle's trace where the log carries it."""
        state = self.logs.read(golem_id).state
        head_before = self.golems.store.head()
        if state.mode != "Dreaming" or state.cycle_id != cycle_id or state.phase is None:
            return cycle_result(self.golems, golem_id, cycle_id)
        last = self.golems.store.read_stream(golem_id, after_version=state.version - 1)
        root = start_span(
            "resume",
            {"oneiros.golem_id": golem_id, "oneiros.cycle_id": cycle_id, "oneiros.phase": state.phase},
            parent=last[-1].meta.trace if last else {},
        )
        settings = recorded_settings(self.golems, golem_id, cycle_id) or self.settings
        seed = settings.seed if settings.seed is not None else self.golems.deps.seed
        runner = InProcessExecutor(
            self.golems,
            load_generator(settings.generator, seed),
            settings,
            self.on_phase,
            self.recovery,
            engines=self.engines,
        )
        runner.logs = self.logs
        phases = self.golems.phases.after(state.phase)
        return runner._follow(golem_id, _Running(cycle_id, settings, root), head_before, phases)

    def _follow(
        self, golem_id: str, running: _Running, head_before: int, phases: Sequence[DreamPhaseName]
    ) -> CycleResult:
        """Run ``phases`` of the cycle in order under its root span (ended here), holding the
        golem's lease on the whole cycle meanwhile so the reconciler leaves it alone."""
        cycle_id, settings, root = running
        with (
            use_span(root, end_on_exit=True),
            holding(
                open_leases(self.golems.store), self.recovery, Claim(golem_id, cycle_id, None, holder_name())
            ) as other,
        ):
            # Another live process runs this cycle (a resume elsewhere won the race): leave it be.
            result = self._run(golem_id, cycle_id, settings, head_before, phases if other is None else ())
            root.set_attributes({"oneiros.cycle_id": result.cycle_id, "oneiros.outcome": result.outcome})
            if result.failure:
                fail(root, result.failure)
        return result

    def _ended_by(self, golem_id: str, cycle_id: str, after_version: int) -> str | None:
        for record in self.golems.store.read_stream(golem_id, after_version=after_version):
            event = record.event
            if isinstance(event, DreamInterrupted) and event.cycle_id == cycle_id:
                return f"interrupted by {event.source}" + (f": {event.reason}" if event.reason else "")
        return None

    def _run(
        self,
        golem_id: str,
        cycle: str,
        settings: CycleSettings,
        head_before: int,
        phases: Sequence[DreamPhaseName],
    ) -> CycleResult:
        outcomes: list[PhaseOutcome] = []
        interrupted: str | None = None
        attributes = {"oneiros.golem_id": golem_id, "oneiros.cycle_id": cycle}
        # Where the stream stood as the phases began: another writer's end of the cycle comes after.
        version_at_start = self.logs.read(golem_id).state.version
        for phase in phases:
            with traced_phase(None, phase, attributes) as span:
                try:
                    outcome = run_phase(
                        self.golems,
                        golem_id,
                        cycle,
                        phase,
                        self.generator,
                        settings,
                        logs=self.logs,
                        engines=self.engines,
                    )
                    span.set_attributes(outcome_attributes(outcome))
                except OneirosError as exc:
                    interrupted = f"{phase} failed: {exc}"
                except Exception as exc:  # a phase bug must end the cycle with its reason, not a hang
                    interrupted = f"{phase} failed: {type(exc).__name__}: {exc}"
                if interrupted is not None:
                    fail(span, interrupted)
                    # Lands whatever raced it (retried until it does), unless the cycle ended already.
                    if not self.golems.end_cycle(golem_id, cycle, "failure", interrupted):
                        # Ended by another writer first (an owner's interrupt, death): say why it ended.
                        interrupted = self._ended_by(golem_id, cycle, version_at_start) or interrupted
                    break
            outcomes.append(outcome)
            if self.on_phase is not None:
                self.on_phase(phase, outcome)
        final = self.golems.state(golem_id)
        complete = final.last_complete if final.last_complete and final.last_complete.cycle_id == cycle else None
        empty = final.last_empty.detail if final.last_empty and final.last_empty.cycle_id == cycle else None
        return CycleResult(
            cycle_id=cycle,
            golem_id=golem_id,
            events_appended=self.golems.store.head() - head_before,
            complete=complete,
            interrupted=interrupted,
            empty=empty,
            phases=tuple(outcomes),
        )
