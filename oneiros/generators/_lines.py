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

import msgspec

from oneiros.events._types import Episode

__all__ = ["EpisodeLine", "episode_line", "episode_lines", "read_episode_lines"]


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
    return f"{line} (pnl {o.pnl:+.4f}, surprise {o.surprise:.2f}, arousal {episode.arousal:.2f})"


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
    r"(?P<summary>.+?)(?: \(pnl (?P<pnl>[^,()]+), surprise [^,()]+, arousal (?P<arousal>[^,()]+)\))?[ \t]*$",
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
