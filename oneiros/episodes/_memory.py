"""The episodic memory read model: episodes as the log leaves them after every dream's effects.

Replay strength (+0.5 a replay), depotentiated arousal and triage decisions are events; this model
folds them over the recorded episodes, so what NREM and REM read is rebuilt from the log alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros._errors import InputError
from oneiros.events import (
    DreamComplete,
    Episode,
    EpisodeDepotentiated,
    EpisodePrioritized,
    EpisodeRecorded,
    EpisodeTriaged,
    Recorded,
    ReplayStrengthened,
    TriageDecision,
)

__all__ = ["SECONDS_PER_TICK", "EpisodeMemory", "episode_seconds", "episode_time", "episodes_from_dicts"]

SECONDS_PER_TICK = 60.0
"""Where an episode has no time, its tick stands in at one minute a tick (Bardo 001_*: "a 4-hour
sleep window at 1 tick/minute")."""


def episodes_from_dicts(items: Iterable[dict[str, Any]]) -> list[Episode]:
    """Episodes from plain Python mappings, each checked like a line of an episode file."""
    out: list[Episode] = []
    for index, item in enumerate(items):
        try:
            out.append(msgspec.convert(item, Episode))
        except msgspec.ValidationError as exc:
            raise InputError(f"episode {index}: {exc}") from None
    return out


class EpisodeMemory:
    """Every recorded episode with its current strength, arousal and latest triage decision."""

    def __init__(self, episodes: Iterable[Episode] = ()) -> None:
        self._episodes: dict[int, Episode] = {}
        self.strength: dict[int, float] = {}
        self.arousal: dict[int, float] = {}
        self.triage: dict[int, TriageDecision] = {}
        self.prioritized: set[int] = set()
        """Episodes the micro-consolidation fiber tagged ``dream_priority: high`` for the next
        full dream cycle (Bardo 001_*); the tag ends when a cycle completes."""
        for episode in episodes:
            self.add(episode)

    @classmethod
    def from_records(cls, records: Iterable[Recorded]) -> EpisodeMemory:
        memory = cls()
        for record in records:
            memory.apply(record.event)
        return memory

    def add(self, episode: Episode) -> None:
        """Record an episode; a later one with the same tick replaces it."""
        self._episodes[episode.tick] = episode
        self.arousal[episode.tick] = episode.arousal
        self.strength.setdefault(episode.tick, 0.0)

    def apply(self, event: object) -> None:
        """Fold one event; events that do not touch episodes are ignored."""
        if isinstance(event, EpisodeRecorded):
            self.add(event.episode)
        elif isinstance(event, ReplayStrengthened):
            self.strength[event.episode_tick] = self.strength.get(event.episode_tick, 0.0) + event.delta
        elif isinstance(event, EpisodeDepotentiated):
            self.arousal[event.episode_tick] = event.arousal_after
        elif isinstance(event, EpisodeTriaged):
            self.triage[event.episode_tick] = event.decision
        elif isinstance(event, EpisodePrioritized):
            self.prioritized.add(event.episode_tick)
        elif isinstance(event, DreamComplete):
            self.prioritized.clear()

    def __len__(self) -> int:
        return len(self._episodes)

    def episodes(self) -> list[Episode]:
        """Every episode in tick order, with its current (depotentiated) arousal and dream priority."""
        out = []
        for tick in sorted(self._episodes):
            episode = self._episodes[tick]
            arousal = self.arousal.get(tick, episode.arousal)
            if arousal != episode.arousal:
                episode = msgspec.structs.replace(episode, arousal=arousal)
            if tick in self.prioritized and episode.dream_priority != "high":
                episode = msgspec.structs.replace(episode, dream_priority="high")
            out.append(episode)
        return out

    def get(self, tick: int) -> Episode | None:
        return self._episodes.get(tick)

    def query(
        self,
        *,
        regime: str | None = None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        min_significance: float = 0.0,
        exclude_forgotten: bool = False,
        limit: int | None = None,
    ) -> list[Episode]:
        """Episodes matching every given filter, in tick order."""
        wanted = set(tags)
        out = []
        for episode in self.episodes():
            when = episode_time(episode)
            if regime is not None and episode.regime != regime:
                continue
            if wanted and not wanted.issubset(episode.tags):
                continue
            if (since is not None and when < since) or (until is not None and when > until):
                continue
            if episode.significance < min_significance:
                continue
            if exclude_forgotten and self.triage.get(episode.tick) == "forget":
                continue
            out.append(episode)
            if limit is not None and len(out) >= limit:
                break
        return out


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def episode_time(episode: Episode) -> datetime:
    """The episode's time (UTC when it names no zone), or its tick read as minutes after the epoch."""
    if episode.time is not None:
        return episode.time if episode.time.tzinfo else episode.time.replace(tzinfo=UTC)
    return _EPOCH + timedelta(seconds=episode.tick * SECONDS_PER_TICK)


def episode_seconds(episodes: Sequence[Episode]) -> npt.NDArray[np.float64]:
    """Each episode's time in seconds, as one array."""
    return np.fromiter(
        (episode_time(e).timestamp() for e in episodes),
        dtype=np.float64,
        count=len(episodes),
    )
