"""What a stand-in model reads in a prompt: the episode lines the engines write (``episode_line``,
``said_line``) turned back into episodes, and the figures the prompts state, as the request's
``TaskInputs`` would have carried them. The mock chat server (``chat_server.py``) answers through
the offline generator, which reads inputs, not prompt text; this is the model's side of that."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

import msgspec

from oneiros.events._types import Episode, Outcome
from oneiros.generators._protocol import TaskInputs

__all__ = ["inputs_of"]

_EPISODE = re.compile(
    r"\[(?:(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d) · )?tick (?P<tick>\d+) · (?P<regime>[^\]·]*?)"
    r"(?: · (?P<tags>#[^\]]*))?\] "
    r"(?P<summary>.+?)(?: \(outcome (?P<pnl>[^,()]+), surprise [^,()]+, arousal (?P<arousal>[^,()]+)\))?[ \t]*$",
    re.MULTILINE,
)
_SAID = re.compile(
    r"^(?P<mark>[-~]) \[tick (?P<tick>\d+) · (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d|untimed) · (?P<who>[^\]·]*?)"
    r"(?: · significance (?P<sig>[^ ·\]]+))?(?: · outcome (?P<outcome>[^ ·\]]+))?"
    r"(?: · surprise (?P<surprise>[^ ·\]]+))?"
    r"\] (?P<text>.+?)[ \t]*$",
    re.MULTILINE,
)
_FIGURES = {
    "salient": (re.compile(r"significance (\d+(?:\.\d+)?) or more"), float),
    "subject": (re.compile(r"^Subject: (.+)$", re.MULTILINE), str),
    "cap": (re.compile(r"at most (\d+) of them"), int),
    "theme": (re.compile(r"theme: ([^.\s]+)\."), str),
    "branch": (re.compile(r"Alternative (\d+) of"), int),
    "mode": (re.compile(r"\((\w+) creativity\)"), str),
    "tag": (re.compile(r"theme '([^']+)'"), str),
}


def _number(text: str | None, default: float = 0.0) -> float:
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _time(text: str | None) -> datetime | None:
    return None if text in (None, "untimed") else datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def inputs_of(prompt: str) -> TaskInputs:
    """The episodes and figures ``prompt`` states, read as a model reads them."""
    said = list(_SAID.finditer(prompt))
    before: Episode | None = None
    episodes: list[Episode] = []
    if said:
        for m in said:
            episode = Episode(
                tick=int(m["tick"]),
                summary=m["text"],
                time=_time(m["when"]),
                speaker=None if m["who"] == "self" else m["who"],
                significance=_number(m["sig"], 0.5),
                outcome=Outcome(pnl=_number(m["outcome"]), surprise=_number(m["surprise"])),
            )
            if m["mark"] == "~":
                before = episode
            else:
                episodes.append(episode)
    else:
        for m in _EPISODE.finditer(prompt):
            episodes.append(
                Episode(
                    tick=int(m["tick"]),
                    summary=m["summary"],
                    time=_time(m["when"]),
                    regime="unknown" if not m["regime"] else m["regime"],
                    tags=tuple(t.lstrip("#") for t in (m["tags"] or "").split() if t.lstrip("#")),
                    arousal=min(1.0, max(0.0, _number(m["arousal"]))),
                    outcome=Outcome(pnl=_number(m["pnl"])),
                )
            )
    figures: dict[str, object] = {}
    for name, (pattern, kind) in _FIGURES.items():
        if (found := pattern.search(prompt)) is not None:
            figures[name] = kind(found.group(1).strip())
    return msgspec.structs.replace(TaskInputs(episodes=tuple(episodes), before=before), **figures)
