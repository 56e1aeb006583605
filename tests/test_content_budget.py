"""Budgets: the Bardo share table, hard caps under any sequence of calls, exhaustion and suppression."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._content import BudgetExhausted, BudgetReserved, DreamSuppressed
from oneiros.events._types import BEHAVIORAL_PHASES
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest
from oneiros.runtime._budget import BudgetGuard, Charge, Ledger, PhaseRun, phase_budget, worst_case_tokens
from oneiros.settings._cycle import CycleBudget, CycleSettings, ModelPrice
from oneiros.settings._phases import PHASES
from oneiros.settings._vocabulary import BehavioralPhase

DREAM_PHASES = PHASES.names

START = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)

BARDO_TABLE = {
    "thriving": (0.10, 0.34, 0.30, 0.21, 0.05),
    "stable": (0.10, 0.30, 0.30, 0.25, 0.05),
    "conservation": (0.10, 0.25, 0.20, 0.40, 0.05),
    "declining": (0.10, 0.20, 0.16, 0.49, 0.05),
    "terminal": (0.10, 0.16, 0.12, 0.57, 0.05),
}


@pytest.mark.parametrize("behavioral_phase", BEHAVIORAL_PHASES)
def test_phase_shares_equal_the_bardo_table(behavioral_phase: BehavioralPhase) -> None:
    """Each behavioral phase shares its budget across the five dream phases exactly as Bardo's table says."""
    expected = dict(zip(DREAM_PHASES, BARDO_TABLE[behavioral_phase], strict=True))
    assert expected == {p.name: p.shares.of(behavioral_phase) for p in PHASES}
    assert pytest.approx(1.0) == sum(p.shares.of(behavioral_phase) for p in PHASES)


def test_phase_budgets_never_add_up_past_the_cycle() -> None:
    """Rounding each phase's tokens down keeps their sum within the cycle's tokens, at either tier."""
    for tier in ("core", "hardened"):
        budget = CycleBudget(tier=tier)
        for behavioral_phase in BEHAVIORAL_PHASES:
            total = sum(phase_budget(budget, behavioral_phase, p) for p in DREAM_PHASES)
            assert total <= budget.tokens()


_call = st.tuples(
    st.sampled_from(DREAM_PHASES),
    st.integers(min_value=0, max_value=4_000),  # prompt bytes
    st.integers(min_value=1, max_value=800),  # max_tokens
    st.floats(min_value=0.0, max_value=1.0),  # share of max_tokens actually produced
    st.floats(min_value=0.0, max_value=1.0),  # share of the prompt bound actually counted
    st.sampled_from(["cheap", "dear", "unknown"]),
    st.integers(min_value=0, max_value=20),  # hours since the previous call
)


@settings(max_examples=150, deadline=None)
@given(
    calls=st.lists(_call, max_size=60),
    cycle_tokens=st.integers(min_value=0, max_value=20_000),
    cycle_usd=st.floats(min_value=0.0, max_value=0.5),
    window_usd=st.floats(min_value=0.0, max_value=1.0),
    day_usd=st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)),
    month_usd=st.floats(min_value=0.0, max_value=2.0),
    day_tokens=st.one_of(st.none(), st.integers(min_value=0, max_value=30_000)),
    cheap=st.floats(min_value=0.0, max_value=5.0),
    dear=st.floats(min_value=0.0, max_value=100.0),
)
def test_no_sequence_of_calls_spends_past_any_cap(  # noqa: PLR0913, PLR0917 - hypothesis gives one argument per strategy
    calls: list[tuple[str, int, int, float, float, str, int]],
    cycle_tokens: int,
    cycle_usd: float,
    window_usd: float,
    day_usd: float | None,
    month_usd: float,
    day_tokens: int | None,
    cheap: float,
    dear: float,
) -> None:
    """Whatever the calls, prices and timing, what is spent in every phase, cycle, window, day and
    month stays within its cap: a call is admitted only if its worst case fits, and the real cost
    never exceeds the worst case."""
    budget = CycleBudget(
        tier="hardened",
        hardened_cycle_tokens=cycle_tokens,
        cycle_usd=cycle_usd,
        window_usd=window_usd,
        day_usd=day_usd,
        day_tokens=day_tokens,
        month_usd=month_usd,
        prices={"cheap": ModelPrice(cheap, cheap * 4), "dear": ModelPrice(dear, dear * 5)},
    )
    ledger = Ledger()
    now = START
    spent: list[tuple[datetime, str, str, int, float]] = []  # time, cycle, phase, tokens, usd
    cycle = 0
    for index, (phase, prompt_bytes, max_tokens, out_share, in_share, model, hours) in enumerate(calls):
        if hours:
            now += timedelta(hours=hours)
            cycle += 1
        cycle_id = f"c{cycle}"
        phase_tokens = phase_budget(budget, "stable", phase)
        phase_usd = cycle_usd * PHASES.share("stable", phase)
        run = PhaseRun(cycle_id=cycle_id, phase=phase, tokens=phase_tokens, usd=phase_usd)
        guard = BudgetGuard(budget, ledger, run, now=now)
        request = GenerationRequest(
            call_key=f"k{index}", phase=phase, task="pattern", prompt="x" * prompt_bytes, max_tokens=max_tokens
        )
        t_in, t_out = worst_case_tokens(request, budget.overhead_tokens)
        price = budget.price(model)
        if guard.refusal(t_in + t_out, price.cost(t_in, t_out)) is not None:
            continue
        where: dict[str, Any] = {"time": now, "cycle_id": cycle_id, "phase": phase}
        ledger.reserve(request.call_key, Charge(**where, tokens=t_in + t_out, usd=price.cost(t_in, t_out)))
        real_in, real_out = int(t_in * in_share), int(t_out * out_share)
        ledger.settle(request.call_key, Charge(**where, tokens=real_in + real_out, usd=price.cost(real_in, real_out)))
        spent.append((now, cycle_id, phase, real_in + real_out, price.cost(real_in, real_out)))
        # Every cap, checked from the independent list of what was really spent.
        eps = 1e-9
        for c in {s[1] for s in spent}:
            assert sum(s[3] for s in spent if s[1] == c) <= cycle_tokens
            assert sum(s[4] for s in spent if s[1] == c) <= cycle_usd + eps
            for p in DREAM_PHASES:
                assert sum(s[3] for s in spent if s[1] == c and s[2] == p) <= phase_budget(budget, "stable", p)
        for day in {s[0].date() for s in spent}:
            if day_usd is not None:
                assert sum(s[4] for s in spent if s[0].date() == day) <= day_usd + eps
            if day_tokens is not None:
                assert sum(s[3] for s in spent if s[0].date() == day) <= day_tokens
        for month in {(s[0].year, s[0].month) for s in spent}:
            assert sum(s[4] for s in spent if (s[0].year, s[0].month) == month) <= month_usd + eps
        window = [s for s in spent if now - timedelta(hours=budget.window_hours) <= s[0]]
        assert sum(s[4] for s in window) <= window_usd + eps


def test_an_orphaned_reservation_is_released_when_its_call_is_resumed() -> None:
    """A call reserved but never settled (a killed worker) is released when the resumed phase
    reserves it again; only the resumed call's settlement stays counted (no phantom spend)."""
    ledger = Ledger()
    ledger.reserve("k", Charge(time=START, cycle_id="c", phase="nrem", tokens=100, usd=0.5))
    assert (100, 0.5) == (ledger.spent(cycle_id="c").tokens, ledger.spent(cycle_id="c").usd)
    ledger.reserve("k", Charge(time=START, cycle_id="c", phase="nrem", tokens=100, usd=0.5))
    ledger.settle("k", Charge(time=START, cycle_id="c", phase="nrem", tokens=10, usd=0.1))
    spent = ledger.spent(cycle_id="c")
    assert 10 == spent.tokens
    assert pytest.approx(0.1) == spent.usd


def _golems() -> Golems:
    store = open_store("memory://")
    golems = Golems(store, deps=Deps(clock=FixedClock(START), ids=SequentialIds("e"), seed=3))
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    return golems


def test_exhaustion_ends_the_phase_with_an_event_and_the_cycle_moves_on() -> None:
    """A budget too small for a phase's calls records BudgetExhausted naming the cap, and the cycle still completes."""
    golems = _golems()
    result = InProcessExecutor(golems, settings=CycleSettings(budget=CycleBudget(cycle_tokens=1_500))).run_cycle("g")
    events = [r.event for r in golems.history("g")]
    exhausted = [e for e in events if isinstance(e, BudgetExhausted)]
    assert result.complete is not None
    assert result.interrupted is None
    assert exhausted
    assert {"phase"} == {e.cap for e in exhausted}
    assert all(e.needed_tokens > e.remaining_tokens for e in exhausted)
    assert "Waking" == golems.state("g").mode
    by_phase: dict[str, int] = {}
    for e in events:
        if isinstance(e, BudgetReserved):
            by_phase[e.phase] = by_phase.get(e.phase, 0) + e.tokens
    for phase, held in by_phase.items():
        assert held <= phase_budget(CycleBudget(cycle_tokens=1_500), "stable", phase)


def test_monthly_money_cap_refuses_a_priced_model() -> None:
    """With a priced model and a month already spent to its cap, the first call is refused on the month cap."""
    golems = _golems()

    class Priced(OfflineGenerator):
        model = "dear"

    budget = CycleBudget(prices={"dear": ModelPrice(1_000.0, 1_000.0)}, month_usd=0.001)
    InProcessExecutor(golems, Priced(seed=1), settings=CycleSettings(budget=budget)).run_cycle("g")
    exhausted = [r.event for r in golems.history("g") if isinstance(r.event, BudgetExhausted)]
    assert "month" == exhausted[0].cap


def test_dreams_are_suppressed_under_the_credit_floor() -> None:
    """Under 15% credit the cycle records DreamSuppressed, makes no generator call and still wakes with a report."""
    golems = _golems()
    result = InProcessExecutor(golems, settings=CycleSettings(credit_fraction=0.10)).run_cycle("g")
    events = [r.event for r in golems.history("g")]
    suppressed = [e for e in events if isinstance(e, DreamSuppressed)]
    assert [(0.10, 0.15)] == [(e.credit_fraction, e.floor) for e in suppressed]
    assert 0 == sum(p.generator_calls for p in result.phases)
    assert result.complete is not None
    assert 0 == result.complete.episodes_replayed
    assert "DreamReport" in {e.type_name for e in events}
