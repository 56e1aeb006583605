"""Timelines: per subject the user keeps coming back to (a project, a feature, a person), what they
brought up about it in order, with dates, as ``DreamObservation`` outputs of kind ``timeline``
(issue 36), so "in what order did I bring up ..." and "how has X progressed" find their turns.

A subject is what a user's turn names as theirs ("my budget tracker", "the city autocomplete
feature"), found by rule in the episode memory's topics index (``Mentions.topics``). Each night, for
the subjects its user turns name that earlier days named too, the timeline is written again from
the first turn on it of each day (at most ``timeline_entries``, spread evenly over the whole span),
and the new one supersedes the older (``key`` ``timeline:<subject>``): recall sees the current one.
The generator (the offline rules, or a model through the ``timeline`` prompt) says what each turn
brought up; the dates and turn ids are written here, from the episodes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import TypeVar

import msgspec

from oneiros._text import ASSISTANTS, topic_phrases
from oneiros._text import topics as named_topics
from oneiros.episodes._columns import EpisodeColumns
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, Event
from oneiros.generators._lines import said_lines
from oneiros.generators._prose import day_text
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import TimelineResult
from oneiros.phases._common import Steps, json_parser

__all__ = ["spread", "timeline_night", "timeline_text"]

_TEXT = 16_384
_KEY = 128
_PARSE = json_parser("timeline", TimelineResult)
_T = TypeVar("_T")
_OPENING = 600
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def _said_by_user(episode: Episode) -> bool:
    return episode.speaker is None or episode.speaker.lower() not in ASSISTANTS


def spread(items: Sequence[_T], most: int) -> list[_T]:
    """At most ``most`` of ``items``, evenly spaced, the first and the last always among them."""
    if len(items) <= most:
        return list(items)
    if most <= 1:
        return list(items[-most:]) if most else []
    last = len(items) - 1
    return [items[round(n * last / (most - 1))] for n in range(most)]


def _opening(episode: Episode) -> Episode:
    """``episode`` with its text cut to its opening whole sentences (at most ``_OPENING``
    characters): where a turn says what it brings up, and all a timeline's step needs to read."""
    text = episode.summary
    if len(text) <= _OPENING:
        return episode
    head = text[:_OPENING]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    return msgspec.structs.replace(episode, summary=head[: ends[-1]].rstrip() if ends else head)


def _firsts(ticks: Sequence[int], columns: EpisodeColumns) -> list[Episode]:
    """The first turn of each day among ``ticks`` (an untimed turn is a day of its own)."""
    days: dict[date | int, Episode] = {}
    for tick in ticks:
        position = columns.position(tick)
        if position is None:
            continue
        episode = columns[position]
        days.setdefault(episode.time.date() if episode.time is not None else tick, episode)
    return list(days.values())


def _reply(columns: EpisodeColumns, episode: Episode) -> Episode | None:
    """The turn that answered ``episode``: the next one, by someone else, the same day (the first
    part of it, when it is long)."""
    position = columns.position(episode.tick)
    if position is None or position + 1 >= len(columns):
        return None
    following = columns[position + 1]
    if following.speaker == episode.speaker or following.time is None or episode.time is None:
        return None
    return following if following.time.date() == episode.time.date() else None


def timeline_text(subject: str, entries: Sequence[tuple[Episode, str]], replies: Mapping[int, Episode]) -> str:
    """``Budget tracker: what user brought up about it, in order: 15 March 2024: <clause> (turns 4,
    5); 2 April 2024: ... .`` (whoever said most of its turns brought it up; each entry names its
    turn and the reply to it, in ``replies``)."""
    parts = []
    for episode, clause in entries:
        day = f"{day_text(episode.time.date())}: " if episode.time is not None else ""
        answer = replies.get(episode.tick)
        refs = [r for r in (episode.ref, answer.ref if answer is not None else None) if r]
        ref = f" ({'turns' if len(refs) > 1 else 'turn'} {', '.join(refs)})" if refs else ""
        parts.append(f"{day}{clause}{ref}")
    speakers = [e.speaker for e, _ in entries if e.speaker]
    who = max(dict.fromkeys(speakers), key=speakers.count) if speakers else "the golem"
    return f"{subject[:1].upper()}{subject[1:]}: what {who} brought up about it, in order: {'; '.join(parts)}."


def timeline_night(steps: Steps, night: Sequence[Episode]) -> list[Event]:
    """The timelines of the subjects the night's user turns name that an earlier day named too (the
    most days first, at most ``timelines``)."""
    ctx = steps.ctx
    settings = ctx.settings.consolidation
    if settings.timelines <= 0 or ctx.memory is None or ctx.night is None or not night:
        return []
    # The index up to the night (as threads read it: reading on past it here would make the
    # threads' read start again), and the night's own user turns looked up in it.
    # A subject first named tonight counts too: a first night over a long history is all one night.
    topics = ctx.memory.mentions(ctx.night[0]).topics
    known = set(topics)
    tonight: dict[str, list[int]] = {}
    for episode in night:
        if _said_by_user(episode):
            known.update(named_topics(episode.summary))
            for key in topic_phrases(episode.summary) & known:
                tonight.setdefault(key, []).append(episode.tick)
    columns = ctx.memory.columns()
    wanted: list[tuple[str, list[Episode]]] = []
    for key, ticks in tonight.items():
        days = _firsts([*topics.get(key, ()), *ticks], columns)
        if len(days) > 1:
            wanted.append((key, days))
    wanted.sort(key=lambda kd: (-len(kd[1]), kd[0]))
    out: list[Event] = []
    for key, days in wanted[: settings.timelines]:
        if steps.stopped:
            break
        # Twice the entries are read, as not every turn says what it brought up (a bare question):
        # the timeline keeps an even spread of those that do.
        turns = [_opening(e) for e in spread(days, 2 * settings.timeline_entries)]
        result = steps.ask(
            f"timeline:{key}",
            "timeline",
            _PARSE,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            given=TaskInputs(episodes=tuple(turns), subject=key),
            episodes=said_lines(turns),
        )
        made = _timeline(steps, key, turns, result, settings.timeline_entries, columns)
        if made is not None:
            out.append(made)
    return out


def _timeline(  # noqa: PLR0913, PLR0917 - one timeline's parts
    steps: Steps, key: str, turns: Sequence[Episode], result: TimelineResult | None, most: int, columns: EpisodeColumns
) -> Event | None:
    """The timeline of the entries that name a turn they were shown, in the turns' order (at most
    ``most``, spread evenly), or None with fewer than two (one turn is no order). Each entry stands
    for its exchange: the turn that brought it up and the reply to it, where a "how has it
    progressed" question finds what was said about it."""
    by_tick = {e.tick: e for e in turns}
    said: dict[int, str] = {}
    for entry in result.timeline if result is not None else ():
        clause = " ".join(entry.text.split()).rstrip(".;")
        if entry.tick in by_tick and clause:
            said.setdefault(entry.tick, clause)
    entries = spread([(e, said[e.tick]) for e in turns if e.tick in said], most)
    if len(entries) < 2:
        return None
    replies = {e.tick: r for e, _ in entries if (r := _reply(columns, e)) is not None}
    ticks = [t for e, _ in entries for t in (e.tick, *((replies[e.tick].tick,) if e.tick in replies else ()))]
    timeline = DreamObservation(
        cycle_id=steps.ctx.cycle_id,
        kind="timeline",
        text=timeline_text(key, entries, replies)[:_TEXT],
        subject=key[:_KEY],
        source_episode_ticks=tuple(ticks),
        key=f"timeline:{key}"[:_KEY],
    )
    return steps.made(timeline)
