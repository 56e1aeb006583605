"""The offline generator's reasoning: replay patterns, credit assignment, perturbations,
counterfactuals with outcome and lesson, strategy hypotheses with their test, threats, depotentiation
and theme insights, each written as plain sentences about the episodes in the request.

The writers read the episodes the way a model would, from the prompt's episode lines (tick,
regime, tags, outcome); they speak of an episode by its tick and its own quoted summary, of an
outcome by its size, and reason from the figures (which trades gained, which lost, in which
regime). A prompt without episode lines still gets sentences, built from the request's fragments.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Final

import msgspec

from oneiros._deps import rng_for
from oneiros._text import rank
from oneiros.generators._lines import EpisodeLine, read_episode_lines
from oneiros.generators._phrases import FLAT, Scene, net, sentence, topics
from oneiros.generators._protocol import GenerationRequest

__all__ = ["REASONING", "Draft"]


def _json(**fields: object) -> str:
    return msgspec.json.encode(fields).decode()


class Draft:
    """What one call has to write with: the episodes its prompt names (or, failing that, its
    fragments), and the call's own random source."""

    def __init__(self, request: GenerationRequest, rng: random.Random, seed: int) -> None:
        self.request = request
        self.rng = rng
        self.seed = seed
        self.fragments = [f for f in request.fragments if f.strip()] or [request.prompt.strip() or request.task]
        lines = read_episode_lines(request.prompt) or [EpisodeLine(summary=f) for f in self.fragments]
        self.scenes = [Scene(line) for line in lines]

    def found(self, pattern: str, default: str) -> str:
        """The first group of ``pattern`` in the call key or else the prompt, or ``default``."""
        for text in (self.request.call_key, self.request.prompt):
            match = re.search(pattern, text)
            if match:
                return match.group(1).strip()
        return default


def _largest(scenes: Sequence[Scene]) -> Scene:
    return max(scenes, key=lambda s: (abs(s.pnl or 0.0), -(s.tick or 0)))


def _pattern(d: Draft) -> str:
    scenes = d.scenes
    known = [s for s in scenes if s.known]
    if len(scenes) == 1:
        s = scenes[0]
        tail = f"it ended in {s.result} in {s.market}" if s.known else "nothing else here echoes it"
        return _json(pattern=sentence(f"{s.ref} stands alone in this batch: {tail}, so it sets no pattern yet"))
    if not known:
        words = topics(scenes, 2)
        named = " and ".join(f'"{w}"' for w in words) or "the same ground"
        return _json(
            pattern=sentence(
                f"These {len(scenes)} episodes keep returning to {named}, most plainly in {scenes[0].quote}"
            )
        )
    shared = rank((t for s in scenes for t in s.tags), 1)
    members = [s for s in scenes if shared and shared[0] in s.tags]
    big = _largest(known)
    if len(members) >= 2:
        rest = [s for s in known if s not in members]
        first = f"{len(members)} of these {len(scenes)} episodes are tagged {shared[0]}, and they {net(members)}"
        if rest:
            first += f", while the other {len(rest) if len(rest) > 1 else 'one'} {net(rest)}"
    else:
        regime = rank((s.regime for s in scenes if s.regime), 1)
        count = sum(s.regime == regime[0] for s in scenes) if regime else 0
        first = f"These {len(scenes)} episodes share no tag and {net(known)}"
        if count >= 2:
            first += f"; {count} of them came in {Scene(EpisodeLine(summary='', regime=regime[0])).markets}"
    return _json(
        pattern=f"{sentence(first)} {sentence(f'The largest swing was {big.ref}, {big.result} in {big.market}')}"
    )


def _reverse(d: Draft) -> str:
    moved = sorted((s for s in d.scenes if s.sign), key=lambda s: (-abs(s.pnl or 0.0), s.tick or 0))
    if not moved:
        s = d.scenes[0]
        return _json(
            pattern=sentence(
                f"Working back from the outcomes, none moved far enough to assign credit; {s.ref} comes closest"
            )
        )
    first = moved[0]
    text = (
        f"Working back from the largest outcome, {first.result} at {first.ref}, the credit goes to the decision "
        f"to take that trade in {first.market}"
    )
    opposite = [s for s in moved[1:] if s.sign != first.sign]
    second = opposite[0] if opposite else (moved[1] if len(moved) > 1 else None)
    if second is not None:
        text += f"; {second.result} at {second.ref} traces back the same way, to its entry in {second.market}"
    return _json(pattern=sentence(text))


def _perturbed(d: Draft) -> str:
    # The engine names the perturbation in front of the pattern, so the sentence refers back to it.
    wins = sorted((s for s in d.scenes if s.sign > 0), key=lambda s: (s.pnl or 0.0, s.tick or 0))
    losses = sorted((s for s in d.scenes if s.sign < 0), key=lambda s: (s.pnl or 0.0, s.tick or 0))
    if wins:
        thin = wins[0]
        text = f"Under that stress the thinnest win here, {thin.ref}, {thin.result}, would likely have become a loss"
        if len(wins) > 1:
            wide = wins[-1]
            text += f", while {wide.result} at {wide.ref} had margin enough to survive it"
    elif losses:
        worst = losses[0]
        text = f"Under that stress every loss here would have grown, first {worst.ref}, already {worst.result}"
    else:
        text = f"Under that stress {d.scenes[0].ref} is the episode most likely to have gone the other way"
    return _json(pattern=sentence(text))


# Alternatives for a key decision, by how it turned out. Placeholders are Scene attributes.
_Alt = tuple[str, str, str]
_AFTER_LOSS: Final[tuple[_Alt, ...]] = (
    (
        "What if I had waited for confirmation before acting at {ref}?",
        "Waiting would likely have kept me out of most of the {amount} loss, at the price of a later "
        "entry had the move been real.",
        "In {market}, wait for confirmation before {trades}; a late entry costs less than the {amount} that {at} lost.",
    ),
    (
        "What if I had taken half the size at {ref}?",
        "The loss would have been about {half} instead of {amount}, and the setup would have taught the same lesson.",
        "Start {trades} in {market} at half size until they prove themselves; at full size {at} cost {amount}.",
    ),
    (
        "What if I had stayed out at {ref}?",
        "Staying out would have saved the whole {amount} loss and cost only the chance that the trade worked.",
        "Skip {trades} in {market} unless a second signal agrees; {at} shows what the first signal alone cost.",
    ),
    (
        "What if I had taken the opposite side at {ref}?",
        "The opposite position would likely have gained roughly the {amount} this one lost.",
        "When {trades} go against me in {market}, test the opposite side at small size before trusting the first idea.",
    ),
)
_AFTER_GAIN: Final[tuple[_Alt, ...]] = (
    (
        "What if I had held longer at {ref}?",
        "The {amount} gain could have grown while {the_market} kept its direction, and would have "
        "given some back at the first reversal.",
        "Let {trades} run while {the_market} holds its direction, and take profit when the regime "
        "changes rather than at a fixed target.",
    ),
    (
        "What if I had taken half the size at {ref}?",
        "The gain would have been about {half} instead of {amount}, for half the risk.",
        "Keep full size on {trades} in {market}; halving {at} would have given up {half}.",
    ),
    (
        "What if I had entered earlier at {ref}?",
        "An earlier entry would likely have caught more than the {amount}, with a higher chance of "
        "being stopped out before the move began.",
        "Enter {trades} in {market} at the first confirmation instead of waiting for more; at {at} "
        "the move paid {amount} from the start.",
    ),
    (
        "What if I had stayed out at {ref}?",
        "Staying out would have given up the {amount} gain, with nothing to show for the caution.",
        "Trust the signal on {trades} in {market}; at {at} it earned {amount}.",
    ),
)
_AFTER_NOTHING: Final[tuple[_Alt, ...]] = (
    (
        "What if I had acted sooner at {ref}?",
        "Acting sooner would likely have changed little, since the episode ended with no gain or loss to move.",
        "Record what follows {trades} in {market}, so the next decision like {at} has a measured outcome to weigh.",
    ),
    (
        "What if I had done the opposite at {ref}?",
        "The result would have hung on a move this episode never showed, so only the next episode "
        "like it can judge the alternative.",
        "Watch the next {trades} in {market} for what would have happened either way before changing the rule.",
    ),
)


def _fill(template: str, scene: Scene) -> str:
    return template.format_map({name: getattr(scene, name) for name in re.findall(r"\{(\w+)\}", template)})


def _counterfactual(d: Draft) -> str:
    scene = d.scenes[0]
    alternatives = {1: _AFTER_GAIN, -1: _AFTER_LOSS, 0: _AFTER_NOTHING}[scene.sign]
    # Branches of one decision take different alternatives: the offset depends on the decision
    # alone, the branch number (from the call key) moves along from it.
    offset = rng_for(d.seed, "counterfactual", scene.line.summary).randrange(len(alternatives))
    branch = int(d.found(r":(\d+)(?:/retry\d+)?$", str(d.rng.randrange(1, 5))))
    hypothesis, outcome, lesson = alternatives[(offset + branch - 1) % len(alternatives)]
    return _json(hypothesis=_fill(hypothesis, scene), outcome=_fill(outcome, scene), lesson=_fill(lesson, scene))


def _ends(d: Draft) -> tuple[Scene, Scene]:
    """The best and the worst outcome among the seeds, or the earliest and latest without figures."""
    known = [s for s in d.scenes if s.known]
    if len(known) >= 2:
        best = max(known, key=lambda s: (s.pnl or 0.0, s.tick or 0))
        worst = min(known, key=lambda s: (s.pnl or 0.0, s.tick or 0))
        if best is not worst:
            return best, worst
    return d.scenes[0], d.scenes[-1]


def _hypothesis(d: Draft) -> str:
    mode = d.found(r"creative:\d+:(\w+)", d.found(r"\((\w+) creativity\)", "combinational"))
    a, b = _ends(d)
    if mode == "exploratory":
        text = (
            f"Push the approach of {a.ref} to its boundary: it should keep its edge when "
            f"{a.the_market} moves twice as fast on half the liquidity"
        )
        if b is not a:
            text += f", and it will break first where {b.ref} did"
        test = (
            f"Replay {a.at} with doubled price moves and halved liquidity, and keep the approach only "
            f"if the result keeps its sign."
        )
    elif mode == "transformational":
        w = b if b.sign < 0 else a
        setup = f"the {w.tag()} setup" if w.tags else "the setup"
        text = (
            f"Challenge the assumption behind {w.ref}: {w.result} may say more about {w.the_market} than about "
            f"{setup} itself, so the regime, not the setup, should decide when to trade"
        )
        like = f"tagged {w.tag()}" if w.tags else f"like {w.at}"
        test = (
            f"Find two live episodes {like} in different regimes; if their outcomes differ in sign, "
            f"the regime is what matters."
        )
    else:
        entry = f"the {a.tag(b)} entry" if a.tags else "the entry"
        if b.sign < 0 and a.sign > 0:
            text = (
                f"Combine {entry} of {a.ref}, {a.result}, with a guard against what went wrong at {b.ref}, "
                f"{b.result}: enter the way {a.at} did, but stand aside when the conditions of {b.at} return"
            )
        else:
            exit_ = f"the {b.tag(a)} exit" if b.tags else "the exit"
            text = (
                f"Combine {entry} of {a.ref} with {exit_} of {b.ref}: "
                f"enter the way {a.at} did, and leave the way {b.at} did"
            )
        test = (
            f"On the next three {a.trades}, paper-trade the combination beside the original and keep "
            f"it only if it does better."
        )
    return _json(hypothesis=sentence(text), test=test)


def _threat(d: Draft) -> str:
    s = d.scenes[0]
    if s.sign < 0:
        harm = f"the {s.amount} loss grows several times larger"
    elif s.sign > 0:
        harm = f"the {s.amount} gain turns into a loss"
    else:
        harm = "a quiet position turns into a loss"
    scenario = f"It strikes while I hold a position like the one at {s.ref}: in {s.market}, {harm} before I can react."
    response = (
        f"Cut exposure on {s.trades} first, pause new entries until prices settle, and re-enter at half size "
        f"once {s.the_market} is orderly again."
    )
    return _json(scenario=scenario, response=response, severity=round(d.rng.uniform(0.4, 0.9), 3))


def _depotentiate(d: Draft) -> str:
    s = d.scenes[0]
    charge = f" (arousal {s.line.arousal:.2f})" if s.line.tick is not None else ""
    if s.sign < 0:
        felt = f"It felt bigger than that{charge}, as if the whole approach had failed."
        lesson = (
            f"One {s.amount} loss in {s.market} is a cost of trading the approach, not a verdict on "
            f"it; keep the fact and let the alarm go."
        )
    elif s.sign > 0:
        felt = f"It felt bigger than that{charge}, as if the approach could not miss."
        lesson = (
            f"One {s.amount} gain in {s.market} is a single outcome, not proof; size the next trade "
            f"as if it had not happened."
        )
    else:
        felt = f"It felt bigger than that{charge}, as if something important had slipped past."
        lesson = (
            "An episode with no gain or loss carries information, not danger; keep what happened and let the alarm go."
        )
    happened = f"At {s.ref}, in {s.market}, the trade ended in {s.result}." if s.known else f"What happened: {s.quote}."
    return _json(happened=happened, felt=felt, lesson=lesson)


def _insight(d: Draft) -> str:
    tag = d.found(r"theme:([^/]+?)(?:/retry\d+)?$", d.found(r"theme '([^']+)'", ""))
    scenes = d.scenes
    known = [s for s in scenes if s.known]
    label = f"tagged {tag}" if tag else "on this theme"
    if not known:
        words = [w for w in topics(scenes, 3) if w != tag][:2]
        named = " and ".join(f'"{w}"' for w in words) or "one another"
        return _json(insight=sentence(f"The episodes {label} keep returning to {named}, as in {scenes[0].quote}"))
    by_regime: dict[str, list[Scene]] = {}
    for s in known:
        by_regime.setdefault(s.regime or "unknown", []).append(s)
    if len(by_regime) == 1:
        best = max(known, key=lambda s: (s.pnl or 0.0, -(s.tick or 0)))
        regime = known[0].markets
        count = "Both" if len(known) == 2 else f"All {len(known)}"
        text = f"{count} episodes {label} came in {regime} and {net(known)}; the best was {best.ref}"
        return _json(insight=sentence(text))
    groups = sorted(by_regime.values(), key=lambda g: (-sum(s.pnl or 0.0 for s in g), g[0].regime))
    parts = []
    for group in groups:
        ticks = ", ".join(str(s.tick) for s in group if s.tick is not None)
        where = f"in {group[0].markets}" if group[0].regime else "elsewhere"
        plural = "s" if len(group) > 1 else ""
        parts.append(f"{where} they {net(group)}" + (f" (tick{plural} {ticks})" if ticks else ""))
    signs = {_direction(sum(s.pnl or 0.0 for s in g)) for g in groups}
    if len(signs) > 1:
        text = (
            f"Trades {label} went with the regime: {'; '.join(parts)}, "
            "so the regime, more than the tag, decided the outcome"
        )
    else:
        verb = {1: "gained", -1: "lost", 0: "came out about even"}[signs.pop()]
        text = f"Trades {label} {verb} in every regime: {'; '.join(parts)}"
    big = _largest(known)
    if big.sign:
        text += f". The largest move was {big.ref}, {big.result}"
    return _json(insight=sentence(text))


def _direction(total: float) -> int:
    return 0 if abs(total) < FLAT else (1 if total > 0 else -1)


REASONING: Final[dict[str, Callable[[Draft], str]]] = {
    "pattern": _pattern,
    "reverse": _reverse,
    "perturbed": _perturbed,
    "counterfactual": _counterfactual,
    "hypothesis": _hypothesis,
    "threat": _threat,
    "depotentiate": _depotentiate,
    "insight": _insight,
}
