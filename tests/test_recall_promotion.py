"""Recall-driven promotion (OpenClaw's deep phase, the ``openclaw`` preset's numbers): a staged entry
is promoted only when its weighted recall score reaches 0.8 with 3 recalls under 3 distinct
queries, exactly once, and never while it is quarantined."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from oneiros import open_store
from oneiros.config._load import load_config
from oneiros.events._staging import EntryPromoted, side_stream
from oneiros.projections._recall import RecallItem, RecallResult
from oneiros.settings._staging import StagingSettings
from oneiros.settings._trust import RecallPromotionSettings, TrustSettings
from oneiros.validation._recall_policy import RecallStats, recall_score
from oneiros.validation._recalls import record_recall
from oneiros.validation._sweep import StagingProcess
from tests.projections_support import World, staged

OPENCLAW = load_config(preset="openclaw", path="/dev/null", environ={}).staging
TEXT = "Enter ETH mean reversion trades at the range floor after a second confirmation"


def _world(**settings: object) -> tuple[World, str]:
    world = World(
        open_store("memory://"), "g1", **{"promotion": OPENCLAW.promotion, "recall": OPENCLAW.recall, **settings}
    )
    world.episodes(1)
    world.dream([staged("CYCLE", 0, "strategy_hypothesis", TEXT, 0.2)])
    (entry_id,) = world.entries()
    return world, entry_id


def _recall(world: World, entry_id: str, query: str, score: float = 1.0) -> None:
    item = RecallItem(kind="dream", ref=entry_id, text=TEXT, score=score, status="proposed")
    record_recall(world.store, world.golem, RecallResult(query=query, results=[], related_dreams=[item]), world.deps)


def test_the_openclaw_preset_carries_openclaws_numbers() -> None:
    """Score 0.8, 3 recalls, 3 distinct queries and the six weights (0.30, 0.24, 0.15, 0.15, 0.10,
    0.06), with promotion by recalls."""
    r = OPENCLAW.recall
    w = r.weights
    assert ("recalls", 0.8, 3, 3) == (OPENCLAW.promotion, r.min_score, r.min_recalls, r.min_distinct_queries)
    assert (0.30, 0.24, 0.15, 0.15, 0.10, 0.06) == (
        w.relevance,
        w.frequency,
        w.query_diversity,
        w.recency,
        w.consolidation,
        w.conceptual_richness,
    )


@pytest.mark.parametrize(
    ("queries", "status"),
    [
        (["eth range floor", "mean reversion confirmation"], "proposed"),
        (["eth range floor", "mean reversion confirmation", "ETH  range floor"], "proposed"),
        (["eth range floor", "mean reversion confirmation", "second confirmation trades"], "promoted"),
    ],
    ids=["2 recalls", "3 recalls under 2 distinct queries", "3 recalls under 3 distinct queries"],
)
def test_recall_gates(queries: list[str], status: str) -> None:
    """2 recalls do not promote; 3 under 2 distinct queries (case and spacing do not make a query
    new) do not; 3 under 3 with every query word in the entry (score 0.93) do, by ``recall``."""
    world, entry_id = _world()
    for query in queries:
        _recall(world, entry_id, query)
    entry = world.entry(entry_id)
    assert status == entry.status
    if status == "promoted":
        assert "recall" == entry.resolved_by
        [promoted] = [r.event for r in world.store.read_all(types=[EntryPromoted])]
        assert "recall score 0.93 from 3 recalls under 3 distinct queries" == promoted.reason


def test_three_distinct_recalls_below_the_score_do_not_promote() -> None:
    """3 recalls under 3 distinct queries that each match half the query's words score 0.78,
    under 0.8: the entry stays proposed."""
    world, entry_id = _world()
    for query in ("eth range", "mean reversion", "second confirmation"):
        _recall(world, entry_id, query, score=0.5)
    assert "proposed" == world.entry(entry_id).status


def test_the_score_is_the_weighted_sum_of_its_six_signals() -> None:
    """Relevance is the mean hit score, frequency and diversity their share of the gates, recency
    halves every half-life, consolidation counts distinct days out of 3, richness distinct content
    words out of 8."""
    now = datetime(2026, 5, 24, 12, tzinfo=UTC)
    stats = RecallStats()
    stats.add("a b", 1.0, now - timedelta(days=30))
    stats.add("c d", 0.5, now - timedelta(days=30))
    stats.add("e f", 0.75, now)
    got = recall_score(stats, "alpha beta gamma delta", now, RecallPromotionSettings())
    expected_recency = (0.5 + 0.5 + 1.0) / 3
    expected = 0.30 * 0.75 + 0.24 + 0.15 + 0.15 * expected_recency + 0.10 * (2 / 3) + 0.06 * (4 / 8)
    assert (round(expected, 4), 0.75, 1.0, 1.0, round(expected_recency, 4), 0.6667, 0.5, 3, 3) == (
        got.score,
        got.relevance,
        got.frequency,
        got.query_diversity,
        got.recency,
        got.consolidation,
        got.conceptual_richness,
        got.recalls,
        got.distinct_queries,
    )


def test_outcomes_alone_do_not_promote_under_the_recall_policy() -> None:
    """With ``promotion = "recalls"`` the sweep still moves confidence but never promotes."""
    world, entry_id = _world()
    for _ in range(8):
        world.outcome("confirms", entry_id)
    entry = world.entry(entry_id)
    assert ("proposed", 100) == (entry.status, entry.confidence_pct)


def test_both_policies_promote_on_either() -> None:
    """``promotion = "both"``: outcomes promote as the sweep always did, recalls as OpenClaw does."""
    world, entry_id = _world(promotion="both")
    for _ in range(5):
        world.outcome("confirms", entry_id)
    assert ("promoted", "sweep") == (world.entry(entry_id).status, world.entry(entry_id).resolved_by)


def test_a_quarantined_entry_is_never_promoted_by_recalls() -> None:
    """An entry whose text matches an instruction pattern is quarantined; 4 recalls under 4 distinct
    queries leave it proposed, and a review still promotes it."""
    trust = TrustSettings(instruction_patterns={"floor_order": r"range floor"})
    world, entry_id = _world(trust=trust)
    for query in ("eth range floor", "mean reversion confirmation", "second confirmation trades", "enter eth"):
        _recall(world, entry_id, query)
    entry = world.entry(entry_id)
    assert ("proposed", ("floor_order",)) == (entry.status, entry.quarantine.output_flags)
    world.feedback.review(entry_id, "promote_candidate", who="ana", why="read it")
    assert ("promoted", "review") == (world.entry(entry_id).status, world.entry(entry_id).resolved_by)


def test_a_recall_promotion_is_written_once_whoever_catches_up() -> None:
    """The promotion is written with the staging process's position: a second process over the same
    log, and more recalls after it, add no second EntryPromoted."""
    world, entry_id = _world()
    for query in ("eth range floor", "mean reversion confirmation", "second confirmation trades"):
        _recall(world, entry_id, query)
    world.update()
    StagingProcess(world.store, world.staging).catch_up()
    _recall(world, entry_id, "enter eth")
    world.update()
    StagingProcess(world.store, world.staging).catch_up()
    stream = side_stream(world.golem, "staging")
    promoted = [r.event for r in world.store.read_stream(stream) if isinstance(r.event, EntryPromoted)]
    assert [(entry_id, "recall")] == [(p.entry_id, p.by) for p in promoted]


def test_the_default_policy_ignores_recalls() -> None:
    """Without the preset (``promotion = "outcomes"``) recalls promote nothing, as before."""
    world, entry_id = _world(promotion=StagingSettings().promotion)
    for query in ("eth range floor", "mean reversion confirmation", "second confirmation trades"):
        _recall(world, entry_id, query)
    assert "proposed" == world.entry(entry_id).status


def test_recalls_of_other_kinds_count_nothing() -> None:
    """Only related dreams count: a recall that found the entry among results (as an insight) is not
    recall evidence for a staged entry."""
    world, entry_id = _world()
    for query in ("eth range floor", "mean reversion confirmation", "second confirmation trades"):
        item = RecallItem(kind="insight", ref=entry_id, text=TEXT, score=1.0)
        record_recall(
            world.store, world.golem, RecallResult(query=query, results=[item], related_dreams=[]), world.deps
        )
    assert "proposed" == world.entry(entry_id).status


def test_recalls_before_a_restart_count_after_it() -> None:
    """Two recalls seen by one staging process, which records its position; a new process (as every
    reading command starts) rebuilds them from the log, and the third distinct recall promotes."""
    world, entry_id = _world()
    _recall(world, entry_id, "eth range floor")
    _recall(world, entry_id, "mean reversion confirmation")
    assert "proposed" == world.entry(entry_id).status
    _recall(world, entry_id, "second confirmation trades")
    assert ("promoted", "recall") == (world.entry(entry_id).status, world.entry(entry_id).resolved_by)


def test_every_number_is_a_setting_reachable_from_the_environment() -> None:
    """``ONEIROS_STAGING__RECALL__*`` and ``ONEIROS_STAGING__PROMOTION`` reach the policy."""
    environ = {
        "ONEIROS_STAGING__PROMOTION": "both",
        "ONEIROS_STAGING__RECALL__MIN_RECALLS": "2",
        "ONEIROS_STAGING__RECALL__WEIGHTS__RECENCY": "0.2",
        "ONEIROS_STAGING__TRUST__MIN_TRUST": "high",
    }
    staging = load_config(path="/dev/null", environ=environ).staging
    assert ("both", 2, 0.2, "high") == (
        staging.promotion,
        staging.recall.min_recalls,
        staging.recall.weights.recency,
        staging.trust.min_trust,
    )
