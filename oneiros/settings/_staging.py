"""The staging buffer and its validation sweep (Bardo, "Staging buffer")."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from oneiros.settings._trust import PromotionPolicy, RecallPromotionSettings, TrustSettings
from oneiros.settings._vocabulary import StagedKind

__all__ = ["DisplaceBy", "StagingSettings"]

DisplaceBy = Literal["utility", "confidence"]
Pct = Annotated[int, msgspec.Meta(ge=0, le=100)]


class StagingSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The staging buffer and validation sweep. Confidences are integer percent."""

    review_only_kinds: tuple[StagedKind, ...] = ("contradiction",)
    """Kinds the sweep never moves: Bardo flags contradictions "for review, do not auto-resolve"."""
    confirm_step_pct: Pct = 10
    """Added on a confirming outcome (Bardo, "+0.1")."""
    contradict_step_pct: Pct = 5
    """Taken on a contradicting outcome (Bardo, "-0.05")."""
    promote_at_pct: Pct = 70
    """Promoted at or above this (Bardo, "reaching confidence 0.7")."""
    refute_below_pct: Pct = 10
    """Refuted strictly below this (Bardo, "drops below 0.1")."""
    min_relevance: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.6
    """An outcome moves an active entry whose relevance to it is at least this (0-1): how much of
    what would bear the entry out (its criterion's terms and regime, weighed by BM25 over the golem's
    active entries, with a little of its text) the outcome's summary, tags and regime show. 1 asks
    for all of it, as matching did before relevance. oneiros default: the middle of the thresholds
    with the best F1 (0.86, from 0.55 to 0.65; 0.16 before relevance) of
    ``benchmarks/outcome_matching.py``'s hand-labelled outcomes."""
    cap: Annotated[int, msgspec.Meta(ge=1)] = 10
    """Active entries per golem (Bardo, ``maxStagedRevisions = 10``)."""
    displace_by: DisplaceBy = "utility"
    """Which entry makes room when the buffer is full: the lowest utility score (Bardo: "new
    revisions must displace existing ones by utility score"), or the lowest confidence. An entry's
    utility is Bardo's replay utility, gain x need, of the episodes it was drawn from (their mean;
    0 for an entry drawn from none); ties go to the lower confidence, then the longest staged."""
    expire_after_ticks: Annotated[int, msgspec.Meta(ge=1)] | None = None
    """Waking ticks an entry may stay unresolved before it expires; None (the default) for never.
    Bardo names no expiry: an entry waits in the buffer until live outcomes promote or refute
    it or a newer one displaces it, however long the golem was away."""
    promotion: PromotionPolicy = "outcomes"
    """What promotes an entry without a review: ``outcomes`` (the sweep, Bardo, the default),
    ``recalls`` (OpenClaw's deep phase, ``recall``) or ``both``. The ``openclaw`` preset sets
    ``recalls``."""
    trust: TrustSettings = TrustSettings()
    """Which outputs are quarantined (untrusted or instructing sources); see ``docs/lab.md``."""
    recall: RecallPromotionSettings = RecallPromotionSettings()
    """The recall-driven promotion policy's gates and weights."""
