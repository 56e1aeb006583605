"""Which dream outputs enter the staging buffer, at what confidence and with what criterion.

A registry (:func:`register_staged_output`), so a new dream output type joins the buffer with one
call and no change here. The dream cycle's integration phase classifies every output (hypotheses,
insights, threats, hypnagogic predictions...) into one ``DreamStaged`` event with its initial
confidence, so that is the one type registered by default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from oneiros._text import content_words, keywords
from oneiros.events import DreamStaged, Episode, Event, StagedKind, ValidationCriterion

__all__ = [
    "StagedOutput",
    "StagingSettings",
    "episode_criterion",
    "register_staged_output",
    "staged_outputs",
    "terms",
]


class StagingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The staging buffer and validation sweep. Confidences are integer percent."""

    review_only_kinds: tuple[StagedKind, ...] = ("contradiction",)
    """Kinds the sweep never moves: Bardo 001_* flags contradictions "for review, do not auto-resolve"."""
    confirm_step_pct: int = 10
    """Added on a confirming outcome (Bardo 001_*, "+0.1")."""
    contradict_step_pct: int = 5
    """Taken on a contradicting outcome (Bardo 001_*, "-0.05")."""
    promote_at_pct: int = 70
    """Promoted at or above this (Bardo 001_*, "reaching confidence 0.7")."""
    refute_below_pct: int = 10
    """Refuted strictly below this (Bardo 001_*, "drops below 0.1")."""
    cap: int = 10
    """Active entries per golem (Bardo 001_*, ``maxStagedRevisions = 10``)."""
    expire_after_ticks: int = 500
    """Waking ticks an entry may stay unresolved. Bardo 001_* names no figure; 500 ticks is about
    eight hours at its 1 tick/minute, a night's sleep plus a working morning of validation."""


# (event, the golem's episodes by tick) -> criterion
CriterionFn = Callable[[Event, Mapping[int, Episode]], ValidationCriterion]


class StagedOutput(msgspec.Struct, frozen=True, kw_only=True):
    """How one dream output type enters the buffer. ``entry_id`` returns None to have the staging
    process derive one from the output's event id."""

    kind: Callable[[Event], StagedKind]
    confidence_pct: Callable[[Event, StagingSettings], int]
    text: Callable[[Event], str]
    criterion: CriterionFn
    source_ticks: Callable[[Event], tuple[int, ...]] = lambda _e: ()
    entry_id: Callable[[Event], str | None] = lambda _e: None


_STAGED: dict[type[Event], StagedOutput] = {}


def register_staged_output(cls: type[Event], spec: StagedOutput) -> None:
    """Stage every ``cls`` dream output as ``spec`` says."""
    _STAGED[cls] = spec


def staged_outputs() -> dict[type[Event], StagedOutput]:
    return dict(_STAGED)


def terms(text: str) -> set[str]:
    """The lower-case words an outcome or criterion is matched on."""
    return set(content_words(text))


def _keywords(text: str, limit: int = 2) -> tuple[str, ...]:
    return tuple(sorted(keywords(text, limit)))


def episode_criterion(
    ticks: tuple[int, ...], text: str, description: str, episodes: Mapping[int, Episode]
) -> ValidationCriterion:
    """What a live outcome must show to bear on an output drawn from episodes ``ticks``: their
    tags (or, without tags, the text's keywords), in their regime when they share one."""
    sources = [episodes[t] for t in ticks if t in episodes]
    tags = sorted({tag.lower() for e in sources for tag in e.tags})[:3]
    regimes = {e.regime for e in sources} - {"unknown"}
    return ValidationCriterion(
        all_of=tuple(tags) or _keywords(text),
        regime=regimes.pop() if len(regimes) == 1 else None,
        description=description,
    )


def _staged_criterion(event: Event, episodes: Mapping[int, Episode]) -> ValidationCriterion:
    assert isinstance(event, DreamStaged)
    return episode_criterion(event.source_episode_ticks, event.content, event.validation_criterion, episodes)


register_staged_output(
    DreamStaged,
    StagedOutput(
        kind=lambda e: e.kind,  # type: ignore[attr-defined]
        confidence_pct=lambda e, _s: round(e.confidence * 100),  # type: ignore[attr-defined]
        text=lambda e: e.content,  # type: ignore[attr-defined]
        criterion=_staged_criterion,
        source_ticks=lambda e: tuple(e.source_episode_ticks),  # type: ignore[attr-defined]
        entry_id=lambda e: e.entry_id,  # type: ignore[attr-defined]
    ),
)
