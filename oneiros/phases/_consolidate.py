"""Consolidation: the night's episodes restated as facts (NREM), and joined to earlier nights by
subject (integration), as ``DreamObservation`` outputs that recall ranks beside the episodes.

The night is what the golem recorded since the last completed cycle began (``PhaseContext.night``),
so a cycle reads its own episodes, never the whole history again. Every output names the episodes
it restates (``source_episode_ticks``, at most ``max_sources`` for an observation and
``thread_sources`` for a thread), and comes from a generator step like any other (the offline
generator writes them by rule, a model from the same prompts), so it counts against the phase's
budget and its lineage names the call. Observations are not staged: they are facts about the
record for recall and the observations page, not hypotheses for the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from oneiros._text import entities
from oneiros.episodes._fold import EpisodeMemory
from oneiros.episodes._sessions import is_tool_record
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, Event
from oneiros.generators._lines import said_lines
from oneiros.generators._protocol import GenerationRequest, TaskInputs
from oneiros.generators._results import ObservationResult, SummaryResult, ThreadResult
from oneiros.phases._common import Steps, json_parser

__all__ = ["observe_night", "thread_night"]

_TEXT = 16_384
_SUBJECT = 128
_THREAD_SCAN = 1_024
"""Threads start from the night's latest this many episodes: a first night over a long history
(every episode is its night) would otherwise be read whole for a few threads."""


def _about(day: str | None) -> datetime | None:
    """The day an observation says something happened, as the start of that day (UTC)."""
    if not day:
        return None
    try:
        return datetime.fromisoformat(day[:10]).replace(tzinfo=UTC)
    except ValueError:
        return None


def _sources(ticks: Sequence[int], known: set[int], most: int) -> tuple[int, ...]:
    """The ticks an output names that are among the episodes it was shown, at most ``most``."""
    return tuple(t for t in dict.fromkeys(ticks) if t in known)[:most]


def observe_night(steps: Steps, night: Sequence[Episode]) -> list[Event]:
    """The night's episodes, a batch at a time, restated as observations (and summarised, when
    summaries are on). A batch the phase's budget cannot take whole is halved until it fits, so
    what the budget has left goes to as much of the night as it covers."""
    ctx = steps.ctx
    settings = ctx.settings.consolidation
    if not settings.observations and not settings.summaries:
        return []
    # A tool's call or output is a record of work, not a statement: restated, a long output took
    # the whole night's budget and left the user's own words unread.
    night = [e for e in night if not is_tool_record(e)]
    out: list[Event] = []
    start = 0
    while start < len(night) and not steps.stopped:
        size = settings.batch
        request = _observe_request(steps, night, start, size)
        while size > 1 and request is not None and not steps.fits(request):
            size = max(1, size // 2)
            request = _observe_request(steps, night, start, size)
        batch = night[start : start + size]
        before = night[start - 1] if start else None
        known = {e.tick for e in batch} | ({before.tick} if before is not None else set())
        if request is not None:
            out.extend(_observations(steps, steps.ask_request(request, _OBSERVE), known))
        if settings.summaries and not steps.stopped:
            out.extend(_summaries(steps, start, batch, known))
        start += size
    return out


_OBSERVE = json_parser("observe", ObservationResult)


def _observe_request(steps: Steps, night: Sequence[Episode], start: int, size: int) -> GenerationRequest | None:
    """The observe step of the ``size`` episodes from ``start`` (None when observations are off),
    with the episode before them as context for what they answer."""
    settings = steps.ctx.settings.consolidation
    if not settings.observations:
        return None
    batch = night[start : start + size]
    before = night[start - 1] if start else None
    # The size is part of the key: a step halved to fit what a retried phase has left is another call.
    return steps.request(
        f"observe:{start}+{len(batch)}",
        "observe",
        temperature=settings.temperature,
        max_tokens=settings.tokens_per_episode * len(batch),
        given=TaskInputs(episodes=tuple(batch), before=before, salient=settings.salient),
        episodes=said_lines(batch, before),
        sources=settings.max_sources,
    )


def _observations(steps: Steps, result: ObservationResult | None, known: set[int]) -> list[Event]:
    """The facts of one observe step, each naming only ticks it was shown, at most ``max_sources``."""
    ctx, settings = steps.ctx, steps.ctx.settings.consolidation
    out: list[Event] = []
    for fact in result.observations if result is not None else ():
        ticks = _sources(fact.ticks, known, settings.max_sources)
        if ticks:
            observation = DreamObservation(
                cycle_id=ctx.cycle_id,
                kind="observation",
                text=fact.text[:_TEXT],
                subject=(fact.subject or "")[:_SUBJECT] or None,
                about=_about(fact.about),
                source_episode_ticks=ticks,
                priority=fact.priority,
                key=" ".join(fact.key.split())[:_SUBJECT] or None if fact.key else None,
            )
            out.append(steps.made(observation))
    return out


def _summaries(steps: Steps, index: int, batch: Sequence[Episode], known: set[int]) -> list[Event]:
    """One summary per speaker of the batch (one for the golem's own doing)."""
    ctx, settings = steps.ctx, steps.ctx.settings.consolidation
    parse = json_parser("summary", SummaryResult)
    out: list[Event] = []
    for speaker in dict.fromkeys(e.speaker for e in batch):
        mine = [e for e in batch if e.speaker == speaker]
        result = steps.ask(
            f"summary:{index}:{speaker or 'self'}",
            "summary",
            parse,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            given=TaskInputs(episodes=tuple(mine), cap=settings.summary_sources),
            episodes=said_lines(mine),
        )
        ticks = _sources(result.ticks, known, settings.summary_sources) if result is not None else ()
        if result is not None and result.summary.strip() and ticks:
            summary = DreamObservation(
                cycle_id=ctx.cycle_id,
                kind="summary",
                text=result.summary[:_TEXT],
                subject=(speaker or "")[:_SUBJECT] or None,
                source_episode_ticks=ticks,
            )
            out.append(steps.made(summary))
    return out


def thread_night(steps: Steps, night: Sequence[Episode]) -> list[Event]:
    """Threads: for the subjects the night (its latest ``_THREAD_SCAN`` episodes) names that earlier
    nights named too (the rarest first, at most ``threads``), one dated timeline of the latest
    earlier episodes and the night's first."""
    ctx = steps.ctx
    settings = ctx.settings.consolidation
    if settings.threads <= 0 or ctx.memory is None or ctx.night is None or not night:
        return []
    out = _threads(steps, night, ctx.memory, ctx.night[0])
    # The night read into the index now, once, so the next night starts from it (and the snapshot
    # after this phase keeps it): no later cycle reads these episodes for threads again.
    ctx.memory.mentions(ctx.night[1])
    return out


def _threads(steps: Steps, night: Sequence[Episode], memory: EpisodeMemory, start: int) -> list[Event]:
    ctx = steps.ctx
    settings = ctx.settings.consolidation
    mentions = memory.mentions(start)
    latest = night[-_THREAD_SCAN:] if len(night) > _THREAD_SCAN else list(night)
    speakers = {e.speaker for e in latest if e.speaker}
    first: dict[str, tuple[Episode, str]] = {}
    for episode in latest:
        for key, form in entities(episode.said(), episode.tags).items():
            if key in mentions.latest and key not in first and not mentions.is_speaker(key, speakers):
                first[key] = (episode, mentions.shown.get(key, form))
    rarest = sorted(first, key=lambda key: mentions.counts.get(key, 0))[: settings.threads]
    columns = memory.columns()
    parse = json_parser("thread", ThreadResult)
    out: list[Event] = []
    for key in rarest:
        if steps.stopped:
            break
        episode, shown = first[key]
        earlier = [columns[p] for t in mentions.latest[key] if (p := columns.position(t)) is not None]
        joined = [*earlier[-(settings.thread_sources - 1) :], episode]
        result = steps.ask(
            f"thread:{key}",
            "thread",
            parse,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            given=TaskInputs(episodes=tuple(joined), subject=shown),
            episodes=said_lines(joined),
        )
        if result is not None and result.thread.strip():
            thread = DreamObservation(
                cycle_id=ctx.cycle_id,
                kind="thread",
                text=result.thread[:_TEXT],
                subject=shown[:_SUBJECT],
                source_episode_ticks=tuple(dict.fromkeys(e.tick for e in joined)),
            )
            out.append(steps.made(thread))
    return out
