"""Hypnagogic onset: the waking residue dissolves into a few raised-temperature partial
completions; a cheap low-temperature judge keeps the novel ones as creative predictions."""

from __future__ import annotations

from oneiros.episodes._fold import columns_of
from oneiros.events._content import HypnagogicPrediction, WakingResidue
from oneiros.events._types import Episode, Event
from oneiros.generators._offline import keywords
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import NoveltyResult, parse_partial
from oneiros.phases._common import Steps, episode_lines, json_parser
from oneiros.phases._context import PhaseContext

__all__ = ["onset", "waking_residue"]


def waking_residue(episodes: list[Episode], count: int) -> tuple[list[Episode], str]:
    """The latest ``count`` episodes and the incubation theme: the main word of the most surprising
    of them (Bardo's targeted dream incubation takes it from recent high-surprise episodes)."""
    latest = sorted(episodes, key=lambda e: e.tick)[-count:] if count > 0 else []
    if not latest:
        return [], ""
    surprising = max(latest, key=lambda e: (abs(e.outcome.surprise), e.tick))
    words = keywords(surprising.said(), 1)
    return latest, words[0] if words else ""


def onset(ctx: PhaseContext) -> list[Event]:
    settings = ctx.settings.onset
    count = settings.residue_episodes
    latest = columns_of(ctx.episodes)[-count:] if count > 0 else []  # tick order: the latest last
    residue, theme = waking_residue(latest, count)
    if not residue:
        return []
    outputs: list[Event] = [
        WakingResidue(cycle_id=ctx.cycle_id, episode_ticks=tuple(e.tick for e in residue), theme=theme)
    ]
    steps = Steps(ctx)
    # The ThalamicGate (Bardo) cuts off market data as sleep begins: the residue reaches
    # the partials and their judge as what happened, without times and figures.
    lines = episode_lines(residue, figures=False)
    partials: list[str] = []
    keys: list[str] = []
    for index in range(settings.partials):
        if steps.stopped:
            break
        partial = steps.ask(
            f"partial:{index}",
            "partial",
            parse_partial,
            temperature=settings.partial_temperature,
            max_tokens=settings.partial_max_tokens,
            given=TaskInputs(episodes=tuple(residue), theme=theme),
            theme=theme or "none",
            episodes=lines,
        )
        if partial is not None:
            partials.append(partial)
            keys.append(steps.last_key)
    if partials and not steps.stopped:
        judged = steps.ask(
            "novelty",
            "novelty",
            json_parser("novelty", NoveltyResult),
            temperature=settings.judge_temperature,
            max_tokens=settings.judge_max_tokens,
            given=TaskInputs(episodes=tuple(residue)),
            inputs=tuple(partials),
            episodes=lines,
            fragments="\n".join(f"{i + 1}. {p}" for i, p in enumerate(partials)),
        )
        span = settings.max_confidence - settings.min_confidence
        for fragment, key, novelty in zip(partials, keys, judged.scores if judged else [], strict=False):
            if novelty >= settings.novelty_threshold:
                prediction = HypnagogicPrediction(
                    cycle_id=ctx.cycle_id,
                    fragment=fragment,
                    novelty=novelty,
                    confidence=round(settings.min_confidence + span * novelty, 4),
                )
                # The fragment is the partial's text: its call, not the judge's.
                outputs.append(steps.made(prediction, key))
    return outputs + steps.closing()
