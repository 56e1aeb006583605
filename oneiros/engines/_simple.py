"""First phase engines: replay by utility, hypotheses and counterfactuals from replayed batches,
insights from what recurs across batches."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from oneiros.engines._context import PhaseContext, PhaseEngine
from oneiros.events import (
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    DreamPhaseName,
    Episode,
    Event,
    ReplayBatch,
)
from oneiros.generators import GenerationRequest

__all__ = ["ENGINES", "utility"]


def utility(episode: Episode, boost: float) -> float:
    """gain x need (Bardo 001_*): gain from the outcome's surprise, PnL and regret and the
    prediction error; need from significance. High dream priority multiplies it by ``boost``."""
    outcome = episode.outcome
    gain = abs(outcome.surprise) + abs(outcome.pnl) * 10 + abs(outcome.regret) + abs(episode.prediction_error)
    need = 0.5 + episode.significance
    score = gain * need
    return score * boost if episode.dream_priority == "high" else score


def _onset(_ctx: PhaseContext) -> list[Event]:
    return []


def _nrem(ctx: PhaseContext) -> list[Event]:
    settings = ctx.settings
    ranked = sorted(
        (e for e in ctx.episodes if utility(e, settings.high_priority_boost) > settings.min_utility),
        key=lambda e: (-utility(e, settings.high_priority_boost), e.tick),
    )
    chosen = ranked[: settings.batch_size * settings.max_batches]
    by_regime: dict[str, list[Episode]] = {}
    for episode in chosen:
        by_regime.setdefault(episode.regime, []).append(episode)
    outputs: list[Event] = []
    for index, (regime, group) in enumerate(sorted(by_regime.items())):
        if len(outputs) >= settings.max_batches:
            break
        batch = sorted(group[: settings.batch_size], key=lambda e: e.tick)
        generation = ctx.generate(
            GenerationRequest(
                call_key=f"{ctx.cycle_id}:nrem:{index}",
                phase="nrem",
                task="pattern",
                prompt=f"Find the pattern connecting these {regime} episodes.",
                fragments=tuple(e.summary for e in batch),
                temperature=0.3,
            )
        )
        if generation is None:
            break
        # Credit flows backward from known outcomes (reverse replay); without outcomes, forward.
        direction: Literal["forward", "reverse"] = "reverse" if any(e.outcome.pnl for e in batch) else "forward"
        outputs.append(
            ReplayBatch(
                cycle_id=ctx.cycle_id,
                episode_ticks=tuple(e.tick for e in batch),
                pattern=generation.text,
                direction=direction,
            )
        )
    return outputs


def _rem(ctx: PhaseContext) -> list[Event]:
    by_tick = {e.tick: e for e in ctx.episodes}
    outputs: list[Event] = []
    batches = [o for o in ctx.cycle_outputs if isinstance(o, ReplayBatch)]
    for index, batch in enumerate(batches):
        episodes = [by_tick[t] for t in batch.episode_ticks if t in by_tick]
        if not episodes:
            continue
        seed = max(episodes, key=lambda e: (abs(e.outcome.pnl) + e.arousal, -e.tick))
        fragments = (seed.summary, *(e.summary for e in episodes if e is not seed), batch.pattern)
        hypothesis = ctx.generate(
            GenerationRequest(
                call_key=f"{ctx.cycle_id}:rem:{index}:hypothesis",
                phase="rem",
                task="hypothesis",
                prompt="Propose a strategy hypothesis these episodes suggest.",
                fragments=fragments,
                temperature=ctx.settings.exploration_temperature,
            )
        )
        if hypothesis is None:
            break
        outputs.append(DreamHypothesis(cycle_id=ctx.cycle_id, hypothesis=hypothesis.text, seed_episode_tick=seed.tick))
        counterfactual = ctx.generate(
            GenerationRequest(
                call_key=f"{ctx.cycle_id}:rem:{index}:counterfactual",
                phase="rem",
                task="counterfactual",
                prompt=f"What if the decision in this episode had been different? {seed.summary}",
                fragments=(seed.summary, batch.pattern),
                temperature=ctx.settings.exploration_temperature,
            )
        )
        if counterfactual is None:
            break
        outcome, _, lesson = counterfactual.text.partition(" | lesson: ")
        outputs.append(
            DreamCounterfactual(
                cycle_id=ctx.cycle_id,
                hypothesis=hypothesis.text,
                outcome=outcome,
                lesson=lesson or outcome,
                confidence=ctx.settings.hypothesis_confidence,
            )
        )
    return outputs


def _integration(ctx: PhaseContext) -> list[Event]:
    """A tag that recurs in two or more replay batches crystallizes into an insight."""
    by_tick = {e.tick: e for e in ctx.episodes}
    seen_in: Counter[str] = Counter()
    ticks_for: dict[str, list[int]] = {}
    for batch in (o for o in ctx.cycle_outputs if isinstance(o, ReplayBatch)):
        tags = {tag for t in batch.episode_ticks if t in by_tick for tag in by_tick[t].tags}
        for tag in tags:
            seen_in[tag] += 1
            ticks_for.setdefault(tag, []).extend(t for t in batch.episode_ticks if tag in by_tick[t].tags)
    outputs: list[Event] = []
    for index, (tag, batches) in enumerate(sorted(seen_in.items(), key=lambda kv: (-kv[1], kv[0]))):
        if batches < 2 or index >= 3:
            break
        ticks = tuple(sorted(ticks_for[tag]))
        generation = ctx.generate(
            GenerationRequest(
                call_key=f"{ctx.cycle_id}:integration:{tag}",
                phase="integration",
                task="insight",
                prompt=f"State the insight behind '{tag}' recurring across regimes.",
                fragments=tuple(by_tick[t].summary for t in ticks),
                temperature=0.2,
            )
        )
        if generation is None:
            break
        outputs.append(
            DreamInsight(
                cycle_id=ctx.cycle_id,
                insight=f"[{tag}] {generation.text}",
                source_episode_ticks=ticks,
                confidence=ctx.settings.insight_confidence,
            )
        )
    return outputs


def _return(_ctx: PhaseContext) -> list[Event]:
    return []


ENGINES: dict[DreamPhaseName, PhaseEngine] = {
    "hypnagogic_onset": _onset,
    "nrem": _nrem,
    "rem": _rem,
    "integration": _integration,
    "hypnopompic_return": _return,
}
