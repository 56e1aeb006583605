"""Phrases the offline generator builds its sentences from: episodes named by tick and quoted
summary, outcomes as going well or badly, conditions by the episodes' own regime, kinds of work by
their own tags.

No domain's vocabulary is built in: every content word comes from the episodes (their summaries,
tags and regimes), and an outcome is a figure only where the episode itself gave it as a
percentage ("captured 6%" with an outcome of 0.06). Every phrase is grammatical whatever words the
episodes bring: content words appear where any word reads well (a quoted summary, a tag after
"tagged", a regime before "conditions"), never as a verb or a subject they may not fit.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from oneiros._text import keywords, rank
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
"""Below this outcome (0.05% of a percentage) an episode went neither well nor badly."""
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")


def pct(value: float) -> str:
    """An outcome as a signed percentage: 0.03 -> '+3.0%'."""
    return f"{value * 100:+.1f}%"


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """``text`` with a capital first letter and one closing full stop."""
    text = capitalize(text.strip())
    return text if text.endswith((".", "?", "!")) else text.rstrip(";:,") + "."


def _direction(total: float) -> str:
    if abs(total) < FLAT:
        return "came out even"
    return "went well" if total > 0 else "went badly"


def net(episodes: Sequence[Scene]) -> str:
    """What a group of episodes came to together, as a verb phrase: 'went well on balance
    (+2.6%)', the figure only when every one of them gave its outcome as a percentage."""
    total = sum(e.pnl or 0.0 for e in episodes)
    together = " on balance" if len(episodes) > 1 and abs(total) >= FLAT else ""
    figure = f" ({pct(total)})" if abs(total) >= FLAT and all(e.percent for e in episodes) else ""
    return _direction(total) + together + figure


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
        """1 when it went well, -1 when it went badly, 0 for neither or unknown."""
        if self.pnl is None or abs(self.pnl) < FLAT:
            return 0
        return 1 if self.pnl > 0 else -1

    @property
    def percent(self) -> bool:
        """True when the episode gave its own outcome as a percentage ("captured 6%" for 0.06)."""
        if self.pnl is None:
            return False
        return any(abs(float(n) - abs(self.pnl) * 100) < 0.05 for n in _PERCENT.findall(self.line.summary))

    @property
    def at(self) -> str:
        """'tick 211' or, without a tick, 'that episode'."""
        return f"tick {self.tick}" if self.tick is not None else "that episode"

    @property
    def ref(self) -> str:
        """'tick 211 ("Rolled back the deploy after errors doubled")'."""
        return f"{self.at} ({self.quote})" if self.tick is not None else f"the episode {self.quote}"

    @property
    def figure(self) -> str:
        """' (-3.0%)' where the episode gave its outcome as a percentage, else ''."""
        return f" ({pct(self.pnl or 0.0)})" if self.percent and self.sign else ""

    @property
    def result(self) -> str:
        """'went well', 'went badly (-3.0%)' or 'came out even'."""
        return _direction(self.pnl or 0.0) + self.figure

    @property
    def where(self) -> str:
        """'in incident conditions', or 'in those conditions' when the regime is unknown."""
        if not self.regime:
            return "in those conditions"
        return f"in {self.conditions}"

    @property
    def conditions(self) -> str:
        """'incident conditions' (plural, no article), or 'other conditions' when the regime is unknown."""
        if not self.regime:
            return "other conditions"
        if self.regime.lower().endswith(("conditions", "regime", "regimes", "mode")):
            return self.regime
        return f"{self.regime} conditions"

    @property
    def the_conditions(self) -> str:
        return f"the {self.conditions}" if self.regime else "the conditions"

    @property
    def kinds(self) -> str:
        """'episodes tagged deploy and rollback', or without tags 'episodes like "<first clause>"'."""
        if self.tags:
            return f"episodes tagged {' and '.join(self.tags[:2])}"
        return f"episodes like {_quoted(self.line.summary.split(';')[0])}"

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
