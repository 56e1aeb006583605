"""Which dream outputs enter the staging buffer, at what confidence and with what criterion, and
which entry makes room when the buffer is full.

The dream cycle's integration phase classifies every output (hypotheses, insights, threats,
hypnagogic predictions...) into one ``DreamStaged`` event with its initial confidence, so that is
the one type :func:`staged_output` stages. A host whose own dream output should enter the buffer
gives ``StagingProcess(staged=...)`` a function that knows it (and calls this one for the rest).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from oneiros._text import content_word_set, keywords, rank
from oneiros.events._content import DreamStaged, StagedKind
from oneiros.events._staging import ValidationCriterion
from oneiros.events._types import Episode, Event
from oneiros.projections._staging import StagedEntry
from oneiros.settings._staging import DisplaceBy, StagingSettings

__all__ = [
    "StagedOutput",
    "StagedOutputOf",
    "StagingSettings",
    "displacement_order",
    "entry_utility",
    "episode_criterion",
    "staged_output",
    "terms",
]


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


StagedOutputOf = Callable[[Event], StagedOutput | None]
"""How a dream output enters the buffer; None for one that does not."""


def entry_utility(entry: StagedEntry, episodes: Mapping[int, Episode]) -> float:
    """Bardo's utility score of a staged entry: the mean replay utility (gain x need) of the
    episodes it was drawn from, 0 for an entry drawn from none."""
    sources = [episodes[t] for t in entry.lineage.source_episode_ticks if t in episodes]
    from oneiros.phases._nrem import utility  # noqa: PLC0415 - the NREM engine loads NumPy: a full buffer only

    return sum(utility(e, 1.0) for e in sources) / len(sources) if sources else 0.0


def displacement_order(entry: StagedEntry, episodes: Mapping[int, Episode], by: DisplaceBy) -> tuple[float, ...]:
    """Sort key of the entry that makes room first: lowest utility (or confidence), then lowest
    confidence, then the longest staged."""
    first = entry_utility(entry, episodes) if by == "utility" else float(entry.confidence_pct)
    return (first, float(entry.confidence_pct), float(entry.lineage.source_position))


def terms(text: str) -> set[str]:
    """The lower-case words an outcome or criterion is matched on."""
    return content_word_set(text)


def _keywords(text: str, limit: int = 2) -> tuple[str, ...]:
    return tuple(sorted(keywords(text, limit)))


def episode_criterion(
    ticks: tuple[int, ...], text: str, description: str, episodes: Mapping[int, Episode]
) -> ValidationCriterion:
    """What a live outcome must show to bear on an output drawn from episodes ``ticks``: their
    most shared tags (or, without tags, the text's keywords), in their regime when they share one."""
    sources = [episodes[t] for t in ticks if t in episodes]
    tags = rank((tag.lower() for e in sources for tag in e.tags), 3)
    regimes = {e.regime for e in sources} - {"unknown"}
    return ValidationCriterion(
        all_of=tuple(tags) or _keywords(text),
        regime=regimes.pop() if len(regimes) == 1 else None,
        description=description,
    )


def _staged_criterion(event: Event, episodes: Mapping[int, Episode]) -> ValidationCriterion:
    assert isinstance(event, DreamStaged)
    return episode_criterion(event.source_episode_ticks, event.content, event.validation_criterion, episodes)


_DREAM_STAGED = StagedOutput(
    kind=lambda e: e.kind,  # type: ignore[attr-defined]
    confidence_pct=lambda e, _s: round(e.confidence * 100),  # type: ignore[attr-defined]
    text=lambda e: e.content,  # type: ignore[attr-defined]
    criterion=_staged_criterion,
    source_ticks=lambda e: tuple(e.source_episode_ticks),  # type: ignore[attr-defined]
    entry_id=lambda e: e.entry_id,  # type: ignore[attr-defined]
)


def staged_output(event: Event) -> StagedOutput | None:
    """How ``event`` enters the staging buffer: a ``DreamStaged`` as integration classified it;
    None for every other event."""
    match event:
        case DreamStaged():
            return _DREAM_STAGED
    return None
