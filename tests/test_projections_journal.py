"""The dream journal: one entry per cycle, partial entries for interrupted cycles, the quality
score recalibrated by validation, and the Bumblebee Markdown shape."""

from __future__ import annotations

from oneiros import InProcessExecutor
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._content import DreamFragments, DreamStaged
from oneiros.projections._journal import journal_markdown
from oneiros.store._store import open_store
from tests.projections_support import World


def _dreamt_world() -> tuple[World, str]:
    world = World(open_store("memory://"))
    world.golems.record_episodes(world.golem, load_episodes(sample_episodes_path()))
    result = InProcessExecutor(world.golems).run_cycle(world.golem)
    world.update()
    return world, result.cycle_id


def test_complete_cycle_has_summaries_counts_cost_and_duration() -> None:
    """A completed cycle's entry carries every phase, the replayed episodes, the outputs, the
    tokens of its generations and the counts DreamComplete reported."""
    world, cycle = _dreamt_world()
    (entry,) = world.projections.journal()
    complete = entry.complete
    assert complete is not None
    assert (cycle, "complete") == (entry.cycle_id, entry.status)
    assert ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"] == [p.phase for p in entry.phases]
    assert complete.episodes_replayed == len(entry.episodes_replayed)
    assert complete.heuristics_proposed == len(entry.hypotheses)
    assert complete.insights_crystallized == len(entry.insights)
    assert sum(p.tokens for p in entry.phases) == entry.tokens_in + entry.tokens_out > 0
    staged = [r for r in world.store.read_all(types=[DreamStaged]) if r.event.cycle_id == cycle]
    assert len(staged) == entry.staged > 0
    assert entry.bardo is not None
    assert entry.self_assessed_pct is not None
    assert entry.self_assessed_pct == entry.quality_pct  # nothing validated yet: the cycle's own figure


def test_interrupted_cycle_keeps_partial_entry() -> None:
    """A cycle cut short keeps what it produced, with who interrupted it and in which state."""
    world = World(open_store("memory://"))
    world.episodes(1)
    cycle = world.dream(hypotheses=1)
    world.update()
    (entry,) = world.projections.journal()
    assert (cycle, "interrupted", "owner", 1) == (entry.cycle_id, entry.status, entry.interrupted_by, entry.staged)
    assert 20 == entry.quality_pct  # one phase of five reached, nothing validated yet


def test_quality_rises_when_outputs_are_confirmed() -> None:
    """Promotions of a cycle's outputs raise its quality score; refutations do not."""
    world, _cycle = _dreamt_world()
    entries = world.entries()
    promoted = next(e for e, v in entries.items() if v.status == "proposed" and v.kind == "novel_insight")
    refuted = next(e for e, v in entries.items() if v.status == "proposed" and e != promoted)
    for _ in range(5):
        world.outcome("confirms", promoted)
    for _ in range(5):
        world.outcome("contradicts", refuted)
    world.update()
    (entry,) = world.projections.journal()
    assert entry.self_assessed_pct is not None
    assert (1, 1, entry.self_assessed_pct * 50 // 100 + 25) == (entry.promoted, entry.refuted, entry.quality_pct)


def test_markdown_has_bumblebee_shape() -> None:
    """The export has the ``## <time> #dream #consolidation`` heading, the ``*[dream]*`` marker,
    indented fragments and the ``*thread: ...*`` line."""
    world = World(open_store("memory://"))
    world.episodes(1)
    world.dream(
        [
            DreamFragments(
                cycle_id="CYCLE",
                pairs=((1, 2),),
                fragments=("tide pulls at thoughts", "water"),
                thread="awareness moves in tides",
            )
        ],
        insights=1,
    )
    world.update()
    text = journal_markdown(world.projections.journal())
    lines = text.splitlines()
    assert lines[0].startswith("## 2026-05-24 03:00:")
    assert lines[0].endswith(" #dream #consolidation")
    assert ["", "*[dream]*", ""] == lines[1:4]
    assert ["  tide pulls at thoughts", "  water", "", "*thread: awareness moves in tides*"] == lines[4:8]
