"""When a golem's dreaming is unhealthy: the thresholds of the health process's alarms."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["HealthSettings"]

Pct = Annotated[int, msgspec.Meta(ge=0, le=100)]
Cycles = Annotated[int, msgspec.Meta(ge=1)]


class HealthSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Thresholds of the dreaming-health alarms; a threshold of None turns its alarm off.

    No source document names an alarm; each default is derived from a number the documents do name.
    """

    empty_cycles: Cycles | None = 2
    """Cycles in a row that staged nothing before ``empty_cycles`` goes off: a day of dreaming at
    Bumblebee's at most two dreams a day."""
    no_promotion_cycles: Cycles | None = 10
    """Cycles in a row with no entry promoted before ``no_promotion`` goes off: OpenSeed's deep
    sleep comes every 10th dream, so a whole deep-sleep period passed without a belief settling."""
    hit_rate_window: Cycles = 10
    """How many of the latest confidence moves the hit rate is taken over: Bardo's staging
    buffer holds 10 entries (``maxStagedRevisions``)."""
    hit_rate_floor_pct: Pct | None = 33
    """``hit_rate`` goes off when fewer than this share of the window's moves confirmed. With Bardo's
    steps (+0.1 on a confirmation, -0.05 on a contradiction) an entry drifts down, towards
    refutation, once fewer than one move in three confirms (10p < 5(1-p) for p < 1/3)."""
    cost_without_yield_usd: Annotated[float, msgspec.Meta(gt=0)] | None = 2.00
    """Dollars spent on generations since the golem's last promotion before ``cost_without_yield``
    goes off: a whole sleep window's money cap (Bardo ``perSessionMax = "$2.00"``) bought
    nothing that was promoted."""
    budget_overrun: bool = True
    """Whether a cycle in which a response claimed more than it reserved (``BudgetOverrun``) raises
    ``budget_overrun``; Bardo's caps are hard, so one overrun is one too many."""
