"""NREM: utility = gain x need, the 0.1 filter, the 2x priority boost, diversity slots, batches, triage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from oneiros import Episode, Outcome
from oneiros.phases._nrem import ReplayPick, batches, gain, need, select_replay, triage, utility
from oneiros.settings._cycle import EngineSettings, NremSettings

NOW = datetime(2026, 6, 30, tzinfo=UTC)


def ep(  # noqa: PLR0913 - a test factory: keyword-only fields, each defaulted
    tick: int,
    *,
    days_ago: float = 0,
    surprise: float = 0.0,
    pnl: float = 0.0,
    regime: str = "trending",
    arousal: float = 0.0,
    priority: str = "normal",
    significance: float = 0.5,
) -> Episode:
    return Episode(
        tick=tick,
        summary=f"episode {tick}",
        time=NOW - timedelta(days=days_ago),
        regime=regime,
        arousal=arousal,
        significance=significance,
        outcome=Outcome(surprise=surprise, pnl=pnl),
        dream_priority=priority,  # type: ignore[arg-type]
    )


def test_utility_is_gain_times_need() -> None:
    """Utility multiplies the outcome's gain by the need term, and gain sums the error magnitudes."""
    e = Episode(tick=1, summary="s", outcome=Outcome(surprise=0.2, pnl=-0.01, regret=0.1), prediction_error=-0.05)
    assert pytest.approx(0.2 + 0.1 + 0.1 + 0.05) == gain(e)
    assert pytest.approx(gain(e) * 0.8) == utility(e, 2.0, 0.8)


def test_need_prefers_the_current_regime_and_recent_episodes() -> None:
    """Same regime beats another regime; a recent episode beats an old one."""
    e = ep(1, regime="ranging")
    assert need(e, current_regime="ranging", age_days=0, half_life_days=30) > need(
        e, current_regime="trending", age_days=0, half_life_days=30
    )
    assert need(e, current_regime="ranging", age_days=1, half_life_days=30) > need(
        e, current_regime="ranging", age_days=90, half_life_days=30
    )


def test_high_dream_priority_doubles_utility() -> None:
    """An episode tagged dream_priority high scores exactly twice its untagged twin."""
    plain, tagged = ep(1, surprise=0.4), ep(1, surprise=0.4, priority="high")
    assert pytest.approx(2 * utility(plain, 2.0, 0.7)) == utility(tagged, 2.0, 0.7)


def test_only_utility_above_the_floor_is_replayed_by_utility() -> None:
    """Episodes at or under utility 0.1 are never picked for their utility."""
    episodes = [ep(1, surprise=0.5), ep(2, surprise=0.0, days_ago=1), ep(3, surprise=0.8, days_ago=2)]
    settings = EngineSettings(nrem=NremSettings(diversity_share=0.0))
    picks = select_replay(episodes, settings)
    assert [3, 1] == [p.episode.tick for p in picks]
    assert all(p.utility > 0.1 for p in picks)


def test_diversity_slots_take_a_regime_the_oldest_third_and_high_arousal() -> None:
    """20% of the slots go to diversity: the high-arousal episode, one from the oldest third, and an
    unrepresented regime of the last 30 days, even when their utility is below the floor."""
    strong = [ep(i, surprise=1.0, days_ago=i) for i in range(1, 9)]  # trending, recent, high utility
    calm_old = ep(100, days_ago=200)  # oldest, zero utility
    panicked = ep(101, days_ago=5, arousal=0.95)  # zero utility, high arousal
    ranging = ep(102, days_ago=10, regime="ranging")  # another regime, zero utility
    stale_regime = ep(103, days_ago=60, regime="volatile")  # outside the 30-day window
    settings = EngineSettings(batch_size=5, max_batches=2)  # 10 slots, 2 for diversity... ceil(0.2*10)=2
    picks = select_replay([*strong, calm_old, panicked, ranging, stale_regime], settings)
    reasons = {p.episode.tick: p.reason for p in picks}
    assert 8 == sum(r == "utility" for r in reasons.values())
    assert {101: "arousal", 100: "oldest"} == {t: r for t, r in reasons.items() if r != "utility"}
    wider = select_replay(
        [*strong, calm_old, panicked, ranging, stale_regime], EngineSettings(batch_size=5, max_batches=3)
    )
    diverse = {p.episode.tick: p.reason for p in wider if p.reason != "utility"}
    assert {101: "arousal", 100: "oldest", 102: "regime"} == diverse


def test_batches_hold_five_to_ten_episodes_in_time_order() -> None:
    """Picks split into even batches of at most batch_size, none under five when there are enough."""
    picks = [ReplayPick(episode=ep(i, days_ago=30 - i), utility=1.0, reason="utility") for i in range(23)]
    out = batches(picks, EngineSettings())
    assert [8, 8, 7] == [len(b) for b in out]
    ticks = [p.episode.tick for b in out for p in b]
    assert sorted(ticks) == ticks


def test_triage_preserves_abstracts_and_forgets() -> None:
    """High utility is preserved, middling is abstracted, what the filter would drop is forgotten."""
    settings = EngineSettings()
    decisions = [triage(ReplayPick(episode=ep(1), utility=u, reason="utility"), settings)[0] for u in (0.9, 0.3, 0.05)]
    assert ["preserve", "abstract", "forget"] == decisions
