"""Dream effects carry across cycles through the log: strength grows, arousal falls, and the
second dream reads what the first one wrote."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime, timedelta

import pytest

from oneiros import Deps, Episode, FixedClock, Golems, InProcessExecutor, Outcome, SequentialIds, open_store
from oneiros._errors import ConfigError
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.episodes._fold import EpisodeMemory
from oneiros.episodes._vectors import SentenceTransformerEmbedder
from oneiros.events._content import DreamFragments, EpisodeDepotentiated, ReplayStrengthened
from oneiros.settings._cycle import CycleBudget, CycleSettings

START = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)
HARDENED = CycleSettings(budget=CycleBudget(tier="hardened"))


def _two_cycles(episodes: list[Episode] | None = None, settings: CycleSettings = HARDENED) -> Golems:
    clock = FixedClock(START)
    golems = Golems(open_store("memory://"), deps=Deps(clock=clock, ids=SequentialIds("e"), seed=5))
    golems.create("g")
    golems.record_episodes("g", episodes or load_episodes(sample_episodes_path()))
    executor = InProcessExecutor(golems, settings=settings)
    executor.run_cycle("g")
    clock.advance(timedelta(days=1))
    executor.run_cycle("g")
    return golems


def test_replay_strength_and_depotentiation_accumulate_across_cycles() -> None:
    """An episode replayed in both cycles reaches strength 1.0; one depotentiated twice starts the
    second time from where the first left it; the read model agrees with the events."""
    charged = Episode(
        tick=5_000,
        summary="Panic sold the whole book into a liquidation cascade",
        time=START - timedelta(days=3),
        regime="volatile",
        arousal=1.0,
        significance=1.0,
        outcome=Outcome(surprise=1.0, pnl=-0.05, regret=0.5),
        dream_priority="high",
    )
    golems = _two_cycles([*load_episodes(sample_episodes_path()), charged])
    history = golems.history("g")
    strengths: dict[int, list[float]] = {}
    arousal: dict[int, list[tuple[float, float]]] = {}
    for record in history:
        event = record.event
        if isinstance(event, ReplayStrengthened):
            strengths.setdefault(event.episode_tick, []).append(event.strength)
        elif isinstance(event, EpisodeDepotentiated):
            arousal.setdefault(event.episode_tick, []).append((event.arousal_before, event.arousal_after))
    twice = [t for t, values in strengths.items() if len(values) == 2]
    assert twice
    assert all([0.5, 1.0] == strengths[t] for t in twice)
    lowered = [t for t, pairs in arousal.items() if len(pairs) == 2]
    assert 5_000 in lowered
    for tick in lowered:
        (_, after_first), (before_second, _) = arousal[tick]
        assert after_first == before_second
    memory = EpisodeMemory.from_records(history)
    assert all(memory.strength[t] == 1.0 for t in twice)
    assert all(memory.arousal[t] == arousal[t][-1][1] for t in lowered)


def test_without_embeddings_the_dream_uses_the_temporal_fallback() -> None:
    """With the embedder set to none, the dream's pairs are drawn by the random temporal fallback
    and still lie at least 24 hours apart."""
    from oneiros.settings._cycle import EngineSettings

    settings = CycleSettings(engines=EngineSettings(embedder="none"))
    golems = _two_cycles(settings=settings)
    by_tick = {
        r.event.episode.tick: r.event.episode for r in golems.history("g") if r.event.type_name == "EpisodeRecorded"
    }
    dreams = [r.event for r in golems.history("g") if isinstance(r.event, DreamFragments)]
    assert dreams
    assert all(d.fallback for d in dreams)
    for dream in dreams:
        for a, b in dream.pairs:
            gap = by_tick[b].time - by_tick[a].time
            assert gap >= timedelta(hours=24)


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="the extra is installed")
def test_sentence_transformers_without_the_extra_is_a_config_error() -> None:
    """Asking for sentence-transformers without the extra names the extra to install."""
    with pytest.raises(ConfigError) as info:
        SentenceTransformerEmbedder("all-MiniLM-L6-v2").embed(["x"])
    assert (
        "sentence-transformers is not installed; install oneiros[embeddings] or use the built-in HashingEmbedder"
        == str(info.value)
    )
