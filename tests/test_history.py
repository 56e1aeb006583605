"""Golden logs written by older versions keep replaying, through their upcasters."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneiros import EventError, open_store, replay
from oneiros.events._types import Episode, EpisodeRecorded, Outcome
from oneiros.store._history import export_history, import_history

HISTORIES = Path(__file__).parent / "histories"


def test_a_v1_episode_log_replays_to_the_expected_state() -> None:
    """golem_v1.jsonl stores episodes as EpisodeRecorded v1 (flat pnl/surprise); it replays to the
    state it was recorded with, and the episodes come back as v3: with an Outcome (v2), and as the
    golem's own, fully trusted (v3)."""
    store = open_store("memory://")
    assert 46 == import_history(store, HISTORIES / "golem_v1.jsonl")
    state = replay(store)["golden"]
    assert ("Waking", 46, 12, 1, 0) == (
        state.mode,
        state.version,
        state.episodes,
        state.cycles_completed,
        state.cycles_interrupted,
    )
    assert state.last_complete is not None
    assert (8, 3, 3, 3) == (
        state.last_complete.episodes_replayed,
        state.last_complete.counterfactuals_generated,
        state.last_complete.insights_crystallized,
        state.last_complete.heuristics_proposed,
    )
    first = next(r.event for r in store.read_all() if isinstance(r.event, EpisodeRecorded))
    assert (
        Episode(
            tick=100,
            summary="Bought ETH at range floor; bounced 2% within the hour",
            time=first.episode.time,
            tags=("eth", "mean-reversion", "entry"),
            regime="ranging",
            significance=0.59,
            arousal=0.3,
            outcome=Outcome(surprise=0.327, pnl=0.02),
            source="self",
            trust="high",
        )
        == first.episode
    )


def test_export_then_import_is_identity(tmp_path: Path) -> None:
    """A log exported and imported into a fresh store replays to the same states."""
    source = open_store("memory://")
    import_history(source, HISTORIES / "golem_v1.jsonl")
    export_history(source, tmp_path / "out.jsonl")
    target = open_store(f"sqlite:///{tmp_path}/copy.db")
    import_history(target, tmp_path / "out.jsonl")
    assert replay(source) == replay(target)


def test_importing_twice_writes_nothing_the_second_time() -> None:
    """A history that overlaps the store is refused whole."""
    store = open_store("memory://")
    import_history(store, HISTORIES / "golem_v1.jsonl")
    with pytest.raises(EventError) as caught:
        import_history(store, HISTORIES / "golem_v1.jsonl")
    assert "history golem_v1.jsonl overlaps events already in the store" == str(caught.value)
    assert 46 == store.head()


def test_a_v2_dream_start_log_replays_with_no_recorded_settings() -> None:
    """golem_v2.jsonl was written by the code before cycles recorded their settings (DreamStart
    v2, from main's commit 35409c4): it replays to the state it was recorded with, and each
    DreamStart comes back as v3 with its Bardo trigger kept and ``settings`` None."""
    from oneiros.events._types import DreamStart

    store = open_store("memory://")
    assert 11 == import_history(store, HISTORIES / "golem_v2.jsonl")
    state = replay(store)["golden-v2"]
    assert ("Waking", 11, 0, 2) == (state.mode, state.version, state.cycles_completed, state.cycles_interrupted)
    starts = [r.event for r in store.read_all() if isinstance(r.event, DreamStart)]
    assert [("window", "time", None), ("urgency", "novelty_streak", None)] == [
        (s.trigger, s.bardo_trigger, s.settings) for s in starts
    ]
