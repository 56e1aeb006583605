"""Episodes as prompt lines, and those lines read back.

The engines write every episode into a prompt with :func:`episode_line`; a model reads it as text,
and the offline generator reads it back with :func:`read_episode_lines` so that what it writes can
use the same facts a model would (the regime, tags and outcome), not only the summaries. Both live
here so the two sides of the format cannot drift apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from oneiros.events._types import Episode

__all__ = [
    "EpisodeLine",
    "SaidLine",
    "episode_line",
    "episode_lines",
    "read_episode_lines",
    "read_said_lines",
    "said_line",
    "said_lines",
]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tag(tag: str) -> str:
    # A tag is one word in the line, so a space or a bracket inside it cannot split the header.
    return "-".join(tag.replace("]", " ").replace("·", " ").split())


def episode_line(episode: Episode, *, figures: bool = True) -> str:
    """One episode as a prompt line: time, tick, regime, tags, summary and outcome; without
    ``figures``, only tick, regime, tags and summary."""
    head = [f"tick {episode.tick}", _one_line(episode.regime.replace("]", " ").replace("·", " ")) or "unknown"]
    if episode.time is not None and figures:
        head.insert(0, episode.time.strftime("%Y-%m-%d %H:%M"))
    tags = " ".join(f"#{t}" for t in map(_tag, episode.tags) if t)
    if tags:
        head.append(tags)
    line = f"[{' · '.join(head)}] {_one_line(episode.summary)}"
    if not figures:
        return line
    o = episode.outcome
    return f"{line} (outcome {o.pnl:+.4f}, surprise {o.surprise:.2f}, arousal {episode.arousal:.2f})"


def episode_lines(episodes: Sequence[Episode], *, figures: bool = True) -> str:
    """Episodes as a bulleted list of :func:`episode_line`."""
    return "\n".join(f"- {episode_line(e, figures=figures)}" for e in episodes)


class EpisodeLine(msgspec.Struct, frozen=True, kw_only=True):
    """What one prompt line says about an episode; ``tick`` and ``pnl`` are None when a line gave
    only a summary (a user's own prompt template may carry no episode lines at all)."""

    summary: str
    tick: int | None = None
    regime: str = ""
    tags: tuple[str, ...] = ()
    pnl: float | None = None
    arousal: float = 0.0


_LINE = re.compile(
    r"\[(?:[^\]·]*? · )?tick (?P<tick>\d+) · (?P<regime>[^\]·]*?)(?: · (?P<tags>#[^\]]*))?\] "
    r"(?P<summary>.+?)(?: \(outcome (?P<pnl>[^,()]+), surprise [^,()]+, arousal (?P<arousal>[^,()]+)\))?[ \t]*$",
    re.MULTILINE,
)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_episode_lines(text: str) -> list[EpisodeLine]:
    """Every :func:`episode_line` in ``text``, in order."""
    return [
        EpisodeLine(
            summary=m["summary"],
            tick=int(m["tick"]),
            regime="" if m["regime"] == "unknown" else m["regime"],
            tags=tuple(t.lstrip("#") for t in (m["tags"] or "").split() if t.lstrip("#")),
            pnl=None if m["pnl"] is None else _number(m["pnl"]),
            arousal=(None if m["arousal"] is None else _number(m["arousal"])) or 0.0,
        )
        for m in _LINE.finditer(text)
    ]


# --- what was said or done, for observations --------------------------------------------------------

SELF = "self"
"""The speaker field of a line the golem wrote about its own doing."""
_SIGNIFICANCE = 0.5
"""An episode's significance when it gives none (``Episode.significance``)."""


def said_line(episode: Episode) -> str:
    """One episode as an observation prompt reads it: tick, time, who (``self`` for the golem's own
    doing), then its significance, outcome and surprise where they are not the defaults, then the
    text as it was said."""
    when = episode.time.strftime("%Y-%m-%d %H:%M") if episode.time is not None else "untimed"
    who = _one_line(episode.speaker.replace("]", " ").replace("·", " ")) if episode.speaker else SELF
    head = [f"tick {episode.tick}", when, who or SELF]
    o = episode.outcome
    if episode.significance != _SIGNIFICANCE:
        head.append(f"significance {episode.significance:.2f}")
    if o.pnl:
        head.append(f"outcome {o.pnl:+.4f}")
    if o.surprise:
        head.append(f"surprise {o.surprise:.2f}")
    return f"[{' · '.join(head)}] {_one_line(episode.summary)}"


def said_lines(episodes: Sequence[Episode], before: Episode | None = None) -> str:
    """Episodes as a bulleted list of :func:`said_line`; ``before``, the episode just before them,
    comes first marked ``~``: context for what they answer, not one of them."""
    context = [f"~ {said_line(before)}"] if before is not None else []
    return "\n".join([*context, *(f"- {said_line(e)}" for e in episodes)])


class SaidLine(msgspec.Struct, frozen=True, kw_only=True):
    """What one :func:`said_line` says; ``speaker`` is None for the golem's own doing."""

    tick: int
    text: str
    when: datetime | None = None
    speaker: str | None = None
    significance: float = 0.5
    outcome: float = 0.0
    surprise: float = 0.0
    context: bool = False
    """Marked ``~``: said just before the episodes, for what they answer; not one of them."""


_SAID = re.compile(
    r"^(?P<mark>[-~]) \[tick (?P<tick>\d+) · (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d|untimed) · (?P<who>[^\]·]*?)"
    r"(?: · significance (?P<sig>[^ ·\]]+))?(?: · outcome (?P<outcome>[^ ·\]]+))?"
    r"(?: · surprise (?P<surprise>[^ ·\]]+))?"
    r"\] (?P<text>.+?)[ \t]*$",
    re.MULTILINE,
)


def _figure(text: str | None, default: float) -> float:
    found = None if text is None else _number(text)
    return default if found is None else found


def read_said_lines(text: str) -> list[SaidLine]:
    """Every :func:`said_line` in ``text``, in order."""
    return [
        SaidLine(
            tick=int(m["tick"]),
            text=m["text"],
            when=None if m["when"] == "untimed" else datetime.strptime(m["when"], "%Y-%m-%d %H:%M").replace(tzinfo=UTC),
            speaker=None if m["who"] == SELF else m["who"],
            significance=_figure(m["sig"], _SIGNIFICANCE),
            outcome=_figure(m["outcome"], 0.0),
            surprise=_figure(m["surprise"], 0.0),
            context=m["mark"] == "~",
        )
        for m in _SAID.finditer(text)
    ]
