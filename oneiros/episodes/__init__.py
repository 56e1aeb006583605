"""Episodic memory: episodes from files, from Python and from the log; the memory read model;
embeddings (a built-in offline vectorizer, sentence-transformers as an extra)."""

from oneiros.episodes._columns import EpisodeColumns, Vectors, columns_of, episode_micros
from oneiros.episodes._episodes import (
    count_episodes,
    episode_batches,
    load_episodes,
    recorded_episodes,
    sample_episodes_path,
)
from oneiros.episodes._fold import (
    SECONDS_PER_TICK,
    EpisodeMemory,
    EpisodeMemoryState,
    episode_seconds,
    episode_time,
    episodes_from_dicts,
)
from oneiros.episodes._stored import StoredEpisodes
from oneiros.episodes._vectors import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    embedding_matrix,
    episode_text,
    make_embedder,
)

__all__ = [
    "SECONDS_PER_TICK",
    "Embedder",
    "EpisodeColumns",
    "EpisodeMemory",
    "EpisodeMemoryState",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "StoredEpisodes",
    "Vectors",
    "columns_of",
    "count_episodes",
    "embedding_matrix",
    "episode_batches",
    "episode_micros",
    "episode_seconds",
    "episode_text",
    "episode_time",
    "episodes_from_dicts",
    "load_episodes",
    "make_embedder",
    "recorded_episodes",
    "sample_episodes_path",
]
