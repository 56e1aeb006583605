"""Episodic memory: distant-pair selection, the offline vectorizer and the read model."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Episode, InputError
from oneiros._errors import ConfigError
from oneiros.episodes._fold import EpisodeMemory, episodes_from_dicts
from oneiros.episodes._vectors import HashingEmbedder, embedding_matrix
from oneiros.events._content import EpisodeDepotentiated, EpisodeTriaged, ReplayStrengthened
from oneiros.events._types import EpisodeRecorded
from oneiros.phases._pairs import select_distant_pairs
from oneiros.settings._cycle import PairSettings

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _unit(*values: float) -> list[float]:
    v = np.asarray(values, dtype=np.float64)
    return list(v / np.linalg.norm(v))


def test_pairs_respect_the_time_gap() -> None:
    """No pair joins two memories less than 24 hours apart, even when those are the most significant."""
    hours = [0, 1, 2, 3, 30]
    seconds = np.asarray([h * 3600.0 for h in hours])
    significance = np.asarray([1.0, 1.0, 1.0, 1.0, 0.1])
    vectors = np.eye(5, dtype=np.float32)
    draw = select_distant_pairs(seconds, significance, vectors, PairSettings(pair_count=3), np.random.default_rng(0))
    assert 1 == len(draw.pairs)
    a, b = draw.pairs[0]
    assert 4 == b
    assert abs(seconds[b] - seconds[a]) >= 24 * 3600


def test_pairs_respect_the_similarity_ceiling() -> None:
    """Memories far apart in time but more similar than 0.35 are never paired; dissimilar ones are."""
    seconds = np.asarray([0.0, 48 * 3600.0, 96 * 3600.0])
    vectors = np.asarray([_unit(1, 0.1), _unit(1, 0.2), _unit(0, 1)], dtype=np.float32)
    for seed in range(20):
        draw = select_distant_pairs(
            seconds, np.ones(3), vectors, PairSettings(pair_count=3), np.random.default_rng(seed)
        )
        for a, b in draw.pairs:
            assert float(vectors[a] @ vectors[b]) <= 0.35 + 1e-6
        assert draw.pairs
        assert not draw.fallback


def test_pairs_are_weighted_by_significance() -> None:
    """A highly significant memory appears in pairs far more often than one of low significance."""
    n = 40
    seconds = np.asarray([i * 48 * 3600.0 for i in range(n)])
    vectors = np.eye(n, dtype=np.float32)
    significance = np.full(n, 0.05)
    significance[7] = 1.0
    seen: Counter[int] = Counter()
    for seed in range(300):
        draw = select_distant_pairs(
            seconds, significance, vectors, PairSettings(pair_count=1), np.random.default_rng(seed)
        )
        seen.update(i for pair in draw.pairs for i in pair)
    others = [seen[i] for i in range(n) if i != 7]
    assert seen[7] > 5 * max(others)


def test_without_embeddings_pairs_fall_back_to_random_temporal_sampling() -> None:
    """With no vectors the draw is marked fallback, still honours the gap, and ignores similarity."""
    seconds = np.asarray([0.0, 3600.0, 50 * 3600.0, 51 * 3600.0, 100 * 3600.0, 101 * 3600.0])
    draw = select_distant_pairs(seconds, np.zeros(6), None, PairSettings(pair_count=3), np.random.default_rng(5))
    assert draw.fallback
    assert 3 == len(draw.pairs)
    assert all(seconds[b] - seconds[a] >= 24 * 3600 for a, b in draw.pairs)
    assert 6 == len({i for pair in draw.pairs for i in pair})


def test_same_seed_same_pairs() -> None:
    """Selection is a function of its random source: the same seed draws the same pairs."""
    rng = np.random.default_rng(1)
    seconds = np.sort(rng.uniform(0, 1e7, 500))
    vectors = HashingEmbedder().embed([f"episode {i} about topic {i % 13}" for i in range(500)])
    sig = rng.uniform(0, 1, 500)
    first = select_distant_pairs(seconds, sig, vectors, PairSettings(), np.random.default_rng(9))
    second = select_distant_pairs(seconds, sig, vectors, PairSettings(), np.random.default_rng(9))
    assert first == second
    assert 3 == len(first.pairs)
    for a, b in first.pairs:
        assert float(vectors[a] @ vectors[b]) <= 0.35
        assert seconds[b] - seconds[a] >= 24 * 3600


def test_hashing_embedder_is_unit_length_and_tells_topics_apart() -> None:
    """Vectors are unit length; texts sharing words are closer than texts sharing none."""
    e = HashingEmbedder()
    m = e.embed(["eth range floor bounce", "eth range ceiling bounce", "oracle lag during flash dip", ""])
    assert np.allclose(np.linalg.norm(m[:3], axis=1), 1.0, atol=1e-5)
    assert float(m[0] @ m[1]) > 0.35 > float(m[0] @ m[2])
    assert 0.0 == float(np.abs(m[3]).sum())


def test_own_embeddings_are_used_when_every_episode_has_one() -> None:
    """Episodes that all carry embeddings of one size are used as given (normalised); otherwise the embedder runs."""
    eps = [Episode(tick=1, summary="a", embedding=(3.0, 4.0)), Episode(tick=2, summary="b", embedding=(0.0, 2.0))]
    m = embedding_matrix(eps, None)
    assert m is not None
    assert np.allclose(m, [[0.6, 0.8], [0.0, 1.0]])
    mixed = [eps[0], Episode(tick=3, summary="c")]
    assert embedding_matrix(mixed, None) is None
    assert (2, 256) == embedding_matrix(mixed, HashingEmbedder()).shape  # type: ignore[union-attr]


def test_unknown_embedder_name_is_a_config_error() -> None:
    """A typo in the embedder setting fails when the settings are made, naming what was wrong."""
    from oneiros.settings._cycle import EngineSettings

    with pytest.raises(ConfigError) as info:
        EngineSettings(embedder="word2vec")
    assert "unknown embedder 'word2vec'; use hashing, none or sentence-transformers:<model>" == str(info.value)


def test_memory_read_model_folds_dream_effects() -> None:
    """Strength accumulates +0.5 per replay, depotentiation lowers current arousal, triage is kept."""
    memory = EpisodeMemory()
    memory.apply(EpisodeRecorded(episode=Episode(tick=5, summary="panic sell", arousal=0.9, time=T0)))
    memory.apply(EpisodeRecorded(episode=Episode(tick=6, summary="calm hold", time=T0 + timedelta(days=2))))
    memory.apply(ReplayStrengthened(cycle_id="c", episode_tick=5, delta=0.5, strength=0.5))
    memory.apply(ReplayStrengthened(cycle_id="c2", episode_tick=5, delta=0.5, strength=1.0))
    memory.apply(EpisodeDepotentiated(cycle_id="c2", episode_tick=5, arousal_before=0.9, arousal_after=0.5))
    memory.apply(EpisodeTriaged(cycle_id="c2", episode_tick=6, decision="forget", utility=0.05))
    assert 1.0 == memory.strength[5]
    assert [0.5, 0.0] == [e.arousal for e in memory.episodes()]
    assert [6] == [e.tick for e in memory.query(since=T0 + timedelta(days=1))]
    assert [5] == [e.tick for e in memory.query(exclude_forgotten=True)]


def test_episodes_from_python_are_validated() -> None:
    """Plain dicts become episodes; a bad one names its index and the field."""
    assert [1] == [e.tick for e in episodes_from_dicts([{"tick": 1, "summary": "ok"}])]
    with pytest.raises(InputError) as info:
        episodes_from_dicts([{"tick": 1, "summary": "ok"}, {"tick": 2, "summary": "x", "arousal": 3}])
    assert "episode 1: Expected `float` <= 1.0 - at `$.arousal`" == str(info.value)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=60),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    pair_count=st.integers(min_value=0, max_value=6),
    embedded=st.booleans(),
)
def test_no_draw_breaks_the_gap_the_ceiling_or_reuses_a_memory(
    n: int, seed: int, pair_count: int, embedded: bool
) -> None:
    """Whatever the memories, every pair is at least 24 h apart, under the similarity ceiling when
    embeddings exist, and no memory is in two pairs."""
    rng = np.random.default_rng(seed)
    seconds = np.sort(rng.uniform(0, 30 * 86_400, n))
    significance = rng.uniform(0, 1, n) * rng.integers(0, 2, n)
    vectors = (
        HashingEmbedder(dimensions=16).embed([f"w{rng.integers(0, 6)} w{rng.integers(0, 6)}" for _ in range(n)])
        if embedded
        else None
    )
    draw = select_distant_pairs(
        seconds, significance, vectors, PairSettings(pair_count=pair_count), np.random.default_rng(seed)
    )
    used = [i for pair in draw.pairs for i in pair]
    assert len(draw.pairs) <= pair_count
    assert len(used) == len(set(used))
    for a, b in draw.pairs:
        assert seconds[b] - seconds[a] >= 24 * 3600
        if vectors is not None:
            assert float(vectors[a] @ vectors[b]) <= 0.35 + 1e-6
