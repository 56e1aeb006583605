"""Opening a cycle: the one sequence every executor starts a cycle with.

The settings the cycle records (the starter's seed made concrete), its first phase's budget, the
cycle's root span and, under it, the ``fall_asleep`` span with the append of the cycle's start.
The root span stays open: the executor ends it when the cycle ends (or hands it on).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from oneiros.events._types import BardoTrigger, DreamTrigger
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.runtime._budget import phase_budget
from oneiros.settings._cycle import CycleSettings
from oneiros.telemetry._spans import Span, current_span, fail, start_span, use_span

__all__ = ["OpenedCycle", "open_cycle", "starting_settings"]


@dataclass(frozen=True)
class OpenedCycle:
    cycle_id: str
    settings: CycleSettings
    """What the cycle recorded in its DreamStart and every phase runs with."""
    budget_tokens: int
    """The first phase's token budget."""
    root: Span
    """The cycle's root span, still open."""


def starting_settings(settings: CycleSettings, golems: Golems) -> CycleSettings:
    """The settings a cycle records when it starts: the seed made concrete (the starter's)."""
    if settings.seed is not None:
        return settings
    return msgspec.structs.replace(settings, seed=golems.deps.seed)


def open_cycle(  # noqa: PLR0913 - the DreamStart's optional fields, keyword-only
    golems: Golems,
    settings: CycleSettings,
    state: GolemState,
    trigger: DreamTrigger,
    *,
    cycle_id: str | None = None,
    bardo_trigger: BardoTrigger | None = None,
) -> OpenedCycle:
    """Record the start of a cycle of ``state``'s golem (its current state) under a new root span.

    If the start cannot be recorded the root span ends with the error, which is raised."""
    recorded = starting_settings(settings, golems)
    budget = phase_budget(recorded.budget, state.behavioral_phase, golems.phases.first.name, golems.phases)
    golem_id = state.golem_id
    # A root: the cycle is a trace of its own, whatever span is current where it starts.
    root = start_span("cycle", {"oneiros.golem_id": golem_id, "oneiros.trigger": trigger}, parent={})
    try:
        with (
            use_span(root),
            current_span("fall_asleep", {"oneiros.golem_id": golem_id}),
        ):
            started = golems.fall_asleep(
                golem_id,
                trigger,
                budget_tokens=budget,
                cycle_id=cycle_id,
                bardo_trigger=bardo_trigger,
                settings=recorded,
            )
    except BaseException as exc:
        fail(root, str(exc))
        root.end()
        raise
    root.set_attribute("oneiros.cycle_id", started)
    return OpenedCycle(cycle_id=started, settings=recorded, budget_tokens=budget, root=root)
