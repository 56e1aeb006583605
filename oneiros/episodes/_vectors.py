"""Episode embeddings: a built-in offline text vectorizer, and sentence-transformers as an extra.

The built-in :class:`HashingEmbedder` needs no model and no network: it hashes words and word
pairs into a fixed number of signed buckets (the "hashing trick") and normalises the vector, so
cosine similarity is a dot product. It measures shared vocabulary, which is what distant-pair
selection needs to tell related memories from unrelated ones.
"""

from __future__ import annotations

import importlib
import re
import zlib
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from oneiros._errors import ConfigError
from oneiros.events._types import Episode

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "embedding_matrix",
    "episode_text",
    "make_embedder",
]

Matrix = npt.NDArray[np.float32]
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")


class Embedder(Protocol):
    """Turns texts into unit-length rows of one matrix."""

    def embed(self, texts: Sequence[str]) -> Matrix: ...


def episode_text(episode: Episode) -> str:
    """What an episode is about, for embedding: its summary, tags and regime."""
    return " ".join((episode.said(), *episode.tags, episode.regime))


def _normalise(matrix: npt.NDArray[Any]) -> Matrix:
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    norms[norms == 0] = 1.0
    out: Matrix = rows / norms
    return out


class HashingEmbedder:
    """Signed feature hashing of words and adjacent word pairs; deterministic across processes."""

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 8:
            raise ConfigError(f"embedding dimensions must be at least 8, got {dimensions}")
        self.dimensions = dimensions
        self._features: dict[str, tuple[int, float]] = {}

    @property
    def version(self) -> str:
        """Names what the vectors depend on, so cached vectors are only reused by the same maker."""
        return f"hashing-crc32-words-pairs-v1-{self.dimensions}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        # Vocabulary repeats across episodes, so each feature is hashed once per embedder.
        known = self._features
        dims = self.dimensions
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for feature in (*words, *(f"{a} {b}" for a, b in pairwise(words))):
                slot = known.get(feature)
                if slot is None:
                    h = zlib.crc32(feature.encode())
                    slot = known[feature] = (h % dims, 1.0 if h & 0x80000000 else -1.0)
                rows.append(row)
                cols.append(slot[0])
                vals.append(slot[1])
        flat = np.asarray(rows, dtype=np.int64) * dims + np.asarray(cols, dtype=np.int64)
        summed = np.bincount(flat, weights=np.asarray(vals), minlength=len(texts) * dims)
        return _normalise(summed.reshape(len(texts), dims))


class SentenceTransformerEmbedder:
    """A sentence-transformers model (install ``oneiros[embeddings]``); loaded on first use."""

    def __init__(self, model_name: str = "all-MiniLM-L6-v2") -> None:
        self.model_name = model_name
        self._model: Any = None

    @property
    def version(self) -> str:
        return f"sentence-transformers:{self.model_name}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self._model is None:
            try:
                module = importlib.import_module("sentence_transformers")
            except ImportError:
                raise ConfigError(
                    "sentence-transformers is not installed; "
                    "install oneiros[embeddings] or use the built-in HashingEmbedder"
                ) from None
            self._model = module.SentenceTransformer(self.model_name)
        encoded = self._model.encode(list(texts), normalize_embeddings=True)
        return np.asarray(encoded, dtype=np.float32)


def embedding_matrix(episodes: Sequence[Episode], embedder: Embedder | None) -> Matrix | None:
    """Unit rows for ``episodes``: their own embeddings when every one has one of the same size,
    else the ``embedder``'s; None when neither is available (callers then fall back)."""
    if not episodes:
        return None
    own = [e.embedding for e in episodes]
    if all(v is not None and len(v) == len(own[0] or ()) and v for v in own):
        return _normalise(np.asarray(own, dtype=np.float32))
    if embedder is None:
        return None
    return embedder.embed([episode_text(e) for e in episodes])


def make_embedder(name: str) -> Embedder | None:
    """The embedder a setting names: ``hashing``, ``none`` (None: callers fall back) or
    ``sentence-transformers:<model>``."""
    if name == "none":
        return None
    if name == "hashing":
        return HashingEmbedder()
    if name.startswith("sentence-transformers:") and name.partition(":")[2]:
        return SentenceTransformerEmbedder(name.partition(":")[2])
    raise ConfigError(f"unknown embedder {name!r}; use hashing, none or sentence-transformers:<model>")
