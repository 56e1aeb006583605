"""Quarantine: the staging process's record that a staged entry was drawn from untrusted episodes,
or from text that tries to instruct the dreamer, and so may be promoted only by a review.

It is written to the golem's ``<golem>:staging`` side stream right after the entry's
``EntryStaged``, by the same process in the same transaction, and names why: each offending
source episode with its source, trust and the instruction patterns it matched, and the patterns
the output's own text matched.
"""

from __future__ import annotations

from typing import Any

import msgspec

from oneiros.events._types import Event, NonEmpty, event_type
from oneiros.settings._trust import EpisodeSource, TrustLevel

__all__ = ["EntryQuarantined", "EpisodeTrust"]


class EpisodeTrust(msgspec.Struct, frozen=True, kw_only=True):
    """One source episode of a quarantined entry, as the staging process judged it."""

    tick: int
    source: EpisodeSource
    trust: TrustLevel
    """Its trust: its own, or its source's default when it named none."""
    flags: tuple[str, ...] = ()
    """The instruction patterns (by name) its summary or tags matched."""


@event_type("EntryQuarantined")
class EntryQuarantined(Event, frozen=True, kw_only=True):
    """The entry may not be promoted by the sweep or the recall policy, only by a review."""

    golem_id: NonEmpty
    entry_id: NonEmpty
    cycle_id: str
    min_trust: TrustLevel
    """The threshold it was judged against (``staging.trust.min_trust``)."""
    episodes: tuple[EpisodeTrust, ...] = ()
    """The source episodes trusted below ``min_trust`` or flagged."""
    unsourced: bool = False
    """The entry names no source episodes, and the golem held suspect ones (the latest listed)."""
    more_episodes: int = 0
    """Suspect episodes held but not listed (an unsourced entry lists the five latest by tick)."""
    output_flags: tuple[str, ...] = ()
    """The instruction patterns the entry's own text matched."""

    def as_row(self) -> dict[str, Any]:
        """As the CLI's and the API's JSON show it: the fields and ``why``."""
        return {**msgspec.to_builtins(self), "why": self.why}

    @property
    def why(self) -> str:
        """One line, as staging and review show it:
        ``episode 3 from web, trust low, flagged promote_to_memory; minimum trust medium``."""
        parts = ["names no source episodes; the golem holds suspect ones"] if self.unsourced else []
        for e in self.episodes:
            flags = f", flagged {' '.join(e.flags)}" if e.flags else ""
            parts.append(f"episode {e.tick} from {e.source}, trust {e.trust}{flags}")
        if self.more_episodes:
            parts.append(f"{self.more_episodes} more")
        if self.output_flags:
            parts.append(f"its text flagged {' '.join(self.output_flags)}")
        return "; ".join([*parts, f"minimum trust {self.min_trust}"])
