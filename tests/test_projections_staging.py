"""The staging buffer and the validation sweep: the seed's arithmetic, cap, displacement, expiry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.events._staging import EntryStaged, ValidationCriterion
from oneiros.events._types import DreamOutput, Event, event_type
from oneiros.store._store import open_store
from oneiros.validation._staged import StagedOutput, staged_output
from oneiros.validation._sweep import StagingProcess
from tests.projections_support import World


@pytest.fixture
def world() -> World:
    return World(open_store("memory://"))


def _only_entry(world: World, *, insights: int = 0, hypotheses: int = 0) -> str:
    world.episodes(1)
    world.dream(hypotheses=hypotheses, insights=insights)
    (entry_id,) = world.entries()
    return entry_id


@pytest.mark.parametrize(("confirmations", "status", "confidence"), [(4, "proposed", 60), (5, "promoted", 70)])
def test_hypothesis_promotes_after_exactly_five_confirmations(
    world: World, confirmations: int, status: str, confidence: int
) -> None:
    """From 0.2, +0.1 per confirming outcome: four leave it at 0.6, the fifth reaches 0.7 and promotes."""
    entry_id = _only_entry(world, hypotheses=1)
    assert world.entry(entry_id).confidence_pct == 20
    for _ in range(confirmations):
        world.outcome("confirms", entry_id)
    entry = world.entry(entry_id)
    assert (status, confidence) == (entry.status, entry.confidence_pct)


@pytest.mark.parametrize(("confirmations", "status"), [(3, "proposed"), (4, "promoted")])
def test_insight_promotes_after_exactly_four_confirmations(world: World, confirmations: int, status: str) -> None:
    """An insight starts at 0.3, so the fourth confirmation promotes it and the third does not."""
    entry_id = _only_entry(world, insights=1)
    for _ in range(confirmations):
        world.outcome("confirms", entry_id)
    assert status == world.entry(entry_id).status


@pytest.mark.parametrize(("contradictions", "status", "confidence"), [(2, "proposed", 10), (3, "refuted", 5)])
def test_hypothesis_refuted_after_exactly_three_contradictions(
    world: World, contradictions: int, status: str, confidence: int
) -> None:
    """-0.05 per contradiction: 0.2 -> 0.15 -> 0.10 (not below 0.1) -> 0.05, refuted on the third."""
    entry_id = _only_entry(world, hypotheses=1)
    for _ in range(contradictions):
        world.outcome("contradicts", entry_id)
    entry = world.entry(entry_id)
    assert (status, confidence) == (entry.status, entry.confidence_pct)


def test_resolved_entry_is_not_validated_further(world: World) -> None:
    """Once promoted, later outcomes on the entry change nothing: no confidence past the decision."""
    entry_id = _only_entry(world, hypotheses=1)
    for _ in range(7):
        world.outcome("confirms", entry_id)
    entry = world.entry(entry_id)
    assert ("promoted", 70, 5) == (entry.status, entry.confidence_pct, entry.confirmations)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["confirms", "contradicts"]), max_size=20))
def test_sweep_matches_integer_model(verdicts: list[str]) -> None:
    """Any sequence of outcomes gives the status and confidence an exact integer model predicts."""
    world = World(open_store("memory://"))
    entry_id = _only_entry(world, hypotheses=1)
    confidence, status = 20, "proposed"
    for verdict in verdicts:
        world.outcome(verdict, entry_id)
        if status != "proposed":
            continue
        confidence = confidence + 10 if verdict == "confirms" else confidence - 5
        status = "promoted" if confidence >= 70 else "refuted" if confidence < 10 else "proposed"
    entry = world.entry(entry_id)
    assert (status, confidence) == (entry.status, entry.confidence_pct)


def test_outcome_moves_the_entries_it_is_relevant_to(world: World) -> None:
    """Without an entry id an outcome moves the entries it is relevant to (staging.min_relevance):
    the criterion's two terms without its regime, or a term and the regime, are two thirds of it;
    a term alone a third, which moves nothing; and ``min_relevance = 1`` asks for all of it, as
    matching did before relevance."""
    world.episodes(1, tags=("eth", "breakout"), regime="trending")
    world.dream(hypotheses=1)
    (entry_id,) = world.entries()
    assert (("breakout", "eth"), "trending") == (
        world.entry(entry_id).criterion.all_of,
        world.entry(entry_id).criterion.regime,
    )
    world.outcome("confirms", summary="ETH breakout held", regime="ranging")
    world.outcome("confirms", tags=("eth",), regime="trending")
    assert 40 == world.entry(entry_id).confidence_pct
    world.outcome("confirms", summary="eth again")
    assert 40 == world.entry(entry_id).confidence_pct

    strict = World(open_store("memory://"), min_relevance=1.0)
    strict.episodes(1, tags=("eth", "breakout"), regime="trending")
    strict.dream(hypotheses=1)
    (entry_id,) = strict.entries()
    strict.outcome("confirms", summary="ETH breakout held", regime="ranging")
    assert 20 == strict.entry(entry_id).confidence_pct
    strict.outcome("confirms", summary="eth breakouts continued", regime="trending")
    assert 30 == strict.entry(entry_id).confidence_pct


def test_cap_displaces_lowest_utility_entry() -> None:
    """With the buffer full and every entry drawn from the same episode (equal utility), a new entry
    displaces the lowest-confidence one (the oldest among equals)."""
    world = World(open_store("memory://"), cap=3)
    world.episodes(1)
    world.dream(insights=1, hypotheses=2)
    entries = world.entries()
    insight = next(e for e, v in entries.items() if v.kind == "novel_insight")
    first_hyp, second_hyp = sorted(
        (e for e in entries if e != insight), key=lambda e: entries[e].lineage.source_position
    )
    world.outcome("confirms", first_hyp)
    world.dream(hypotheses=1)
    after = world.entries()
    assert ["displaced"] == [after[second_hyp].status]
    assert f"displaced by {max(set(after) - set(entries))}" == after[second_hyp].resolved_by
    assert 3 == len([e for e in after.values() if e.active])


def test_entries_expire_after_configured_ticks() -> None:
    """An entry unresolved for ``expire_after_ticks`` waking ticks expires on the next tick that
    reaches it, and an outcome at that tick no longer moves it."""
    world = World(open_store("memory://"), expire_after_ticks=10)
    world.episodes(5)
    world.dream(hypotheses=1)
    (entry_id,) = world.entries()
    assert 5 == world.entry(entry_id).staged_tick
    world.episodes(14)
    assert "proposed" == world.entry(entry_id).status
    world.outcome("confirms", entry_id, tick=15)
    entry = world.entry(entry_id)
    assert ("expired", 20, "expired at tick 15") == (entry.status, entry.confidence_pct, entry.resolved_by)


def test_lineage_names_cycle_phase_sources_prompt_and_model(world: World) -> None:
    """A staged output records its cycle, the phase that made it, its source episodes, and the
    prompt and model of the generation whose text it carries."""
    from oneiros import InProcessExecutor
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path

    world.golems.record_episodes(world.golem, load_episodes(sample_episodes_path()))
    result = InProcessExecutor(world.golems).run_cycle(world.golem)
    entries = list(world.entries().values())
    assert {result.cycle_id} == {e.lineage.cycle_id for e in entries}
    prediction = next(e for e in entries if e.kind == "creative_prediction").lineage
    assert ("hypnagogic_onset", "offline-core") == (prediction.phase, prediction.model)
    assert prediction.prompt
    revision = next(e for e in entries if e.kind == "playbook_revision").lineage
    assert "rem" == revision.phase  # classified in integration, made from a REM counterfactual
    insight = next(e for e in entries if e.kind == "novel_insight").lineage
    assert insight.source_episode_ticks


def test_staging_process_restarts_where_it_stopped(world: World) -> None:
    """A new staging process resumes from the tracked position: no entry is staged twice."""
    from oneiros.validation._sweep import StagingProcess

    world.episodes(1)
    world.dream(hypotheses=2)
    world.update()
    first = StagingProcess(world.store)
    first.catch_up()
    world.dream(hypotheses=1)
    StagingProcess(world.store).catch_up()
    staged = [r.event.entry_id for r in world.store.read_all(types=[EntryStaged])]
    assert len(staged) == len(set(staged)) == 3


def test_two_staging_processes_cannot_both_decide(world: World) -> None:
    """Two staging processes loaded at the same position: the second one's write is refused as a
    conflict and nothing it decided is written, so every entry is staged once."""
    from oneiros._errors import ProjectionConflict
    from oneiros.validation._sweep import StagingProcess

    world.episodes(1)
    first, second = StagingProcess(world.store), StagingProcess(world.store)
    first.load()
    second.load()
    world.dream(hypotheses=2)
    position = first.catch_up()
    head = world.store.head()
    with pytest.raises(ProjectionConflict) as caught:
        second.catch_up()
    assert f"projection 'oneiros.staging' moved from position 0 to {position}" in str(caught.value)
    assert head == world.store.head()
    # It reloads from the log, finds nothing left to decide and only moves past the decisions.
    assert head == second.catch_up()
    assert head == world.store.head()
    assert 2 == len(list(world.store.read_all(types=[EntryStaged])))


@event_type("TestHunch")
class Hunch(DreamOutput, frozen=True, kw_only=True):
    """A host's own dream output, staged only where the staging process is told how."""

    text: str


def _hunches(event: Event) -> StagedOutput | None:
    match event:
        case Hunch():
            return StagedOutput(
                kind=lambda _e: "novel_insight",
                confidence_pct=lambda _e, _s: 25,
                text=lambda e: e.text,
                criterion=lambda e, _eps: ValidationCriterion(all_of=("eth",), description=e.text),
            )
    return staged_output(event)


def test_a_hosts_own_output_is_staged_where_the_process_is_told_how(world: World) -> None:
    """``staged_output`` stages integration's DreamStaged and nothing else; a StagingProcess given a
    function that knows a host's own output type (no registry) stages it too, with the kind,
    confidence and text the function gives, and still stages DreamStaged."""
    hunch = Hunch(cycle_id="CYCLE", text="eth wakes early")
    assert None is staged_output(hunch)
    world.episodes(1)
    world.dream([hunch], hypotheses=1)
    StagingProcess(world.store, world.staging, staged=_hunches).catch_up()
    staged = [r.event for r in world.store.read_all(types=[EntryStaged])]
    assert [("novel_insight", 25, "eth wakes early"), ("strategy_hypothesis", 20, "hypothesis 0")] == sorted(
        (e.kind, e.confidence_pct, e.text.split(" of ")[0]) for e in staged
    )
