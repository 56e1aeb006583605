"""Review (Dense-Mem lifecycle) and the output sinks fed by the staging buffer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from oneiros._errors import EntryNotFound, GolemNotFound, IllegalReview, InputError
from oneiros.events._staging import EntryReviewed, MemoryRolledBack, OutcomeRecorded
from oneiros.events._types import EpisodeRecorded, Event, event_type
from oneiros.projections._sinks import memory_diff, memory_version, write_memory_file
from oneiros.store._store import open_store
from oneiros.validation._review import Feedback, OutcomeInput, removed_ticks
from tests.projections_support import World


@pytest.fixture
def world() -> World:
    w = World(open_store("memory://"))
    w.episodes(1)
    return w


def _one(world: World, **outputs: int) -> str:
    world.dream(**outputs)
    (entry_id,) = [e for e, v in world.entries().items() if v.status == "proposed"]
    return entry_id


@pytest.mark.parametrize(
    ("decisions", "status"),
    [
        (["reinforce"], "reinforced"),
        (["stale"], "stale"),
        (["stale", "reinforce"], "reinforced"),
        (["reject"], "rejected"),
        (["reinforce", "promote_candidate"], "promoted"),
    ],
)
def test_review_decisions_move_status(world: World, decisions: list[str], status: str) -> None:
    """Each feedback decision moves the entry along Dense-Mem's lifecycle and keeps who and why."""
    entry_id = _one(world, hypotheses=1)
    for decision in decisions:
        world.feedback.review(entry_id, decision, who="ana", why=f"because {decision}")  # type: ignore[arg-type]
    entry = world.entry(entry_id)
    assert status == entry.status
    assert [("ana", f"because {d}") for d in decisions] == [(r.who, r.why) for r in entry.reviews]


def test_review_refused_for_resolved_entry(world: World) -> None:
    """A rejected entry cannot be promoted: the error names the entry, its status and the decision,
    and nothing is appended."""
    entry_id = _one(world, hypotheses=1)
    world.feedback.review(entry_id, "reject", who="ana", why="wrong")
    world.update()
    head = world.store.head()
    with pytest.raises(IllegalReview) as caught:
        world.feedback.review(entry_id, "promote_candidate", who="ana", why="changed my mind")
    assert f"entry {entry_id!r} is rejected; decision 'promote_candidate' is not allowed" == str(caught.value)
    assert (entry_id, "rejected", "promote_candidate") == (
        caught.value.entry_id,
        caught.value.status,
        caught.value.decision,
    )
    assert head == world.store.head()


def test_review_and_outcome_errors(world: World) -> None:
    """Unknown entries and golems are named; a review without a reason is refused."""
    with pytest.raises(EntryNotFound) as missing:
        world.feedback.review("stg-nope", "reject", who="ana", why="x")
    assert "no staged entry 'stg-nope'" == str(missing.value)
    with pytest.raises(GolemNotFound):
        world.feedback.record_outcome("ghost", OutcomeInput(tick=1, verdict="confirms"))
    entry_id = _one(world, hypotheses=1)
    with pytest.raises(InputError) as no_reason:
        world.feedback.review(entry_id, "reject", who="ana", why=" ")
    assert "a review decision needs who made it and why" == str(no_reason.value)


def test_rejected_entry_ignores_outcomes(world: World) -> None:
    """After a rejection the sweep no longer validates the entry."""
    entry_id = _one(world, hypotheses=1)
    world.feedback.review(entry_id, "reject", who="ana", why="no")
    world.outcome("confirms", entry_id)
    assert (20, "rejected") == (world.entry(entry_id).confidence_pct, world.entry(entry_id).status)


@event_type("TestEpisodesForgotten")
class EpisodesForgotten(Event, frozen=True, kw_only=True):
    ticks: tuple[int, ...]


def _forgotten(event: Event) -> Sequence[int]:
    """The host's own removals, then oneiros's."""
    match event:
        case EpisodesForgotten(ticks=ticks):
            return ticks
    return removed_ticks(event)


def test_reevaluate_stales_entries_whose_sources_are_gone(world: World) -> None:
    """Re-evaluation with a host's own removing event (passed to Feedback, no registry) marks an
    entry stale when all its source episodes were removed, and reinforces a proposed entry whose
    sources are intact; without it, the event removes nothing."""
    world.episodes(2)
    world.dream(insights=1, hypotheses=1)
    entries = world.entries()
    world.golems._commit(world.golems.state(world.golem), [EpisodesForgotten(ticks=(1,))])
    world.episodes(3)
    unaware = world.feedback.reevaluate(world.golem)
    assert {"reinforce"} == {r.event.decision for r in unaware}
    feedback = Feedback(world.store, deps=world.deps, removed=_forgotten)
    decisions = feedback.reevaluate(world.golem)
    assert {"stale"} == {r.event.decision for r in decisions}
    after = world.entries()
    assert {"stale"} == {after[e].status for e in entries}
    assert "source episodes gone: 1" == after[next(iter(entries))].reviews[-1].why


def test_reevaluate_reinforces_intact_sources(world: World) -> None:
    """Proposed entries whose source episodes are all present become reinforced."""
    entry_id = _one(world, insights=1)
    world.feedback.reevaluate(world.golem)
    assert ("reinforced", "re_evaluate") == (world.entry(entry_id).status, world.entry(entry_id).reviews[0].who)


def test_beliefs_sink_and_withdrawal(world: World) -> None:
    """An insight becomes a belief at 0.35 with source dream:<cycle>; refuting it withdraws it."""
    cycle = world.dream(insights=2)
    entries = sorted(world.entries())
    beliefs = world.projections.db.scan("beliefs", "belief")
    assert 2 == len(beliefs)
    assert all(b'"confidence_pct":35' in d and f'"source":"dream:{cycle}"'.encode() in d for _k, _key, d in beliefs)
    for _ in range(5):
        world.outcome("contradicts", entries[0])
    world.update()
    assert [f"g1/{entries[1]}"] == [key for _k, key, _d in world.projections.db.scan("beliefs", "belief")]


def test_noise_sink_caps_fragments_per_cycle(world: World) -> None:
    """At most two ``[dream]`` fragments per cycle reach the noise buffer."""
    from oneiros.events._content import DreamFragments

    def fragments(*texts: str) -> DreamFragments:
        return DreamFragments(cycle_id="CYCLE", pairs=((1, 2),), fragments=texts, thread="t")

    world.dream([fragments("a", "b", "c")])
    world.dream([fragments("d"), fragments("e", "f")])
    world.update()
    texts = [msgspec.json.decode(d)["text"] for _k, _key, d in world.projections.db.scan("noise", "fragment")]
    assert ["[dream] a", "[dream] b", "[dream] d", "[dream] e"] == texts


def test_deep_sleep_every_tenth_dream(world: World) -> None:
    """The tenth completed dream writes a diary entry and priorities, and prunes superseded YLW
    observations."""
    from oneiros import InProcessExecutor
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path

    world.golems.record_episodes(world.golem, load_episodes(sample_episodes_path()))
    executor = InProcessExecutor(world.golems)
    executor.run_cycle(world.golem)
    world.update()
    insight = next(e for e, v in world.entries().items() if v.kind == "novel_insight" and v.active)
    world.feedback.review(insight, "reject", who="ana", why="noise")
    world.update()  # the staging process runs live, deciding before the next dreams
    for _ in range(9):
        executor.run_cycle(world.golem)
    world.update()
    db = world.projections.db
    assert ["g1/000010"] == [key for _k, key, _d in db.scan("observations", "diary")]
    assert 1 == len(db.scan("observations", "priorities"))
    texts = [d for _k, _key, d in db.scan("observations", "observation")]
    assert not any(insight.encode() in t and b"YLW" in t for t in texts)


def test_memory_versions_diff_and_rollback(world: World, tmp_path: Path) -> None:
    """Each promotion writes a new MEMORY.md version; a rollback restores an old one as a new
    version, and the file export keeps the replaced version beside it."""
    world.dream(insights=2)
    first, second = sorted(world.entries())
    world.feedback.review(first, "promote_candidate", who="ana", why="true")
    for _ in range(4):
        world.outcome("confirms", second)
    world.update()
    db = world.projections.db
    v2 = memory_version(db, "g1")
    assert v2 is not None
    assert 2 == v2.version
    assert "+- [eth] insight 1" in memory_diff(db, "g1", 1, 2)
    world.feedback.rollback_memory("g1", 1, who="ana", why="too eager")
    world.update()
    v3, v1 = memory_version(db, "g1"), memory_version(db, "g1", 1)
    assert v3 is not None
    assert v1 is not None
    assert (3, v1.content) == (v3.version, v3.content)
    path = write_memory_file(db, "g1", tmp_path)
    assert path is not None
    assert v3.content == path.read_text()
    assert v2.content == (tmp_path / "MEMORY.md.v2").read_text()
    with pytest.raises(InputError) as caught:
        world.feedback.rollback_memory("g1", 9, who="ana")
    assert "MEMORY.md of golem 'g1' has versions 1-3, not 9" == str(caught.value)


def test_feedback_lives_in_side_streams(world: World) -> None:
    """Outcomes and reviews go to ``<golem>:feedback`` and decisions to ``<golem>:staging``, so the
    golem's own stream, and replay of golem states, see none of them."""
    from oneiros.fsm._service import replay

    entry_id = _one(world, hypotheses=1)
    world.outcome("confirms", entry_id)
    world.feedback.review(entry_id, "reinforce", who="ana", why="ok")
    world.update()
    own = {type(r.event) for r in world.store.read_stream("g1")}
    assert not own & {OutcomeRecorded, EntryReviewed, MemoryRolledBack}
    assert EpisodeRecorded in own
    assert ["g1"] == list(replay(world.store))
    assert {OutcomeRecorded} <= {type(r.event) for r in world.store.read_stream("g1:feedback")}
    assert {EntryReviewed} <= {type(r.event) for r in world.store.read_stream("g1:staging")}
