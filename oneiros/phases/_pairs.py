"""Distant-pair selection, as Bumblebee samples memories to dream about.

A pair is two memories at least ``min_time_gap_hours`` apart whose cosine similarity is at most
``max_similarity``; both ends are drawn with probability proportional to significance, so charged
memories dream more often. Without embeddings the pairs are drawn at random under the same time
gap. A partner is drawn by rejection: a significance-weighted draw among memories far enough in
time, kept if its similarity is under the ceiling (which samples exactly the filtered
distribution); only after ``rejection_tries`` misses is every similarity computed. So a pair
usually costs O(n) (a mask and a cumulative sum) and at worst O(n · d).
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros.episodes._columns import Vectors
from oneiros.settings._cycle import PairSettings

__all__ = ["PairDraw", "select_distant_pairs"]

FloatArray = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float32]


class _Dense:
    """A matrix given whole, read like lazily embedded ``Vectors``."""

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix

    def row(self, index: int) -> Matrix:
        out: Matrix = self.matrix[index]
        return out

    def all(self) -> Matrix:
        return self.matrix


class PairDraw(msgspec.Struct, frozen=True, kw_only=True):
    pairs: tuple[tuple[int, int], ...]
    """Indices into the arrays given, earlier memory first."""
    fallback: bool
    """True when drawn by the random temporal fallback."""


class _Draw:
    """Repeated draws of an index where ``mask`` holds, with probability proportional to ``weights``
    (uniform when every weight there is zero)."""

    def __init__(self, weights: FloatArray, mask: npt.NDArray[np.bool_]) -> None:
        w = np.where(mask, weights, 0.0)
        self.cumulative = np.cumsum(w)
        self.total = float(self.cumulative[-1]) if len(w) else 0.0
        self.candidates = np.flatnonzero(mask) if self.total <= 0.0 else None

    def __call__(self, rng: np.random.Generator) -> int | None:
        if self.candidates is not None:
            return int(self.candidates[rng.integers(len(self.candidates))]) if len(self.candidates) else None
        index = int(np.searchsorted(self.cumulative, rng.random() * self.total, side="right"))
        return min(index, len(self.cumulative) - 1)


def _weighted_pick(weights: FloatArray, mask: npt.NDArray[np.bool_], rng: np.random.Generator) -> int | None:
    return _Draw(weights, mask)(rng)


def select_distant_pairs(
    seconds: FloatArray,
    significance: FloatArray,
    vectors: Matrix | Vectors | None,
    settings: PairSettings,
    rng: np.random.Generator,
) -> PairDraw:
    """Up to ``settings.pair_count`` distant pairs, no memory used twice.

    ``seconds`` and ``significance`` hold one value per memory; ``vectors`` one unit row per memory,
    or None to use the random temporal fallback. ``Vectors`` embed only the memories drawn, so
    a draw stays O(n) in arithmetic however large the memory, and embeds each memory at most once.
    """
    n = len(seconds)
    rows = _Dense(vectors) if isinstance(vectors, np.ndarray) else vectors
    gap = settings.min_time_gap_hours * 3600.0
    fallback = vectors is None
    weights = np.ones(n) if fallback else np.clip(np.asarray(significance, dtype=np.float64), 0.0, None)
    free = np.ones(n, dtype=bool)
    anchors = free.copy()
    pairs: list[tuple[int, int]] = []
    attempts = settings.anchor_attempts * max(1, settings.pair_count)
    while len(pairs) < settings.pair_count and attempts > 0 and anchors.any():
        attempts -= 1
        anchor = _weighted_pick(weights, anchors, rng)
        if anchor is None:
            break
        partners = free & (np.abs(seconds - seconds[anchor]) >= gap)
        partner = (
            _partner(anchor, _Pool(weights, partners), vectors=rows, settings=settings, rng=rng)
            if partners.any()
            else None
        )
        if partner is None:
            anchors[anchor] = False  # no memory is far enough from this one; never try it again
            continue
        first, second = sorted((anchor, partner), key=lambda i: (seconds[i], i))
        pairs.append((first, second))
        free[[anchor, partner]] = False
        anchors &= free
    return PairDraw(pairs=tuple(pairs), fallback=fallback)


class _Pool(NamedTuple):
    """The memories a partner may be drawn from (``partners``), and every memory's weight."""

    weights: FloatArray
    partners: npt.NDArray[np.bool_]


def _partner(
    anchor: int,
    pool: _Pool,
    *,
    vectors: _Dense | Vectors | None,
    settings: PairSettings,
    rng: np.random.Generator,
) -> int | None:
    weights, partners = pool
    draw = _Draw(weights, partners)
    if vectors is None:
        return draw(rng)
    for _ in range(settings.rejection_tries):
        candidate = draw(rng)
        if candidate is None:
            return None
        if float(vectors.row(candidate) @ vectors.row(anchor)) <= settings.max_similarity:
            return candidate
    # Dissimilar partners are rare for this anchor: filter them all exactly, once.
    similar_enough = partners & ((vectors.all() @ vectors.row(anchor)) <= settings.max_similarity)
    return _weighted_pick(weights, similar_enough, rng) if similar_enough.any() else None
