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
from collections.abc import Mapping, Sequence

from oneiros.events import EntryQuarantined, EntryStaged, Episode, EpisodeTrust
from oneiros.settings import TrustSettings

__all__ = ["episode_flags", "instruction_flags", "judge", "quarantine_for"]

_LISTED = 5
"""Suspect episodes an unsourced entry's quarantine lists (the latest ticks); the rest are counted."""


@functools.lru_cache(maxsize=16)
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(pattern)) for name, pattern in patterns)


def instruction_flags(text: str, settings: TrustSettings) -> tuple[str, ...]:
    """The names of the instruction patterns ``text`` (lower-cased) matches, in the settings' order."""
    if not settings.instruction_patterns:
        return ()
    # Lower-casing once beats re.IGNORECASE, which doubles the cost of every pattern.
    lowered = text.lower()
    patterns = _compiled(tuple(settings.instruction_patterns.items()))
    return tuple(name for name, pattern in patterns if pattern.search(lowered))


def episode_flags(episode: Episode, settings: TrustSettings) -> tuple[str, ...]:
    """The instruction patterns an episode's summary or tags match."""
    return instruction_flags("\n".join((episode.summary, *episode.tags)), settings)


def judge(tick: int, episode: Episode, settings: TrustSettings) -> EpisodeTrust | None:
    """The episode's judgement if it is trusted below the minimum or flagged, else None."""
    trust = settings.trust_of(episode.source, episode.trust)
    flags = episode_flags(episode, settings)
    if flags or not settings.trusted(trust):
        return EpisodeTrust(tick=tick, source=episode.source, trust=trust, flags=flags)
    return None


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
