"""Executors run a whole cycle's phases; in-process here, the same phase code everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec
from opentelemetry import trace

from oneiros._errors import GolemNotFound, OneirosError
from oneiros.events import (
    DREAM_PHASES,
    BardoTrigger,
    DreamComplete,
    DreamInterrupted,
    DreamPhaseName,
    DreamTrigger,
)
from oneiros.fsm import Golems
from oneiros.generators import Generator, OfflineGenerator
from oneiros.settings import CycleSettings
from oneiros.workers._budget import phase_budget
from oneiros.workers._log import GolemLogs
from oneiros.workers._phases import PhaseOutcome, run_phase
from oneiros.workers._tracing import (
    TracedGenerator,
    TracedStore,
    current_trace_context,
    outcome_attributes,
    start_cycle_span,
    traced_phase,
    tracer,
)

__all__ = ["CycleResult", "Executor", "InProcessExecutor", "starting_settings", "traced_golems"]

PhaseListener = Callable[[DreamPhaseName, PhaseOutcome], None]


class CycleResult(msgspec.Struct, frozen=True, kw_only=True):
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
    )


def starting_settings(settings: CycleSettings, golems: Golems) -> CycleSettings:
    """The settings a cycle records when it starts: the seed made concrete (the starter's)."""
    if settings.seed is not None:
        return settings
    return msgspec.structs.replace(settings, seed=golems.deps.seed)


class InProcessExecutor:
    """Runs every phase in this process, one after the other: the embedded default.

    Traced exactly like a cycle on RQ workers: a root span for the cycle, a span per phase, and
    per generator call and store append inside it."""

    def __init__(
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
    ) -> None:
        self.golems = traced_golems(golems)
        inner = generator or OfflineGenerator(seed=golems.deps.seed)
        self.generator: Generator = inner if isinstance(inner, TracedGenerator) else TracedGenerator(inner)
        self.settings = settings or CycleSettings()
        self.on_phase = on_phase
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
        root = start_cycle_span(golem_id, trigger)
        with trace.use_span(root, end_on_exit=True):
            result = self._run(golem_id, trigger, cycle_id, bardo_trigger)
            root.set_attributes(
                {
                    "oneiros.cycle_id": result.cycle_id,
                    "oneiros.outcome": "interrupted" if result.interrupted else "empty" if result.empty else "complete",
                }
            )
            failure = result.interrupted or result.empty
            if failure:
                root.set_status(trace.Status(trace.StatusCode.ERROR, failure))
        return result

    def _ended_by(self, golem_id: str, cycle_id: str, after_version: int) -> str | None:
        for record in self.golems.store.read_stream(golem_id, after_version=after_version):
            event = record.event
            if isinstance(event, DreamInterrupted) and event.cycle_id == cycle_id:
                return f"interrupted by {event.source}" + (f": {event.reason}" if event.reason else "")
        return None

    def _run(
        self, golem_id: str, trigger: DreamTrigger, cycle_id: str | None, bardo_trigger: BardoTrigger | None
    ) -> CycleResult:
        settings = starting_settings(self.settings, self.golems)
        state = self.logs.read(golem_id).state
        if not state.exists:
            raise GolemNotFound(golem_id)
        budget = phase_budget(settings.budget, state.behavioral_phase, "hypnagogic_onset")
        head_before = self.golems.store.head()
        with tracer().start_as_current_span("fall_asleep", attributes={"oneiros.golem_id": golem_id}):
            cycle = self.golems.fall_asleep(
                golem_id,
                trigger,
                budget_tokens=budget,
                cycle_id=cycle_id,
                bardo_trigger=bardo_trigger,
                settings=settings,
            )
        outcomes: list[PhaseOutcome] = []
        interrupted: str | None = None
        attributes = {"oneiros.golem_id": golem_id, "oneiros.cycle_id": cycle}
        for phase in DREAM_PHASES:
            with traced_phase(None, phase, attributes) as span:
                try:
                    outcome = run_phase(
                        self.golems, golem_id, cycle, phase, self.generator, settings, logs=self.logs
                    )
                    span.set_attributes(outcome_attributes(outcome))
                except OneirosError as exc:
                    interrupted = f"{phase} failed: {exc}"
                except Exception as exc:  # a phase bug must end the cycle with its reason, not a hang
                    interrupted = f"{phase} failed: {type(exc).__name__}: {exc}"
                if interrupted is not None:
                    span.set_status(trace.Status(trace.StatusCode.ERROR, interrupted))
                    # Lands whatever raced it (retried until it does), unless the cycle ended already.
                    if not self.golems.end_cycle(golem_id, cycle, "failure", interrupted):
                        # Ended by another writer first (an owner's interrupt, death): say why it ended.
                        interrupted = self._ended_by(golem_id, cycle, state.version) or interrupted
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
