"""Distant-pair selection, as Bumblebee 000_* samples memories to dream about.

A pair is two memories at least ``min_time_gap_hours`` apart whose cosine similarity is at most
``max_similarity``; both ends are drawn with probability proportional to significance, so charged
memories dream more often. Without embeddings the pairs are drawn at random under the same time
gap. Each pair costs one pass over the episodes (a matrix-vector product and a weighted draw), so
``pair_count`` pairs over n episodes take O(n · d) time.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros.engines._context import PairSettings

__all__ = ["PairDraw", "select_distant_pairs"]

FloatArray = npt.NDArray[np.float64]


class PairDraw(msgspec.Struct, frozen=True, kw_only=True):
    pairs: tuple[tuple[int, int], ...]
    """Indices into the arrays given, earlier memory first."""
    fallback: bool
    """True when drawn by the random temporal fallback."""


def _weighted_pick(weights: FloatArray, mask: npt.NDArray[np.bool_], rng: np.random.Generator) -> int | None:
    """An index where ``mask`` holds, drawn with probability proportional to ``weights``."""
    w = np.where(mask, weights, 0.0)
    total = float(w.sum())
    if total <= 0.0:
        candidates = np.flatnonzero(mask)
        return int(candidates[rng.integers(len(candidates))]) if len(candidates) else None
    cumulative = np.cumsum(w)
    index = int(np.searchsorted(cumulative, rng.random() * total, side="right"))
    return min(index, len(w) - 1)


def select_distant_pairs(
    seconds: FloatArray,
    significance: FloatArray,
    vectors: npt.NDArray[np.float32] | None,
    settings: PairSettings,
    rng: np.random.Generator,
) -> PairDraw:
    """Up to ``settings.pair_count`` distant pairs, no memory used twice.

    ``seconds`` and ``significance`` hold one value per memory; ``vectors`` one unit row per memory,
    or None to use the random temporal fallback.
    """
    n = len(seconds)
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
        if vectors is not None:
            partners &= (vectors @ vectors[anchor]) <= settings.max_similarity
        partner = _weighted_pick(weights, partners, rng) if partners.any() else None
        if partner is None:
            anchors[anchor] = False  # no memory is far enough from this one; never try it again
            continue
        first, second = sorted((anchor, partner), key=lambda i: (seconds[i], i))
        pairs.append((first, second))
        free[[anchor, partner]] = False
        anchors &= free
    return PairDraw(pairs=tuple(pairs), fallback=fallback)
