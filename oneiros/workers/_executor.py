"""Executors run a whole cycle's phases; in-process here, the same phase code everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec

from oneiros._errors import GolemNotFound, OneirosError
from oneiros.events import DREAM_PHASES, BardoTrigger, DreamComplete, DreamPhaseName, DreamTrigger
from oneiros.fsm import Golems
from oneiros.generators import Generator, OfflineGenerator
from oneiros.settings import CycleSettings
from oneiros.workers._budget import phase_budget
from oneiros.workers._log import GolemLogs
from oneiros.workers._phases import PhaseOutcome, run_phase

__all__ = ["CycleResult", "Executor", "InProcessExecutor"]

PhaseListener = Callable[[DreamPhaseName, PhaseOutcome], None]


class CycleResult(msgspec.Struct, frozen=True, kw_only=True):
    cycle_id: str
    golem_id: str
    events_appended: int
    complete: DreamComplete | None
    interrupted: str | None = None
    """Why the cycle ended early, or None if it completed."""
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


class InProcessExecutor:
    """Runs every phase in this process, one after the other: the embedded default."""

    def __init__(
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
    ) -> None:
        self.golems = golems
        self.generator = generator or OfflineGenerator(seed=golems.deps.seed)
        self.settings = settings or CycleSettings()
        self.on_phase = on_phase
        # What the phases read, folded once and caught up phase by phase.
        self.logs = GolemLogs.of(golems)

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
        budget = phase_budget(self.settings.budget, state.behavioral_phase, "hypnagogic_onset")
        head_before = self.golems.store.head()
        cycle = self.golems.fall_asleep(
            golem_id, trigger, budget_tokens=budget, cycle_id=cycle_id, bardo_trigger=bardo_trigger
        )
        outcomes: list[PhaseOutcome] = []
        interrupted: str | None = None
        for phase in DREAM_PHASES:
            try:
                outcome = run_phase(
                    self.golems, golem_id, cycle, phase, self.generator, self.settings, logs=self.logs
                )
            except OneirosError as exc:
                interrupted = f"{phase} failed: {exc}"
            except Exception as exc:  # a phase bug must end the cycle with its reason, not a hang
                interrupted = f"{phase} failed: {type(exc).__name__}: {exc}"
            if interrupted is not None:
                if self.golems.state(golem_id).mode == "Dreaming":
                    self.golems.interrupt(golem_id, "failure", interrupted)
                break
            outcomes.append(outcome)
            if self.on_phase is not None:
                self.on_phase(phase, outcome)
        final = self.golems.state(golem_id)
        complete = final.last_complete if final.last_complete and final.last_complete.cycle_id == cycle else None
        return CycleResult(
            cycle_id=cycle,
            golem_id=golem_id,
            events_appended=self.golems.store.head() - head_before,
            complete=complete,
            interrupted=interrupted,
            phases=tuple(outcomes),
        )
