"""Budgets: how a cycle's tokens and dollars are shared among its phases, and the hard caps per
phase, cycle, sleep window, day and month that every generator call is checked against.

A call reserves its worst case (every prompt byte as a token, the full ``max_tokens`` out, priced
at its model's rate) before it is made, and what it settles at is never more than that (the
metered generator cuts a response that claims more). The :class:`Ledger` folds reservations and
their settlements from the log, so an unsettled reservation (a crash mid-call) counts in full until
its call is resumed or abandoned, and no cap can be passed even across restarts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

import msgspec

from oneiros.events._content import BudgetReserved, GenerationFailed
from oneiros.events._types import (
    BehavioralPhase,
    DreamInterrupted,
    DreamPhase,
    DreamPhaseName,
    Event,
    GenerationRecorded,
    ModeChanged,
)
from oneiros.generators._protocol import GenerationRequest
from oneiros.settings._cycle import CycleBudget
from oneiros.settings._phases import PHASES, PhaseTable
from oneiros.store._store import Recorded

__all__ = [
    "BudgetGuard",
    "Charge",
    "Ledger",
    "PhaseRun",
    "Refusal",
    "Spend",
    "budget_report",
    "phase_budget",
    "phase_money",
    "worst_case_tokens",
]


def phase_budget(
    budget: CycleBudget, behavioral_phase: BehavioralPhase, phase: DreamPhaseName, phases: PhaseTable = PHASES
) -> int:
    """The whole tokens ``phase`` may spend, its share in ``phases``; rounding down keeps the sum
    within the cycle's budget."""
    return int(budget.tokens() * phases.share(behavioral_phase, phase))


def phase_money(
    budget: CycleBudget, behavioral_phase: BehavioralPhase, phase: DreamPhaseName, phases: PhaseTable = PHASES
) -> float | None:
    """The dollars ``phase`` may spend, from the per-cycle cap (none at [CORE] unless one is set)."""
    cap = budget.cycle_usd_cap()
    return None if cap is None else cap * phases.share(behavioral_phase, phase)


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


class Charge(msgspec.Struct, frozen=True, kw_only=True):
    """One call's tokens and dollars, held or spent, at ``time``, by ``phase`` of ``cycle_id``."""

    time: datetime
    cycle_id: str
    phase: DreamPhaseName
    tokens: int
    usd: float


class Ledger:
    """Everything spent or held, from the log.

    A settlement (GenerationRecorded or GenerationFailed) replaces its reservation. A reservation
    never settled (a worker killed mid-call) stays counted at its worst case while its call may
    still be resumed, and is released when it no longer can be: when the call is reserved again
    (the phase resumed and makes it anew) or when its phase or cycle ended without it (abandoned).
    Until then it holds, so no cap can be passed across restarts.
    """

    reads: ClassVar[tuple[type[Event], ...]] = (
        BudgetReserved,
        GenerationRecorded,
        GenerationFailed,
        DreamPhase,
        DreamInterrupted,
        ModeChanged,
    )
    """The event types :meth:`apply` reads: a reader of a long stream fetches only these."""

    def __init__(self) -> None:
        self._held: dict[str, Charge] = {}
        self._spent: list[Charge] = []

    @classmethod
    def from_records(cls, records: Iterable[Recorded]) -> Ledger:
        ledger = cls()
        for record in records:
            ledger.apply(record)
        return ledger

    def to_bytes(self) -> bytes:
        return msgspec.msgpack.encode((self._held, self._spent))

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> Ledger:
        ledger = cls()
        ledger._held, ledger._spent = msgspec.msgpack.decode(data, type=tuple[dict[str, Charge], list[Charge]])
        return ledger

    def copy(self) -> Ledger:
        """An independent ledger with the same entries (entries are replaced, never changed)."""
        ledger = Ledger()
        ledger._held, ledger._spent = dict(self._held), list(self._spent)
        return ledger

    def apply(self, record: Recorded) -> None:
        match record.event:
            case BudgetReserved() as reserved:
                self.reserve(
                    reserved.call_key,
                    Charge(
                        time=record.meta.time,
                        cycle_id=reserved.cycle_id,
                        phase=reserved.phase,
                        tokens=reserved.tokens,
                        usd=reserved.cost_usd,
                    ),
                )
            case GenerationRecorded() | GenerationFailed() as settled:
                self.settle(
                    settled.call_key,
                    Charge(
                        time=record.meta.time,
                        cycle_id=settled.cycle_id,
                        phase=settled.phase,
                        tokens=settled.tokens_in + settled.tokens_out,
                        usd=settled.cost_usd,
                    ),
                )
            case DreamPhase(cycle_id=cycle_id, phase=phase):
                self.release(cycle_id, keep_phase=phase)
            case DreamInterrupted(cycle_id=cycle_id):
                self.release(cycle_id)
            case ModeChanged(from_mode="Dreaming") if record.meta.cycle_id:
                self.release(record.meta.cycle_id)

    def reserve(self, call_key: str, worst: Charge) -> None:
        """Hold a call's worst case; a held reservation of the same call (its resumed run) is released."""
        self._held[call_key] = worst

    def settle(self, call_key: str, cost: Charge) -> None:
        """What the call really cost, counted at the time it was reserved."""
        held = self._held.pop(call_key, None)
        self._spent.append(cost if held is None else msgspec.structs.replace(cost, time=held.time))

    def resume(self, call_key: str) -> None:
        """Release the reservation ``call_key`` holds from a run that never settled it: the call
        is being made again, and its new reservation is what counts (or, if refused, it is abandoned)."""
        self._held.pop(call_key, None)

    def release(self, cycle_id: str, keep_phase: DreamPhaseName | None = None) -> None:
        """Drop the reservations of ``cycle_id`` that can no longer settle: all of them when the
        cycle ended, those of other phases than ``keep_phase`` when the cycle moved to it."""
        for key in [k for k, e in self._held.items() if e.cycle_id == cycle_id and e.phase != keep_phase]:
            del self._held[key]

    def held(self) -> int:
        """How many reservations are open (calls under way, or orphaned and not yet released)."""
        return len(self._held)

    def spent(
        self,
        *,
        cycle_id: str | None = None,
        phase: DreamPhaseName | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Spend:
        tokens, usd = 0, 0.0
        for e in (*self._spent, *self._held.values()):
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


class PhaseRun(msgspec.Struct, frozen=True, kw_only=True):
    """One phase's run as the caps see it: which phase of which cycle, and its own caps (tokens,
    and dollars, None for none of its own)."""

    cycle_id: str
    phase: DreamPhaseName
    tokens: int
    usd: float | None


class BudgetGuard:
    """Admits a call only if its worst case fits under every cap; the caps of one phase's run."""

    def __init__(self, budget: CycleBudget, ledger: Ledger, run: PhaseRun, *, now: datetime) -> None:
        self.budget, self.ledger = budget, ledger
        cycle_id, phase = run.cycle_id, run.phase
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        month_start, month_end = _month_bounds(now)
        far = now + timedelta(days=1)
        self.caps = [
            _Cap(name="phase", tokens=run.tokens, usd=run.usd, cycle_id=cycle_id, phase=phase),
            _Cap(name="cycle", tokens=budget.tokens(), usd=budget.cycle_usd_cap(), cycle_id=cycle_id),
            _Cap(
                name="window",
                tokens=budget.window_tokens,
                usd=budget.window_usd_cap(),
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


def budget_report(
    history: Sequence[Recorded], caps: CycleBudget, *, now: datetime | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """What a golem's ``history`` has spent against each cap but the phase's, as of ``now`` (default:
    its last event): the last cycle's id ("-" for none) and one row per cap. ``history`` may be
    only its events of :attr:`Ledger.reads` and its ``DreamStart`` events, with ``now`` the time of
    its last event of any type."""
    ledger = Ledger.from_records(history)
    last_cycle = next((r.meta.cycle_id for r in reversed(history) if r.meta.cycle_id), None) or "-"
    at = now if now is not None else history[-1].meta.time
    # The phase's cap is left out of the rows, so which phase the guard names does not matter.
    phase = PHASES.first.name
    guard = BudgetGuard(caps, ledger, PhaseRun(cycle_id=last_cycle, phase=phase, tokens=0, usd=None), now=at)
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
