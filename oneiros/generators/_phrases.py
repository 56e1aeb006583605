"""Phrases the offline generator builds its sentences from: episodes named by tick and quoted
summary, outcomes as percentages with the right article, markets by regime, trades by tags.

Every phrase is grammatical whatever words the episodes bring: content words appear where any
word reads well (a quoted summary, a tag after "tagged", a regime before "market"), never as a
verb or a subject they may not fit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from oneiros._text import article, keywords, rank
from oneiros.generators._lines import EpisodeLine

__all__ = [
    "FLAT",
    "Scene",
    "capitalize",
    "net",
    "pct",
    "pick",
    "sentence",
    "topics",
]

FLAT = 0.0005
"""Below this PnL fraction (0.05%) an outcome reads as neither a gain nor a loss."""


def pct(value: float) -> str:
    """A PnL fraction as a percentage without sign: 0.03 -> '3.0%'."""
    return f"{abs(value) * 100:.1f}%"


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """``text`` with a capital first letter and one closing full stop."""
    text = capitalize(text.strip())
    return text if text.endswith((".", "?", "!")) else text.rstrip(";:,") + "."


def net(episodes: Sequence[Scene]) -> str:
    """What a group of episodes came to together, as a verb phrase: 'gained 2.6% between them'."""
    total = sum(e.pnl or 0.0 for e in episodes)
    together = " between them" if len(episodes) > 1 else ""
    if abs(total) < FLAT:
        return "came out about even" + together
    return f"{'gained' if total > 0 else 'lost'} {pct(total)}{together}"


def _quoted(summary: str) -> str:
    return '"' + summary.strip().rstrip(".;,: ").replace('"', "'") + '"'


class Scene:
    """One episode as the writers speak of it."""

    def __init__(self, line: EpisodeLine) -> None:
        self.line = line
        self.tick = line.tick
        self.pnl = line.pnl
        self.regime = line.regime.strip()
        self.tags = line.tags
        self.quote = _quoted(line.summary)

    @property
    def known(self) -> bool:
        return self.pnl is not None

    @property
    def sign(self) -> int:
        """1 for a gain, -1 for a loss, 0 for neither or unknown."""
        if self.pnl is None or abs(self.pnl) < FLAT:
            return 0
        return 1 if self.pnl > 0 else -1

    @property
    def at(self) -> str:
        """'tick 211' or, without a tick, 'that episode'."""
        return f"tick {self.tick}" if self.tick is not None else "that episode"

    @property
    def ref(self) -> str:
        """'tick 211 ("Faded the BTC breakout too early; stopped out for a 3% loss")'."""
        return f"{self.at} ({self.quote})" if self.tick is not None else f"the episode {self.quote}"

    @property
    def amount(self) -> str:
        return pct(self.pnl or 0.0)

    @property
    def result(self) -> str:
        """'a 3.0% loss', 'a 6.0% gain' or 'no gain or loss'."""
        if self.sign == 0:
            return "no gain or loss"
        word = "gain" if self.sign > 0 else "loss"
        return f"{article(self.amount)} {self.amount} {word}"

    @property
    def half(self) -> str:
        return pct((self.pnl or 0.0) / 2)

    @property
    def market(self) -> str:
        """'a trending market', or 'that market' when the regime is unknown."""
        if not self.regime:
            return "that market"
        noun = "" if self.regime.lower().endswith(("market", "regime")) else " market"
        return f"{article(self.regime)} {self.regime}{noun}"

    @property
    def markets(self) -> str:
        """'trending markets', or 'other markets' when the regime is unknown."""
        if not self.regime:
            return "other markets"
        if self.regime.lower().endswith(("market", "regime")):
            return self.regime + "s"
        return f"{self.regime} markets"

    @property
    def the_market(self) -> str:
        if not self.regime:
            return "the market"
        noun = "" if self.regime.lower().endswith(("market", "regime")) else " market"
        return f"the {self.regime}{noun}"

    @property
    def trades(self) -> str:
        """'trades tagged btc and momentum', or without tags 'trades like "<first clause>"'."""
        if self.tags:
            return f"trades tagged {' and '.join(self.tags[:2])}"
        return f"trades like {_quoted(self.line.summary.split(';')[0])}"

    def tag(self, unlike: Scene | None = None) -> str:
        """The tag that tells this episode apart from ``unlike`` (else its first tag), or ''."""
        others = set(unlike.tags) if unlike is not None else set()
        distinct = [t for t in self.tags if t not in others]
        return (distinct or list(self.tags) or [""])[0]

    def word(self) -> str:
        """One word for what the episode was about: its first tag, else its main keyword."""
        if self.tags:
            return self.tags[0]
        found = keywords(self.line.summary, 1)
        return found[0] if found else "it"


def topics(scenes: Sequence[Scene], limit: int) -> list[str]:
    """The most shared tags of ``scenes``, then their summaries' keywords, without repeats."""
    tags = rank((t for s in scenes for t in s.tags), limit)
    words = keywords(" ".join(s.line.summary for s in scenes), limit)
    return list(dict.fromkeys([*tags, *words]))[:limit]


def pick(rng: random.Random, options: Sequence[str]) -> str:
    return options[rng.randrange(len(options))]
