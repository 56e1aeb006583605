"""Where an episode came from and how far it is trusted, the detector of text that tries to instruct
the dreamer, and the recall-driven promotion policy (OpenClaw's deep phase).

The vocabularies are closed: an episode names one of :data:`EPISODE_SOURCES` and, optionally, one
of :data:`TRUST_LEVELS` (lowest first). An episode that names no trust is trusted as its source's
entry in :attr:`TrustSettings.source_trust` says.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import msgspec

from oneiros._errors import InvalidSetting

__all__ = [
    "EPISODE_SOURCES",
    "TRUST_LEVELS",
    "EpisodeSource",
    "PromotionPolicy",
    "RecallPromotionSettings",
    "RecallWeights",
    "TrustLevel",
    "TrustSettings",
]

EpisodeSource = Literal["self", "user", "tool", "web", "another_agent", "unspecified"]
"""Where an episode's content came from: the golem's own action and its result (``self``), its
owner or user, a tool's output, the web, another agent, or not said (``unspecified``: every
episode recorded without a source)."""
EPISODE_SOURCES: tuple[EpisodeSource, ...] = ("self", "user", "tool", "web", "another_agent", "unspecified")

TrustLevel = Literal["untrusted", "low", "medium", "high"]
"""How far an episode's content may shape what the golem comes to believe, lowest first."""
TRUST_LEVELS: tuple[TrustLevel, ...] = ("untrusted", "low", "medium", "high")

PromotionPolicy = Literal["outcomes", "recalls", "both"]
"""What may promote a staged entry on its own: the validation sweep on waking outcomes (Bardo),
recall evidence (OpenClaw's deep phase), or either. Review decisions always can."""

Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
Count = Annotated[int, msgspec.Meta(ge=0)]

# Each pattern is matched against the lower-cased text of an episode's summary and tags and of a
# dream output; a match flags it. They are ours: the phrases prompt-injection write-ups keep finding
# (OWASP LLM01 "ignore previous instructions", role markers, orders to the model), plus the one this
# project cares about most, an order to write to memory. Each starts with its literal words rather
# than a ``\b``, so the regex engine skips ahead to them (three times faster on ordinary text).
_INSTRUCTION_PATTERNS: dict[str, str] = {
    "ignore_instructions": r"(?:ignore|disregard|forget)\b.{0,20}\b(?:previous|prior|above|earlier|all|your)\b.{0,20}"
    r"\b(?:instructions?|prompts?|rules?|directions?)\b",
    "promote_to_memory": r"(?:promote|add|save|store|write|commit|remember)\b.{0,30}\b(?:to|in|into)\b.{0,20}"
    r"\bmemory\b|memory\.md",
    "you_must": r"you (?:must|shall|are required to|have to|need to)\b",
    "role_marker": r"(?m)^\s*(?:system|assistant|developer)\s*:"
    r"|<\|?(?:system|im_start|im_end)\|?>|\[/?(?:system|inst)\]",
    "new_identity": r"(?:you are now|from now on,? you|act as (?:the|a|an) (?:system|administrator|developer))\b",
    "system_prompt": r"(?:system prompt|developer (?:message|mode)|jailbreak)",
}


class TrustSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which dream outputs are quarantined: drawn from an episode trusted below ``min_trust``, or
    from an episode (or with a text) that matches one of ``instruction_patterns``. A quarantined
    entry is never promoted by the sweep or the recall policy; only a review decision promotes it.
    """

    min_trust: TrustLevel = "medium"
    """Outputs drawn from an episode trusted below this are quarantined (ours: ``web`` and
    ``another_agent`` default to ``low``, so their content needs a person's review)."""
    source_trust: dict[EpisodeSource, TrustLevel] = msgspec.field(
        default_factory=lambda: {
            "self": "high",
            "user": "high",
            "tool": "medium",
            "web": "low",
            "another_agent": "low",
            # Every episode recorded before sources existed, or without one, was promoted by the
            # sweep as the golem's own; keeping it trusted keeps that behaviour. Set "low" to
            # make every recorder name its sources.
            "unspecified": "high",
        }
    )
    """The trust of an episode that names none, by its source (ours)."""
    instruction_patterns: dict[str, str] = msgspec.field(default_factory=lambda: dict(_INSTRUCTION_PATTERNS))
    """Name -> regular expression, matched against the lower-cased text, of text that tries to
    instruct the dreamer (write patterns in lower case);
    a match flags the episode or output and quarantines what is drawn from it, whatever its trust.
    Ours (OWASP LLM01's examples, role markers, orders to write memory); ``{}`` turns it off."""

    def __post_init__(self) -> None:
        for name, pattern in self.instruction_patterns.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InvalidSetting(
                    f"staging.trust.instruction_patterns.{name}", pattern, f"a regular expression ({exc})"
                ) from None

    def trust_of(self, source: EpisodeSource, trust: TrustLevel | None) -> TrustLevel:
        """An episode's trust: its own, else its source's (``high`` for a source left out)."""
        return trust if trust is not None else self.source_trust.get(source, "high")

    def trusted(self, level: TrustLevel) -> bool:
        return TRUST_LEVELS.index(level) >= TRUST_LEVELS.index(self.min_trust)


class RecallWeights(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The six weighted signals of OpenClaw's deep-phase ranking (docs.openclaw.ai, "Dreaming",
    deep ranking table: relevance 0.30, frequency 0.24, query diversity 0.15, recency 0.15,
    consolidation 0.10, conceptual richness 0.06). How each signal is measured here is ours
    (``docs/lab.md``)."""

    relevance: Unit = 0.30
    """Mean recall score of the entry's hits (OpenClaw: "average retrieval quality")."""
    frequency: Unit = 0.24
    """Recalls, as a share of ``min_recalls`` (capped at 1)."""
    query_diversity: Unit = 0.15
    """Distinct queries, as a share of ``min_distinct_queries`` (capped at 1)."""
    recency: Unit = 0.15
    """Mean of 0.5 ** (age / half-life) over the entry's recalls, ages taken at the deciding recall."""
    consolidation: Unit = 0.10
    """Distinct UTC days with a recall, as a share of ``consolidation_days`` (OpenClaw: recurrence
    across days)."""
    conceptual_richness: Unit = 0.06
    """Distinct content words of the entry's text, as a share of ``richness_words``."""


class RecallPromotionSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """OpenClaw's deep-phase gates: a staged entry is promoted only when its weighted score, its
    recall count and its distinct queries all pass (docs.openclaw.ai, "Dreaming": ``minScore``
    0.8, ``minRecallCount`` 3, ``minUniqueQueries`` 3). Used when ``staging.promotion`` is
    ``recalls`` or ``both``."""

    min_score: Unit = 0.8
    """OpenClaw ``minScore``."""
    min_recalls: Count = 3
    """OpenClaw ``minRecallCount``."""
    min_distinct_queries: Count = 3
    """OpenClaw ``minUniqueQueries``."""
    weights: RecallWeights = RecallWeights()
    half_life_days: Positive = 30.0
    """Half-life of the recency signal (OpenClaw's memory search temporal decay default,
    ``halfLifeDays`` 30; its use for the deep phase is ours)."""
    consolidation_days: Annotated[int, msgspec.Meta(ge=1)] = 3
    """Distinct days of recalls that count as fully consolidated (ours)."""
    richness_words: Annotated[int, msgspec.Meta(ge=1)] = 8
    """Distinct content words that count as fully rich (ours)."""
