"""Running one phase of one cycle: the unit both executors schedule.

A phase reads everything it needs from the log, so it can run in any process. Each generator call
is appended as soon as it returns, and a phase ends with one append of its outputs and the move to
the next phase, made at the stream version it started from. Running a phase twice therefore
appends its events once: the second run finds the phase already left, or loses the version race.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import cast

import msgspec

from oneiros._errors import GolemNotFound
from oneiros.events._content import BudgetExhausted, BudgetOverrun, DreamStaged, DreamSuppressed, GenerationFailed
from oneiros.events._types import (
    CycleEvent,
    DreamOutput,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    Event,
    GenerationRecorded,
)
from oneiros.fsm._service import Golems
from oneiros.generators._protocol import Generator
from oneiros.phases._context import PhaseContext, PhaseEngine
from oneiros.phases._engines import ENGINES
from oneiros.runtime._budget import BudgetGuard, PhaseRun, phase_budget, phase_money
from oneiros.runtime._golem_log import GolemLog, GolemLogs
from oneiros.runtime._metered import MeteredGenerator
from oneiros.settings._cycle import CycleSettings
from oneiros.store._store import Recorded

__all__ = ["CycleSettings", "PhaseOutcome", "run_phase"]


class PhaseOutcome(msgspec.Struct, frozen=True, kw_only=True):
    phase: DreamPhaseName
    ran: bool
    """False when the log showed the phase already done (a duplicate or late job)."""
    events_appended: int = 0
    tokens_spent: int = 0
    cost_usd: float = 0.0
    generator_calls: int = 0
    reused_generations: int = 0
    failed_calls: int = 0
    """Generator calls that failed (GenerationFailed): no key, a server down, a body too large..."""
    exhausted: bool = False
    """True when the phase's generation ended on a budget cap or an overrun (or the cycle was suppressed)."""
    next_budget_tokens: int = 0
    """The token budget of the phase the cycle moved to (0 when it woke or the phase did not run)."""


class _CycleView(msgspec.Struct, kw_only=True):
    outputs: list[Event]
    recorded: dict[str, GenerationRecorded | GenerationFailed]
    budget: int = 0
    started_at: datetime | None = None
    exhausted: set[str]
    prior: list[Event]
    start_version: int = 0
    suppressed: bool = False
    settings: CycleSettings | None = None


def _cycle_view(log: GolemLog, cycle_id: str) -> _CycleView:
    """The cycle's own events so far, and the staged entries of every other cycle."""
    prior: list[Event] = [r.event for r in log.staged if cast(DreamStaged, r.event).cycle_id != cycle_id]
    view = _CycleView(outputs=[], recorded={}, exhausted=set(), prior=prior)
    for record in log.cycle:
        event = record.event
        if not isinstance(event, CycleEvent) or event.cycle_id != cycle_id:
            continue
        match event:
            case GenerationRecorded(call_key=key) | GenerationFailed(call_key=key):
                view.recorded[key] = event
            case DreamStart(settings=settings):
                view.start_version = record.version
                view.settings = settings
                view.started_at = record.meta.time
            case DreamPhase(budget_tokens=budget):
                view.budget = budget
            case BudgetExhausted(phase=phase) | BudgetOverrun(phase=phase):
                view.exhausted.add(phase)
            case DreamSuppressed():
                view.suppressed = True
        if isinstance(event, DreamOutput):
            view.outputs.append(event)
    return view


def run_phase(  # noqa: PLR0913, PLR0917 - the phase's address (golem, cycle, phase) and what it runs with read best positionally; the rest keyword-only, each defaulted
    golems: Golems,
    golem_id: str,
    cycle_id: str,
    phase: DreamPhaseName,
    generator: Generator | None,
    settings: CycleSettings,
    *,
    generator_for: Callable[[CycleSettings], Generator] | None = None,
    logs: GolemLogs | None = None,
    spent_elsewhere: Sequence[Recorded] = (),
    engines: Mapping[DreamPhaseName, PhaseEngine] = ENGINES,
) -> PhaseOutcome:
    """Run ``phase`` of ``cycle_id`` if the golem is in it; otherwise report that it already ran.

    The phase runs with the settings the cycle recorded when it started; ``settings`` only stand in
    for a cycle recorded before settings were (DreamStart before v3). ``generator_for`` builds the
    generator those settings name (a worker's way); without it ``generator`` is used as given.
    ``logs`` holds what earlier phases in this process folded, so only the events since are read;
    without it the phase starts from the latest snapshot beside the log. ``spent_elsewhere`` is
    spend the golem's caps must also hold that this store does not record (a fork's branch counts
    the live golem's spend from the recorded cycle on). ``engines`` run the phases of
    ``golems.phases`` (the canonical table's by default)."""
    log = (logs or GolemLogs.of(golems)).read(golem_id)
    state = log.state.snapshot()
    if not state.exists:
        raise GolemNotFound(golem_id)
    if state.cycle_id != cycle_id or state.phase != phase:
        return PhaseOutcome(phase=phase, ran=False)
    view = _cycle_view(log, cycle_id)
    settings = view.settings or settings
    seed = settings.seed if settings.seed is not None else golems.deps.seed
    if generator_for is not None:
        generator = generator_for(settings)
    if generator is None:
        raise TypeError("run_phase needs a generator or generator_for")
    budget = settings.budget
    credit = settings.credit_fraction
    phases, machine = golems.phases, golems.machine
    suppress_now = phase == phases.first.name and credit is not None and credit < budget.credit_floor
    suppressed = view.suppressed or suppress_now
    ledger = log.ledger.copy()  # the phase's reservations are its own until the log has them
    for record in spent_elsewhere:
        ledger.apply(record)
    run = PhaseRun(
        cycle_id=cycle_id,
        phase=phase,
        tokens=view.budget,
        usd=phase_money(budget, state.behavioral_phase, phase, phases),
    )
    guard = BudgetGuard(budget, ledger, run, now=log.now or golems.deps.clock())
    metered = MeteredGenerator(
        golems,
        state.snapshot(),
        cycle_id,
        phase,
        generator,
        budget=budget,
        guard=guard,
        ledger=ledger,
        recorded=view.recorded,
        exhausted=phase in view.exhausted,
        suppressed=suppressed,
    )
    memory = log.memory
    ctx = PhaseContext(
        cycle_id=cycle_id,
        phase=phase,
        episodes=memory.columns(),
        cycle_outputs=view.outputs,
        settings=settings.engines,
        generate=metered,
        memory=memory,
        prior_outputs=view.prior,
        seed=seed,
        tier=budget.tier,
        exhausted=metered.exhausted,
        fits=metered.fits,
        spent=metered.cycle_spent,
        cycle_versions=state.version - view.start_version + 1,
        started_at=view.started_at,
        now=log.now,
        night=log.night,
    )
    outputs: list[Event]
    if suppress_now:
        assert credit is not None
        fraction = max(0.0, min(1.0, credit))
        outputs = [DreamSuppressed(cycle_id=cycle_id, credit_fraction=fraction, floor=budget.credit_floor)]
    elif suppressed and phase != phases.last.name:
        outputs = []  # a suppressed dream makes nothing, but still wakes with a report
    else:
        outputs = engines[phase](ctx)
    following = machine.next_phase(phase)
    next_budget = 0
    if following is None:
        records = golems.wake(golem_id, outputs=outputs, known=metered.state)
    else:
        next_budget = phase_budget(budget, state.behavioral_phase, following, phases)
        # The machine says how this phase closes: ``complete`` (with DreamComplete) or ``advance``.
        closes = "complete" if machine.destination(machine.phase_state(phase), "complete") else "advance"
        command = golems.complete if closes == "complete" else golems.advance
        records = command(golem_id, budget_tokens=next_budget, outputs=outputs, known=metered.state)
    return PhaseOutcome(
        phase=phase,
        ran=True,
        events_appended=metered.appended + len(records),
        tokens_spent=metered.spent,
        cost_usd=metered.spent_usd,
        generator_calls=metered.calls,
        reused_generations=metered.reused,
        failed_calls=metered.failed,
        exhausted=metered.is_exhausted,
        next_budget_tokens=next_budget,
    )
