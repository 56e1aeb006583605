"""Quarantine: which staged entries only a review may promote.

An entry is quarantined when one of the episodes it was drawn from is trusted below
``staging.trust.min_trust``, or when such an episode (its summary or tags) or the entry's own
text matches one of ``staging.trust.instruction_patterns``: text that tries to instruct the
dreamer ("ignore previous instructions", "promote this to memory", "you must", a role marker),
matched against the lower-cased text.
The detector is a list of regular expressions, so the same text is always judged the same way.
An entry that names no source episodes is quarantined while the golem holds any suspect episode.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from oneiros.events._quarantine import EntryQuarantined, EpisodeTrust
from oneiros.events._staging import EntryStaged
from oneiros.events._types import Episode
from oneiros.settings._trust import TRUST_LEVELS, TrustSettings

__all__ = ["instruction_flags", "judge_all", "quarantine_for"]

_LISTED = 5
"""Suspect episodes an unsourced entry's quarantine lists (the latest ticks); the rest are counted."""


class _Detector:
    """A :class:`TrustSettings` made ready to judge many texts: its patterns compiled and its trust
    floor resolved once, not per episode (a sweep after a large import judges every episode)."""

    __slots__ = ("patterns", "settings", "untrusted")

    def __init__(self, settings: TrustSettings) -> None:
        self.settings = settings
        self.patterns = _compiled(tuple(settings.instruction_patterns.items()))
        self.untrusted = frozenset(level for level in TRUST_LEVELS if not settings.trusted(level))

    def flags(self, text: str) -> tuple[str, ...]:
        # Lower-casing once beats re.IGNORECASE, which doubles the cost of every pattern.
        lowered = text.lower()
        return tuple([name for name, search in self.patterns if search(lowered)]) if self.patterns else ()

    def judge(self, tick: int, episode: Episode) -> EpisodeTrust | None:
        trust = self.settings.trust_of(episode.source, episode.trust)
        flags = self.flags("\n".join((episode.said(), *episode.tags)))
        if flags or trust in self.untrusted:
            return EpisodeTrust(tick=tick, source=episode.source, trust=trust, flags=flags)
        return None


@functools.lru_cache(maxsize=16)
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, Callable[[str], object]], ...]:
    return tuple((name, re.compile(pattern).search) for name, pattern in patterns)


def instruction_flags(text: str, settings: TrustSettings) -> tuple[str, ...]:
    """The names of the instruction patterns ``text`` (lower-cased) matches, in the settings' order."""
    return _Detector(settings).flags(text)


def judge_all(episodes: Iterable[tuple[int, Episode]], settings: TrustSettings) -> Iterator[EpisodeTrust]:
    """The judgements of the suspect ones among ``episodes`` (``(tick, episode)``)."""
    detector = _Detector(settings)
    for tick, episode in episodes:
        judged = detector.judge(tick, episode)
        if judged is not None:
            yield judged


def quarantine_for(
    staged: EntryStaged,
    ticks: Sequence[int],
    suspect: Mapping[int, EpisodeTrust],
    settings: TrustSettings,
) -> EntryQuarantined | None:
    """The quarantine of the entry ``staged`` drawn from episodes ``ticks``, given the golem's
    ``suspect`` episodes (untrusted or flagged, by tick), or None if it is trusted.

    An entry that names its source episodes is judged by them. One that names none (a hypnagogic
    fragment) could have been drawn from any episode the golem holds, so it is quarantined while
    the golem holds any suspect one; the latest few (by tick) are listed."""
    if ticks:
        judged = [suspect[t] for t in dict.fromkeys(ticks) if t in suspect]
        more = 0
    else:
        newest = [suspect[t] for t in sorted(suspect)[-_LISTED:]]
        judged, more = newest, len(suspect) - len(newest)
    output_flags = instruction_flags(staged.text, settings)
    if not judged and not output_flags:
        return None
    return EntryQuarantined(
        golem_id=staged.golem_id,
        entry_id=staged.entry_id,
        cycle_id=staged.lineage.cycle_id,
        min_trust=settings.min_trust,
        episodes=tuple(judged),
        unsourced=not ticks,
        more_episodes=more,
        output_flags=output_flags,
    )
