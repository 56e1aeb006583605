"""Running one phase of one cycle: the unit both executors schedule.

A phase reads everything it needs from the log, so it can run in any process. Each generator call
is appended as soon as it returns, and a phase ends with one append of its outputs and the move to
the next phase, made at the stream version it started from. Running a phase twice therefore
appends its events once: the second run finds the phase already left, or loses the version race.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from oneiros.engines import ENGINES, EngineSettings, PhaseContext
from oneiros.events import (
    DREAM_PHASES,
    DreamPhase,
    DreamPhaseName,
    EpisodeRecorded,
    Event,
    GenerationRecorded,
    Recorded,
)
from oneiros.fsm import Golems, cycle_outputs
from oneiros.generators import Generation, GenerationRequest, Generator
from oneiros.workers._budget import CycleBudget, phase_budget

__all__ = ["CycleSettings", "PhaseOutcome", "run_phase"]


class CycleSettings(msgspec.Struct, frozen=True, kw_only=True):
    budget: CycleBudget = CycleBudget()
    engines: EngineSettings = EngineSettings()


class PhaseOutcome(msgspec.Struct, frozen=True, kw_only=True):
    phase: DreamPhaseName
    ran: bool
    """False when the log showed the phase already done (a duplicate or late job)."""
    events_appended: int = 0
    tokens_spent: int = 0
    generator_calls: int = 0
    reused_generations: int = 0


class _BudgetedGenerator:
    """Reserves a call's worst case (``max_tokens`` out plus the prompt in) before making it, and
    reuses a response the log already holds for the same ``call_key``."""

    def __init__(
        self,
        *,
        golems: Golems,
        golem_id: str,
        cycle_id: str,
        generator: Generator,
        budget: int,
        recorded: dict[str, GenerationRecorded],
        version: int,
    ) -> None:
        self.golems, self.golem_id, self.cycle_id = golems, golem_id, cycle_id
        self.generator = generator
        self.remaining = budget
        self.recorded = recorded
        self.version = version
        self.spent = self.calls = self.reused = self.appended = 0

    def __call__(self, request: GenerationRequest) -> Generation | None:
        old = self.recorded.get(request.call_key)
        if old is None:
            worst_case = request.max_tokens + max(1, len(request.prompt + "".join(request.fragments)) // 4)
            if worst_case > self.remaining:
                return None
            generation = self.generator.generate(request)
            old = GenerationRecorded(
                cycle_id=self.cycle_id,
                phase=request.phase,
                call_key=request.call_key,
                model=generation.model,
                prompt=request.prompt,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                text=generation.text,
                tokens_in=generation.tokens_in,
                tokens_out=generation.tokens_out,
                cost_usd=generation.cost_usd,
            )
            self.golems.record_outputs(self.golem_id, [old], expected_version=self.version)
            self.version += 1
            self.appended += 1
            self.calls += 1
        else:
            self.reused += 1
        spent = old.tokens_in + old.tokens_out
        self.remaining -= spent
        self.spent += spent
        return Generation(
            text=old.text, model=old.model, tokens_in=old.tokens_in, tokens_out=old.tokens_out, cost_usd=old.cost_usd
        )


def _cycle_view(history: Sequence[Recorded], cycle_id: str) -> tuple[list[Event], dict[str, GenerationRecorded], int]:
    outputs_types = cycle_outputs()
    outputs: list[Event] = []
    recorded: dict[str, GenerationRecorded] = {}
    budget = 0
    for record in history:
        event = record.event
        if getattr(event, "cycle_id", None) != cycle_id:
            continue
        if isinstance(event, GenerationRecorded):
            recorded[event.call_key] = event
        elif isinstance(event, DreamPhase):
            budget = event.budget_tokens
        elif isinstance(event, outputs_types):
            outputs.append(event)
    return outputs, recorded, budget


def run_phase(  # noqa: PLR0917 - the phase's address (golem, cycle, phase) reads best positionally
    golems: Golems, golem_id: str, cycle_id: str, phase: DreamPhaseName, generator: Generator, settings: CycleSettings
) -> PhaseOutcome:
    """Run ``phase`` of ``cycle_id`` if the golem is in it; otherwise report that it already ran."""
    history = golems.history(golem_id)
    state = golems.state(golem_id)
    if state.cycle_id != cycle_id or state.phase != phase:
        return PhaseOutcome(phase=phase, ran=False)
    outputs_so_far, recorded, budget = _cycle_view(history, cycle_id)
    episodes = [r.event.episode for r in history if isinstance(r.event, EpisodeRecorded)]
    budgeted = _BudgetedGenerator(
        golems=golems,
        golem_id=golem_id,
        cycle_id=cycle_id,
        generator=generator,
        budget=budget,
        recorded=recorded,
        version=state.version,
    )
    ctx = PhaseContext(
        cycle_id=cycle_id,
        phase=phase,
        episodes=episodes,
        cycle_outputs=outputs_so_far,
        settings=settings.engines,
        generate=budgeted,
    )
    outputs = ENGINES[phase](ctx)
    index = DREAM_PHASES.index(phase)
    if phase == "hypnopompic_return":
        records = golems.wake(golem_id, outputs=outputs, expected_version=budgeted.version)
    else:
        next_budget = phase_budget(settings.budget, state.behavioral_phase, DREAM_PHASES[index + 1])
        command = golems.complete if phase == "integration" else golems.advance
        records = command(golem_id, budget_tokens=next_budget, outputs=outputs, expected_version=budgeted.version)
    return PhaseOutcome(
        phase=phase,
        ran=True,
        events_appended=budgeted.appended + len(records),
        tokens_spent=budgeted.spent,
        generator_calls=budgeted.calls,
        reused_generations=budgeted.reused,
    )
