"""NREM: replay, episodes chosen by utility (gain x need) with diversity slots, replayed in batches
forward, in reverse (credit assignment) and perturbed, then triaged and strengthened; then the
night's episodes restated as observations (``_consolidate.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import repeat

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros.episodes._fold import columns_of, episode_time
from oneiros.events._content import CreditAssigned, EpisodeTriaged, ReplayStrengthened, TriageDecision
from oneiros.events._types import Episode, Event, ReplayBatch
from oneiros.generators._protocol import Task, TaskInputs
from oneiros.generators._results import PatternResult
from oneiros.phases._common import Steps, episode_lines, json_parser
from oneiros.phases._consolidate import observe_night
from oneiros.phases._context import PhaseContext
from oneiros.phases._contradiction import contradiction_night
from oneiros.phases._profile import profile_night
from oneiros.settings._cycle import EngineSettings

__all__ = ["ReplayPick", "batches", "gain", "need", "nrem", "select_replay", "triage", "utility"]

_DAY = 86_400.0


def gain(episode: Episode, pnl_scale: float = 10.0) -> float:
    """Prediction error magnitude (Bardo): surprise, PnL magnitude, regret and prediction error."""
    o = episode.outcome
    return abs(o.surprise) + abs(o.pnl) * pnl_scale + abs(o.regret) + abs(episode.prediction_error)


def need(
    episode: Episode,
    *,
    current_regime: str | None,
    age_days: float,
    half_life_days: float,
    weights: tuple[float, float, float] = (0.5, 1 / 3, 1 / 6),
) -> float:
    """How likely the episode's situation is to come back (Bardo: regime match, recency),
    weighted with its significance by ``weights``."""
    regime = 1.0 if current_regime is None or episode.regime == current_regime else 0.0
    recency = 0.5 ** (max(0.0, age_days) / half_life_days) if half_life_days > 0 else 1.0
    w_regime, w_recency, w_significance = weights
    return w_regime * regime + w_recency * recency + w_significance * episode.significance


def utility(episode: Episode, boost: float, need_value: float | None = None, pnl_scale: float = 10.0) -> float:
    """gain x need (Bardo). Without a ``need_value``, need is ``0.5 + significance``. High
    dream priority multiplies the score by ``boost``."""
    need_term = 0.5 + episode.significance if need_value is None else need_value
    score = gain(episode, pnl_scale) * need_term
    return score * boost if episode.dream_priority == "high" else score


class ReplayPick(msgspec.Struct, frozen=True, kw_only=True):
    episode: Episode
    utility: float
    reason: str
    """``utility``, or the diversity slot it filled: ``regime``, ``oldest`` or ``arousal``."""


def select_replay(episodes: Sequence[Episode], settings: EngineSettings) -> list[ReplayPick]:
    """The replay set: the top utilities above the floor, plus up to 20% of the slots for diversity
    (one high-arousal episode, one from the oldest third, one per regime of the last 30 days).

    Scores every episode as arrays (the same arithmetic, in the same order, as ``utility`` and
    ``need`` on one episode) and decodes only the episodes picked."""
    cols = columns_of(episodes)
    if not len(cols):
        return []
    nrem = settings.nrem
    ticks, micros = cols.ticks, cols.micros
    now = int(micros.max())
    latest = int(np.lexsort((ticks, micros))[-1])
    current = cols.regime_codes[latest]
    age_days = (now - micros).astype(np.float64) / 1e6 / _DAY
    w_regime, w_recency, w_significance = nrem.need_weights
    regime = np.where(cols.regime_codes == current, 1.0, 0.0)
    if nrem.recency_half_life_days > 0:
        # The C library's pow, element by element, as ``need`` computes it: NumPy's vectorised
        # pow may differ in the last bit, and that bit can reorder the ranking.
        exponents = np.maximum(age_days, 0.0) / nrem.recency_half_life_days
        recency = np.fromiter(map(math.pow, repeat(0.5), exponents.tolist()), np.float64, len(cols))
    else:
        recency = np.ones(len(cols))
    need_values = w_regime * regime + w_recency * recency + w_significance * cols.significance
    gains = np.abs(cols.surprise) + np.abs(cols.pnl) * nrem.pnl_scale + np.abs(cols.regret)
    gains = gains + np.abs(cols.prediction_error)
    scores = gains * need_values
    scores = np.where(cols.high, scores * settings.high_priority_boost, scores)
    slots = settings.batch_size * settings.max_batches
    diversity_slots = math.ceil(slots * nrem.diversity_share)
    eligible = np.flatnonzero(scores > settings.min_utility)
    ranked = eligible[np.lexsort((ticks[eligible], -scores[eligible]))]
    chosen: list[int] = ranked[: slots - diversity_slots].tolist()
    reasons = ["utility"] * len(chosen)
    taken = np.zeros(len(cols), bool)
    taken[chosen] = True

    def best(candidates: npt.NDArray[np.bool_], reason: str) -> None:
        rest = np.flatnonzero(candidates & ~taken)
        if len(rest) and len(chosen) < slots and sum(r != "utility" for r in reasons) < diversity_slots:
            pick = int(rest[np.lexsort((-ticks[rest], scores[rest]))[-1]])
            chosen.append(pick)
            reasons.append(reason)
            taken[pick] = True

    arousal = cols.arousal
    peak = arousal.max()
    best((arousal >= nrem.high_arousal) & (arousal == peak), "arousal")
    by_age = np.lexsort((ticks, micros))[: max(1, len(cols) // 3)]
    oldest = np.zeros(len(cols), bool)
    oldest[by_age] = True
    best(oldest, "oldest")
    recent = (now - micros).astype(np.float64) / 1e6 <= nrem.regime_window_days * _DAY
    covered = {cols.regime_of(p) for p in chosen}
    codes = {cols.regimes[int(c)]: int(c) for c in np.unique(cols.regime_codes[recent])}
    for name in sorted(set(codes) - covered):
        best(recent & (cols.regime_codes == codes[name]), "regime")
    return [
        ReplayPick(episode=cols[p], utility=float(scores[p]), reason=reason)
        for p, reason in zip(chosen, reasons, strict=True)
    ]


def batches(picks: Sequence[ReplayPick], settings: EngineSettings) -> list[list[ReplayPick]]:
    """The picks in time order, split into as few batches of at most ``batch_size`` as possible,
    sized evenly. No other split under that cap has a larger smallest batch, so Bardo's
    "batches of 5-10" holds by itself at the default size of 10 whenever there are 5 or more picks."""
    ordered = sorted(picks, key=lambda p: (episode_time(p.episode), p.episode.tick))
    if not ordered:
        return []
    count = math.ceil(len(ordered) / settings.batch_size)
    size, extra = divmod(len(ordered), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(ordered[start:end])
        start = end
    return out


def triage(pick: ReplayPick, settings: EngineSettings) -> tuple[TriageDecision, str]:
    """Preserve high utility, forget what the filter would have dropped, abstract the rest
    (Stickgold and Walker via Bardo)."""
    if pick.utility <= settings.min_utility:
        return "forget", f"utility {pick.utility:.3f} at or below {settings.min_utility}"
    if pick.utility >= settings.nrem.preserve_utility:
        return "preserve", f"utility {pick.utility:.3f} at or above {settings.nrem.preserve_utility}"
    return "abstract", "keep the rule, let the details go"


def nrem(ctx: PhaseContext) -> list[Event]:
    """The replay of the episodes that matter most, whenever they were recorded (a few calls),
    then the user's profile and the night's episodes restated as observations with what the phase's budget has left."""
    steps = Steps(ctx)
    outputs: list[Event] = []
    strength = dict(ctx.memory.strength) if ctx.memory is not None else {}
    rng = steps.rng("perturb")
    for index, batch in enumerate(batches(select_replay(ctx.episodes, ctx.settings), ctx.settings)):
        if steps.stopped:
            break
        outputs.extend(_replay(steps, index, batch, rng.random(), strength))
    # The profile before the restated turns: what the user stands by is read from fewer turns (the
    # user's only) and matters to every later answer, so a tight budget spends on it first.
    outputs.extend(profile_night(steps, ctx.night_episodes()))
    outputs.extend(observe_night(steps, ctx.night_episodes()))
    # After the observations, with what they left: a few calls (one a never-statement with turns to
    # weigh it against) that must not take a night's restated turns from it.
    outputs.extend(contradiction_night(steps, ctx.night_episodes()))
    return outputs + steps.closing()


def _replay(steps: Steps, index: int, batch: list[ReplayPick], draw: float, strength: dict[int, float]) -> list[Event]:
    """One batch forward, then in reverse where outcomes are known, then perturbed if ``draw``
    falls under the perturbation rate; a batch whose forward pass got no answer is not replayed."""
    ctx, settings = steps.ctx, steps.ctx.settings
    episodes = [p.episode for p in batch]
    parse = json_parser("pattern", PatternResult)
    # Every pass gives the generator the whole batch's summaries as its fragments.
    inputs = tuple(e.said() for e in episodes)

    def ask(key: str, task: Task, shown: list[Episode], **values: object) -> PatternResult | None:
        if steps.stopped:
            return None
        return steps.ask(
            f"{index}:{key}",
            task,
            parse,
            temperature=settings.nrem.temperature,
            max_tokens=settings.nrem.max_tokens,
            given=TaskInputs(episodes=tuple(shown)),
            inputs=inputs,
            episodes=episode_lines(shown),
            **values,
        )

    forward = ask("forward", "pattern", episodes)
    if forward is None:
        return []
    ticks = tuple(e.tick for e in episodes)
    out: list[Event] = [
        steps.made(
            ReplayBatch(cycle_id=ctx.cycle_id, episode_ticks=ticks, pattern=forward.pattern, direction="forward")
        )
    ]
    # Reverse replay propagates reward backward, so it runs where outcomes are known.
    known = sorted((e for e in episodes if e.outcome.pnl), key=lambda e: (-abs(e.outcome.pnl), e.tick))
    reverse = ask("reverse", "reverse", known) if known else None
    if reverse is not None:
        out.append(
            steps.made(
                ReplayBatch(
                    cycle_id=ctx.cycle_id,
                    episode_ticks=tuple(sorted(e.tick for e in known)),
                    pattern=reverse.pattern,
                    direction="reverse",
                )
            )
        )
        out.extend(_credit_chain(ctx.cycle_id, e) for e in known)
    perturbations = settings.nrem.perturbations
    if perturbations and draw < settings.nrem.perturbation_rate:
        perturbation = perturbations[
            int(draw / settings.nrem.perturbation_rate * len(perturbations)) % len(perturbations)
        ]
        perturbed = ask("perturbed", "perturbed", episodes, perturbation=perturbation)
        if perturbed is not None:
            out.append(
                steps.made(
                    ReplayBatch(
                        cycle_id=ctx.cycle_id,
                        episode_ticks=ticks,
                        pattern=f"[{perturbation}] {perturbed.pattern}",
                        direction="perturbed",
                    )
                )
            )
    delta = settings.nrem.strength_delta
    for pick in batch:
        tick = pick.episode.tick
        strength[tick] = strength.get(tick, 0.0) + delta
        decision, reason = triage(pick, settings)
        out.append(ReplayStrengthened(cycle_id=ctx.cycle_id, episode_tick=tick, delta=delta, strength=strength[tick]))
        out.append(
            EpisodeTriaged(
                cycle_id=ctx.cycle_id,
                episode_tick=tick,
                decision=decision,
                utility=round(pick.utility, 6),
                reason=reason,
            )
        )
    return out


def _credit_chain(cycle_id: str, episode: Episode) -> CreditAssigned:
    """Outcome, action, conditions, decision: the reverse trace Bardo describes, with credit
    scaled by how surprising the outcome was (reverse replay grows with reward magnitude)."""
    o = episode.outcome
    return CreditAssigned(
        cycle_id=cycle_id,
        episode_tick=episode.tick,
        credit=round(o.pnl * (1.0 + abs(o.surprise)), 6),
        chain=(
            f"outcome: {o.pnl:+.4f}, regret {o.regret:.3f}",
            f"action: {episode.said()}",
            f"conditions: {episode.regime} regime; {', '.join(episode.tags) or 'untagged'}",
            f"decision: tick {episode.tick}",
        ),
    )
