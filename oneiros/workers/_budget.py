"""Budgets: how a cycle's tokens and dollars are shared among its phases, and the hard caps per
phase, cycle, sleep window, day and month that every generator call is checked against.

A call reserves its worst case (every prompt byte as a token, the full ``max_tokens`` out, priced
at its model's rate) before it is made. The :class:`Ledger` folds reservations and their
settlements from the log, so an unsettled reservation (a crash mid-call) counts in full and no
cap can be passed even across restarts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from oneiros.events import (
    BehavioralPhase,
    BudgetReserved,
    DreamPhaseName,
    GenerationFailed,
    GenerationRecorded,
    Recorded,
)
from oneiros.generators import GenerationRequest, Tier

__all__ = [
    "DEFAULT_PRICES",
    "PHASE_SHARES",
    "BudgetGuard",
    "CycleBudget",
    "Ledger",
    "ModelPrice",
    "Refusal",
    "Spend",
    "budget_report",
    "phase_budget",
    "phase_money",
    "worst_case_tokens",
]

# Bardo 001_*, "Budget allocation by behavioral phase": onset and return are fixed at 10% and 5%;
# the remaining 85% moves from exploration (NREM, REM) to consolidation as the golem ages.
PHASE_SHARES: Final[dict[BehavioralPhase, dict[DreamPhaseName, float]]] = {
    "thriving": {"hypnagogic_onset": 0.10, "nrem": 0.34, "rem": 0.30, "integration": 0.21, "hypnopompic_return": 0.05},
    "stable": {"hypnagogic_onset": 0.10, "nrem": 0.30, "rem": 0.30, "integration": 0.25, "hypnopompic_return": 0.05},
    "conservation": {
        "hypnagogic_onset": 0.10,
        "nrem": 0.25,
        "rem": 0.20,
        "integration": 0.40,
        "hypnopompic_return": 0.05,
    },
    "declining": {"hypnagogic_onset": 0.10, "nrem": 0.20, "rem": 0.16, "integration": 0.49, "hypnopompic_return": 0.05},
    "terminal": {"hypnagogic_onset": 0.10, "nrem": 0.16, "rem": 0.12, "integration": 0.57, "hypnopompic_return": 0.05},
}


class ModelPrice(msgspec.Struct, frozen=True):
    """Dollars per million tokens in and out."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1_000_000


DEFAULT_PRICES: Final[dict[str, ModelPrice]] = {
    # Not from the source documents: list prices of the defaults at the time of writing. The
    # offline generator is the [CORE] rule-based path and costs nothing.
    "offline-core": ModelPrice(0.0, 0.0),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "claude-3-haiku": ModelPrice(0.25, 1.25),
    "claude-3-5-sonnet": ModelPrice(3.00, 15.00),
}


class CycleBudget(msgspec.Struct, frozen=True, kw_only=True):
    """Budget of dream cycles: tier, token and money caps, and the price table."""

    cycle_tokens: int = 12_000
    """Tokens for a whole [CORE] cycle. Bardo 001_* prices a CORE cycle at $0.001-0.003 of T0
    (Haiku-class) inference; $0.003 buys about 12k input tokens at Haiku's $0.25 a million."""
    tier: Tier = "core"
    """Bardo 001_* ``tier = "core"`` by default; ``hardened`` for T1/T2 rich dreams."""
    hardened_cycle_tokens: int = 60_000
    """Tokens for a [HARDENED] cycle: Bardo 001_*'s ~$0.30 a cycle at T1 prices."""
    cycle_usd: float | None = 0.50
    """Money cap per cycle (Bardo 001_* ``perCycleMax = "$0.50"``, HARDENED only; ignored for CORE)."""
    window_usd: float | None = 2.00
    """Money cap per sleep window (Bardo 001_* ``perSessionMax = "$2.00"``, HARDENED only)."""
    window_hours: float = 4.0
    """A sleep window is the rolling span of this many hours before the cycle's latest event
    (Bardo 001_*'s default window is 02:00-06:00, four hours)."""
    window_tokens: int | None = None
    day_usd: float | None = None
    """No source document gives a daily cap; set one to enforce it."""
    day_tokens: int | None = None
    month_usd: float | None = 15.00
    """Hard monthly cap for both tiers (Bardo 001_* ``monthlyMax = "$15.00"``)."""
    month_tokens: int | None = None
    credit_floor: float = 0.15
    """Dreams are suppressed below this share of remaining LLM credit (Bardo 001_*: "Suppressed
    entirely when LLM partition falls below 15% of remaining credit")."""
    prices: dict[str, ModelPrice] = msgspec.field(default_factory=lambda: dict(DEFAULT_PRICES))
    default_price: ModelPrice = ModelPrice(15.00, 75.00)
    """Price of a model missing from ``prices``: the dearest tier we know of, so an unknown model
    can only make the budget stricter."""
    overhead_tokens: int = 16
    """Tokens a chat request adds around its messages (role markers), reserved on every call."""

    def tokens(self) -> int:
        """The cycle's token budget at its tier."""
        return self.hardened_cycle_tokens if self.tier == "hardened" else self.cycle_tokens

    def price(self, model: str) -> ModelPrice:
        return self.prices.get(model, self.default_price)


def phase_budget(budget: CycleBudget, behavioral_phase: BehavioralPhase, phase: DreamPhaseName) -> int:
    """The whole tokens ``phase`` may spend; rounding down keeps the sum within the cycle's budget."""
    return int(budget.tokens() * PHASE_SHARES[behavioral_phase][phase])


def phase_money(budget: CycleBudget, behavioral_phase: BehavioralPhase, phase: DreamPhaseName) -> float | None:
    """The dollars ``phase`` may spend, from the per-cycle cap (HARDENED only)."""
    if budget.tier != "hardened" or budget.cycle_usd is None:
        return None
    return budget.cycle_usd * PHASE_SHARES[behavioral_phase][phase]


def worst_case_tokens(request: GenerationRequest, overhead: int, generator: object = None) -> tuple[int, int]:
    """The most tokens ``request`` can cost, in and out: the generator's own count where it offers
    ``max_tokens_in``, else a token per prompt byte (a byte-level tokenizer never makes more) plus
    ``overhead``; out, the ``max_tokens`` the server stops at."""
    count = getattr(generator, "max_tokens_in", None)
    prompt_bytes = len((request.system + request.prompt).encode())
    tokens_in = int(count(request)) if callable(count) else prompt_bytes + overhead
    return tokens_in, max(0, request.max_tokens)


class Spend(msgspec.Struct, frozen=True):
    tokens: int = 0
    usd: float = 0.0


class _Entry(msgspec.Struct, kw_only=True):
    time: datetime
    cycle_id: str
    phase: DreamPhaseName
    tokens: int
    usd: float
    settled: bool


class Ledger:
    """Everything spent or held, from the log: a settlement replaces its reservation, and a
    reservation that was never settled (a crash mid-call) stays counted at its worst case."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._orphans: list[_Entry] = []

    @classmethod
    def from_records(cls, records: Iterable[Recorded]) -> Ledger:
        ledger = cls()
        for record in records:
            ledger.apply(record)
        return ledger

    def apply(self, record: Recorded) -> None:
        event = record.event
        if isinstance(event, BudgetReserved):
            self.reserve(
                event.call_key,
                time=record.meta.time,
                cycle_id=event.cycle_id,
                phase=event.phase,
                tokens=event.tokens,
                usd=event.cost_usd,
            )
        elif isinstance(event, GenerationRecorded | GenerationFailed):
            self.settle(
                event.call_key,
                time=record.meta.time,
                cycle_id=event.cycle_id,
                phase=event.phase,
                tokens=event.tokens_in + event.tokens_out,
                usd=event.cost_usd,
            )

    def reserve(
        self, call_key: str, *, time: datetime, cycle_id: str, phase: DreamPhaseName, tokens: int, usd: float
    ) -> None:
        held = self._entries.get(call_key)
        if held is not None and not held.settled:
            self._orphans.append(held)
        self._entries[call_key] = _Entry(
            time=time, cycle_id=cycle_id, phase=phase, tokens=tokens, usd=usd, settled=False
        )

    def settle(
        self, call_key: str, *, time: datetime, cycle_id: str, phase: DreamPhaseName, tokens: int, usd: float
    ) -> None:
        """What the call really cost, counted at the time it was reserved."""
        held = self._entries.get(call_key)
        when = held.time if held is not None and not held.settled else time
        self._entries[call_key] = _Entry(
            time=when, cycle_id=cycle_id, phase=phase, tokens=tokens, usd=usd, settled=True
        )

    def spent(
        self,
        *,
        cycle_id: str | None = None,
        phase: DreamPhaseName | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Spend:
        tokens, usd = 0, 0.0
        for e in (*self._entries.values(), *self._orphans):
            if cycle_id is not None and e.cycle_id != cycle_id:
                continue
            if phase is not None and e.phase != phase:
                continue
            if (since is not None and e.time < since) or (until is not None and e.time >= until):
                continue
            tokens += e.tokens
            usd += e.usd
        return Spend(tokens, usd)


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """The cap that would be passed, and what was left under it."""

    cap: str
    remaining_tokens: int
    remaining_usd: float


class _Cap(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    tokens: int | None
    usd: float | None
    cycle_id: str | None = None
    phase: DreamPhaseName | None = None
    since: datetime | None = None
    until: datetime | None = None


def _month_bounds(now: datetime) -> tuple[datetime, datetime]:
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (start + timedelta(days=32)).replace(day=1)
    return start, following


class BudgetGuard:
    """Admits a call only if its worst case fits under every cap; the caps of one phase's run."""

    def __init__(
        self,
        budget: CycleBudget,
        ledger: Ledger,
        *,
        cycle_id: str,
        phase: DreamPhaseName,
        phase_tokens: int,
        phase_usd: float | None,
        now: datetime,
    ) -> None:
        self.budget, self.ledger = budget, ledger
        hardened = budget.tier == "hardened"
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        month_start, month_end = _month_bounds(now)
        far = now + timedelta(days=1)
        self.caps = [
            _Cap(name="phase", tokens=phase_tokens, usd=phase_usd, cycle_id=cycle_id, phase=phase),
            _Cap(name="cycle", tokens=budget.tokens(), usd=budget.cycle_usd if hardened else None, cycle_id=cycle_id),
            _Cap(
                name="window",
                tokens=budget.window_tokens,
                usd=budget.window_usd if hardened else None,
                since=now - timedelta(hours=budget.window_hours),
                until=far,
            ),
            _Cap(name="day", tokens=budget.day_tokens, usd=budget.day_usd, since=day, until=day + timedelta(days=1)),
            _Cap(name="month", tokens=budget.month_tokens, usd=budget.month_usd, since=month_start, until=month_end),
        ]

    def refusal(self, tokens: int, usd: float) -> Refusal | None:
        """The first cap ``tokens`` and ``usd`` more would pass, or None if every cap holds them."""
        for cap in self.caps:
            if cap.tokens is None and cap.usd is None:
                continue
            spent = self.ledger.spent(cycle_id=cap.cycle_id, phase=cap.phase, since=cap.since, until=cap.until)
            left_tokens = math.inf if cap.tokens is None else cap.tokens - spent.tokens
            left_usd = math.inf if cap.usd is None else cap.usd - spent.usd
            # A hair of tolerance so float sums that equal the cap exactly are not refused.
            if tokens > left_tokens or usd > left_usd + 1e-12:
                return Refusal(
                    cap=cap.name,
                    remaining_tokens=int(left_tokens) if cap.tokens is not None else -1,
                    remaining_usd=float(left_usd) if cap.usd is not None else -1.0,
                )
        return None


def budget_report(history: Sequence[Recorded], caps: CycleBudget) -> tuple[str, list[dict[str, Any]]]:
    """What a golem's ``history`` has spent against each cap but the phase's, as of its last
    event: the last cycle's id ("-" for none) and one row per cap."""
    ledger = Ledger.from_records(history)
    last_cycle = next((r.meta.cycle_id for r in reversed(history) if r.meta.cycle_id), None) or "-"
    guard = BudgetGuard(
        caps, ledger, cycle_id=last_cycle, phase="nrem", phase_tokens=0, phase_usd=None, now=history[-1].meta.time
    )
    rows: list[dict[str, Any]] = []
    for cap in guard.caps[1:]:
        spent = ledger.spent(cycle_id=cap.cycle_id, since=cap.since, until=cap.until)
        rows.append(
            {
                "cap": cap.name,
                "tokens": spent.tokens,
                "token_cap": cap.tokens,
                "usd": round(spent.usd, 8),
                "usd_cap": cap.usd,
            }
        )
    return last_cycle, rows
