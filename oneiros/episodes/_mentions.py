"""Who or what the episodes name, and where they last did: what a thread needs to join tonight's
episodes to earlier ones without reading the whole history again.

For each subject (a tag, or a capitalised word inside a sentence: see ``oneiros._text.entities``)
the index keeps how many episodes named it and the ticks of the latest few, and it is caught up one
stretch of recorded rows at a time, each row read once. Beside them it keeps the topics a timeline
follows: what a user's own turns name as theirs ("my budget tracker", see ``oneiros._text.topics``)
and the ticks of their turns that name it since, spread over the whole history. It is a cache of
the episodes, not a fact of its own: rebuilt from them it is the same, and the episode memory
carries it in its snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from oneiros._text import ASSISTANTS, entities, topic_phrases, topics
from oneiros.events._types import Episode
from oneiros.settings._cycle import MENTIONS_KEPT

__all__ = ["Mentions"]

_RULES = 2
"""The version of the rules that pick subjects: an index made by other rules is made again (2:
topics)."""
TOPIC_KEPT = 32
"""Most turns kept for a topic: past it, every second one gives way (the first stays), so what is
kept still spans the whole history, evenly."""


class Mentions(msgspec.Struct, kw_only=True):
    """Subjects (lower case) with the form shown, how many episodes named each, the ticks of the
    latest ``MENTIONS_KEPT`` that did (oldest first), and who spoke (never a subject of its own)."""

    rules: int = _RULES
    rows: int = 0
    """Rows of the episode memory read so far."""
    shown: dict[str, str] = msgspec.field(default_factory=dict)
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    latest: dict[str, list[int]] = msgspec.field(default_factory=dict)
    speakers: list[str] = msgspec.field(default_factory=list)
    topics: dict[str, list[int]] = msgspec.field(default_factory=dict)
    """Each topic a user's turn named as theirs, with the ticks of the user's turns that named it
    (at most ``TOPIC_KEPT``, spread evenly), oldest first."""

    @property
    def current(self) -> bool:
        return self.rules == _RULES

    def add(self, episodes: Iterable[Episode], rows: int) -> None:
        """Read ``episodes`` (the rows from ``self.rows`` up to ``rows``, in the order recorded)."""
        speakers = dict.fromkeys(self.speakers)
        for episode in episodes:
            if episode.speaker:
                speakers.setdefault(episode.speaker)
            for key, form in entities(episode.said(), episode.tags).items():
                self.shown.setdefault(key, form)
                self.counts[key] = self.counts.get(key, 0) + 1
                ticks = self.latest.setdefault(key, [])
                ticks.append(episode.tick)
                if len(ticks) > MENTIONS_KEPT:
                    del ticks[0]
            if episode.speaker is None or episode.speaker.lower() not in ASSISTANTS:
                self._topics(episode)
        self.speakers = list(speakers)
        self.rows = rows

    def _topics(self, episode: Episode) -> None:
        """The topics a user's turn names as theirs, and every known one it names at all."""
        for key in topics(episode.summary):
            self.topics.setdefault(key, [])
        for key in topic_phrases(episode.summary) & self.topics.keys():
            ticks = self.topics[key]
            if ticks and ticks[-1] == episode.tick:
                continue
            ticks.append(episode.tick)
            if len(ticks) > TOPIC_KEPT:
                self.topics[key] = ticks[::2]

    def is_speaker(self, key: str, others: Iterable[str] = ()) -> bool:
        """``key`` is someone who speaks, or the start of their name ("mel" for Melanie)."""
        return any(name.lower().startswith(key) for name in (*self.speakers, *others))
