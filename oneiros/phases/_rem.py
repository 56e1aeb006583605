"""REM imagination: counterfactuals on key decisions, creative recombination in Boden's three modes,
threat simulation, emotional depotentiation, and a dream over distant memory pairs."""

from __future__ import annotations

from typing import Final

import numpy as np

from oneiros.episodes._fold import EpisodeMemory, columns_of
from oneiros.episodes._vectors import make_embedder
from oneiros.events._content import (
    CreativeMode,
    DreamFragments,
    EpisodeDepotentiated,
    StrategyHypothesis,
    ThreatSimulated,
)
from oneiros.events._types import DreamCounterfactual, DreamHypothesis, Episode, Event, ReplayBatch
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import (
    CounterfactualResult,
    DepotentiationResult,
    DreamResult,
    HypothesisResult,
    ThreatResult,
    parse_dream,
)
from oneiros.phases._common import Steps, episode_line, episode_lines, json_parser
from oneiros.phases._context import PhaseContext
from oneiros.phases._pairs import select_distant_pairs

__all__ = ["MODES", "rem"]

MODES: Final[tuple[CreativeMode, ...]] = ("combinational", "exploratory", "transformational")


def _replayed(ctx: PhaseContext) -> list[Episode]:
    by_tick = columns_of(ctx.episodes).by_tick()
    ticks: dict[int, None] = {}
    for event in ctx.cycle_outputs:
        if isinstance(event, ReplayBatch) and event.direction == "forward":
            ticks.update(dict.fromkeys(event.episode_ticks))
    return [by_tick[t] for t in ticks if t in by_tick]


def rem(ctx: PhaseContext) -> list[Event]:
    steps = Steps(ctx)
    replayed = _replayed(ctx)
    full = not (ctx.tier == "core" and ctx.settings.rem.core_tier_limits)
    outputs: list[Event] = []
    outputs += _counterfactuals(steps, replayed)
    if full:
        outputs += _creative(steps, replayed)
        outputs += _threats(steps, replayed)
        if ctx.settings.rem.depotentiation:
            outputs += _depotentiate(steps, replayed)
    outputs += _dream(steps)
    return outputs + steps.closing()


def _counterfactuals(steps: Steps, replayed: list[Episode]) -> list[Event]:
    ctx, settings = steps.ctx, steps.ctx.settings
    depth = settings.rem.counterfactual_depth
    seeds = sorted(replayed, key=lambda e: (-(abs(e.outcome.pnl) + e.arousal), e.tick))[
        : settings.rem.counterfactual_seeds
    ]
    parse = json_parser("counterfactual", CounterfactualResult)
    out: list[Event] = []
    for seed in seeds:
        for branch in range(1, depth + 1):
            if steps.stopped:
                return out
            result = steps.ask(
                f"counterfactual:{seed.tick}:{branch}",
                "counterfactual",
                parse,
                temperature=settings.exploration_temperature,
                max_tokens=settings.rem.max_tokens,
                given=TaskInputs(episodes=(seed,), branch=branch),
                episode=episode_line(seed),
                depth=depth,
            )
            if result is None:
                continue
            out.append(
                steps.made(
                    DreamHypothesis(cycle_id=ctx.cycle_id, hypothesis=result.hypothesis, seed_episode_tick=seed.tick)
                )
            )
            out.append(
                steps.made(
                    DreamCounterfactual(
                        cycle_id=ctx.cycle_id,
                        hypothesis=result.hypothesis,
                        outcome=result.outcome,
                        lesson=result.lesson,
                        confidence=settings.hypothesis_confidence,
                    )
                )
            )
    return out


def _creative(steps: Steps, replayed: list[Episode]) -> list[Event]:
    ctx, settings = steps.ctx, steps.ctx.settings
    pool = sorted(replayed or list(ctx.episodes), key=lambda e: e.tick)
    if not pool:
        return []
    parse = json_parser("hypothesis", HypothesisResult)
    out: list[Event] = []
    for session in range(settings.rem.creative_sessions):
        rng = steps.rng("creative", str(session))
        for mode in MODES:
            if steps.stopped:
                return out
            # Seed elements from different epochs: spread the draw over the whole time range.
            seeds = sorted(rng.sample(pool, min(3, len(pool))), key=lambda e: e.tick)
            result = steps.ask(
                f"creative:{session}:{mode}",
                "hypothesis",
                parse,
                temperature=settings.exploration_temperature,
                max_tokens=settings.rem.max_tokens,
                given=TaskInputs(episodes=tuple(seeds), mode=mode),
                episodes=episode_lines(seeds),
            )
            if result is not None:
                out.append(
                    steps.made(
                        StrategyHypothesis(
                            cycle_id=ctx.cycle_id,
                            mode=mode,
                            hypothesis=result.hypothesis,
                            test=result.test,
                            seed_episode_ticks=tuple(e.tick for e in seeds),
                            confidence=settings.hypothesis_confidence,
                        )
                    )
                )
    return out


def _threats(steps: Steps, replayed: list[Episode]) -> list[Event]:
    ctx, settings = steps.ctx, steps.ctx.settings
    kinds = settings.rem.threat_kinds
    # Real threat exposure amplifies the simulation (Revonsuo via Bardo): seed with losses first.
    pool = sorted(replayed or list(ctx.episodes), key=lambda e: (e.outcome.pnl, -e.arousal, e.tick))
    if not pool or not kinds:
        return []
    parse = json_parser("threat", ThreatResult)
    out: list[Event] = []
    for index in range(settings.rem.threat_scenarios):
        if steps.stopped:
            break
        kind = kinds[index % len(kinds)]
        seeds = pool[index : index + 2] or pool[:2]
        result = steps.ask(
            f"threat:{index}",
            "threat",
            parse,
            temperature=settings.exploration_temperature,
            max_tokens=settings.rem.max_tokens,
            given=TaskInputs(episodes=tuple(seeds), kind=kind),
            episodes=episode_lines(seeds),
        )
        if result is not None:
            out.append(
                steps.made(
                    ThreatSimulated(
                        cycle_id=ctx.cycle_id,
                        kind=kind,
                        scenario=result.scenario,
                        response=result.response,
                        severity=result.severity,
                        seed_episode_ticks=tuple(e.tick for e in seeds),
                    )
                )
            )
    return out


def _depotentiate(steps: Steps, replayed: list[Episode]) -> list[Event]:
    ctx, rem_settings = steps.ctx, steps.ctx.settings.rem
    charged = sorted(
        (e for e in replayed if e.arousal >= rem_settings.depotentiation_threshold), key=lambda e: (-e.arousal, e.tick)
    )
    parse = json_parser("depotentiate", DepotentiationResult)
    out: list[Event] = []
    for episode in charged:
        if steps.stopped:
            break
        result = steps.ask(
            f"depotentiate:{episode.tick}",
            "depotentiate",
            parse,
            temperature=ctx.settings.exploration_temperature,
            max_tokens=rem_settings.max_tokens,
            given=TaskInputs(episodes=(episode,)),
            episode=episode_line(episode),
        )
        if result is None:
            continue
        reduction = steps.rng("depotentiate", str(episode.tick)).uniform(
            rem_settings.depotentiation_min, rem_settings.depotentiation_max
        )
        out.append(
            steps.made(
                EpisodeDepotentiated(
                    cycle_id=ctx.cycle_id,
                    episode_tick=episode.tick,
                    arousal_before=episode.arousal,
                    arousal_after=round(max(0.0, episode.arousal - reduction), 6),
                    lesson=result.lesson,
                )
            )
        )
    return out


def _dream(steps: Steps) -> list[Event]:
    """Bumblebee's dream: distant, dissimilar, significant memory pairs into FRAGMENTS and a THREAD."""
    ctx, rem_settings = steps.ctx, steps.ctx.settings.rem
    episodes = columns_of(ctx.episodes)
    if len(episodes) < 2 or steps.stopped:
        return []
    memory = ctx.memory if ctx.memory is not None and ctx.memory.columns() is episodes else EpisodeMemory(episodes)
    vectors = memory.vectors(make_embedder(ctx.settings.embedder), ctx.settings.embedder)
    seed = steps.rng("pairs").getrandbits(64)
    draw = select_distant_pairs(
        episodes.seconds, episodes.significance, vectors, rem_settings.pairs, np.random.default_rng(seed)
    )
    if not draw.pairs:
        return []
    pairs = [(episodes[a], episodes[b]) for a, b in draw.pairs]
    text = "\n".join(f"- {episode_line(a)}\n  and {episode_line(b)}" for a, b in pairs)

    def parse(call_key: str, raw: str) -> DreamResult:
        return parse_dream(call_key, raw, most=rem_settings.max_fragments)

    result = steps.ask(
        "dream",
        "dream",
        parse,
        temperature=rem_settings.dream_temperature,
        max_tokens=rem_settings.dream_max_tokens,
        given=TaskInputs(episodes=tuple(e for pair in pairs for e in pair)),
        name=rem_settings.entity_name,
        pairs=text,
    )
    if result is None:
        return []
    return [
        steps.made(
            DreamFragments(
                cycle_id=ctx.cycle_id,
                pairs=tuple((a.tick, b.tick) for a, b in pairs),
                fragments=result.fragments,
                thread=result.thread,
                fallback=draw.fallback,
            )
        )
    ]
