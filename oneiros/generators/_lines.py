"""Episodes as prompt lines, and the same episodes as the offline generator reads them.

The engines write every episode into a prompt with :func:`episode_line` (or :func:`said_line`, for
what was said) and hand the episodes themselves to the request (``TaskInputs``). A model reads the
lines; the offline generator reads the episodes as :class:`EpisodeLine` and :class:`SaidLine`,
which hold exactly what the lines show (the same rounding, the same one-line text), so what it
writes uses the facts a model would see, and a user's own prompt template changes nothing for it.
Both live here so the two sides cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from oneiros.events._types import Episode

__all__ = [
    "EpisodeLine",
    "SaidLine",
    "episode_line",
    "episode_lines",
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
    line = f"[{' · '.join(head)}] {_one_line(episode.said())}"
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

    @classmethod
    def of(cls, episode: Episode) -> EpisodeLine:
        """What :func:`episode_line` shows of ``episode``: its one-line summary, regime and tags as
        written there, and its outcome and arousal to the digits printed."""
        regime = _one_line(episode.regime.replace("]", " ").replace("·", " "))
        return cls(
            summary=_one_line(episode.said()),
            tick=episode.tick,
            regime="" if regime == "unknown" else regime,
            tags=tuple(t for t in (_tag(tag).lstrip("#") for tag in episode.tags) if t),
            pnl=_number(f"{episode.outcome.pnl:+.4f}"),
            arousal=_number(f"{episode.arousal:.2f}") or 0.0,
        )


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
    return f"[{' · '.join(head)}] {_one_line(episode.said())}"


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

    @classmethod
    def of(cls, episode: Episode, *, context: bool = False) -> SaidLine:
        """What :func:`said_line` shows of ``episode``: time to the minute, who, the figures that
        are not the defaults to the digits printed, and the text on one line."""
        o = episode.outcome
        when = episode.time.strftime("%Y-%m-%d %H:%M") if episode.time is not None else None
        who = _one_line(episode.speaker.replace("]", " ").replace("·", " ")) if episode.speaker else SELF
        return cls(
            tick=episode.tick,
            text=_one_line(episode.said()),
            when=None if when is None else datetime.strptime(when, "%Y-%m-%d %H:%M").replace(tzinfo=UTC),
            speaker=None if who in ("", SELF) else who,
            significance=_figure(f"{episode.significance:.2f}", _SIGNIFICANCE)
            if episode.significance != _SIGNIFICANCE
            else _SIGNIFICANCE,
            outcome=_figure(f"{o.pnl:+.4f}", 0.0) if o.pnl else 0.0,
            surprise=_figure(f"{o.surprise:.2f}", 0.0) if o.surprise else 0.0,
            context=context,
        )


def _figure(text: str | None, default: float) -> float:
    found = None if text is None else _number(text)
    return default if found is None else found


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
