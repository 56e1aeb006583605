"""The offline generator's reasoning: replay patterns, credit assignment, perturbations,
counterfactuals with outcome and lesson, strategy hypotheses with their test, threats, depotentiation
and theme insights, each written as plain sentences about the episodes in the request.

The writers read the episodes as a model sees them in the prompt's episode lines (tick, regime,
tags, outcome), from the request's ``given`` inputs; they speak of an episode by its tick and its
own quoted summary, of an outcome as going well or badly (a percentage only where the episode gave
one), of conditions by the episodes' regimes and of kinds of work by their tags, and reason from
the figures (which went well, which badly, in which conditions). No domain's vocabulary is built
in. A request without episodes still gets sentences, built from its fragments.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Final

import msgspec

from oneiros._deps import rng_for
from oneiros._text import rank
from oneiros.generators._lines import EpisodeLine
from oneiros.generators._phrases import FLAT, Scene, capitalize, net, sentence, topics
from oneiros.generators._protocol import GenerationRequest

__all__ = ["REASONING", "Draft"]


def _json(**fields: object) -> str:
    return msgspec.json.encode(fields).decode()


class Draft:
    """What one call has to write with: the episodes it was given (or, failing that, its
    fragments), the figures it was given, and the call's own random source."""

    def __init__(self, request: GenerationRequest, rng: random.Random, seed: int) -> None:
        self.request = request
        self.rng = rng
        self.seed = seed
        self.fragments = [f for f in request.fragments if f.strip()] or [request.prompt.strip() or request.task]
        self.given = request.given
        given = [EpisodeLine.of(e) for e in request.given.episodes]
        lines = given or [EpisodeLine(summary=f) for f in self.fragments]
        self.scenes = [Scene(line) for line in lines]


def _largest(scenes: Sequence[Scene]) -> Scene:
    return max(scenes, key=lambda s: (abs(s.pnl or 0.0), -(s.tick or 0)))


def _pattern(d: Draft) -> str:
    scenes = d.scenes
    known = [s for s in scenes if s.known]
    if len(scenes) == 1:
        s = scenes[0]
        tail = f"it {s.result} {s.where}" if s.known else "nothing else here echoes it"
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
            first += f"; {count} of them came in {Scene(EpisodeLine(summary='', regime=regime[0])).conditions}"
    moved = f"The outcome that moved most was {big.ref}, which {big.result} {big.where}"
    return _json(pattern=f"{sentence(first)} {sentence(moved)}")


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
        f"Working back from the outcome that moved most, {first.ref}, which {first.result}, the credit goes to "
        f"the decision taken there {first.where}"
    )
    opposite = [s for s in moved[1:] if s.sign != first.sign]
    second = opposite[0] if opposite else (moved[1] if len(moved) > 1 else None)
    if second is not None:
        text += f"; {second.ref}, which {second.result}, traces back the same way, to how it began {second.where}"
    return _json(pattern=sentence(text))


def _perturbed(d: Draft) -> str:
    # The engine names the perturbation in front of the pattern, so the sentence refers back to it.
    well = sorted((s for s in d.scenes if s.sign > 0), key=lambda s: (s.pnl or 0.0, s.tick or 0))
    badly = sorted((s for s in d.scenes if s.sign < 0), key=lambda s: (s.pnl or 0.0, s.tick or 0))
    if well:
        thin = well[0]
        text = f"Under that stress the narrowest success here, {thin.ref}, would likely have gone badly"
        if len(well) > 1:
            wide = well[-1]
            text += f", while {wide.ref} had margin enough to survive it"
    elif badly:
        worst = badly[0]
        text = (
            f"Under that stress every setback here would have been worse, first {worst.ref}, "
            f"which already {worst.result}"
        )
    else:
        text = f"Under that stress {d.scenes[0].ref} is the episode most likely to have gone the other way"
    return _json(pattern=sentence(text))


# Alternatives for a key decision, by how it turned out: the question, what would likely have
# followed, and the lesson. Placeholders are Scene attributes; no domain's words, only the episode's.
_Alt = tuple[str, str, str]
_AFTER_BADLY: Final[tuple[_Alt, ...]] = (
    (
        "What if I had waited for confirmation before acting at {ref}?",
        "Waiting would likely have avoided most of what went badly{figure}, at the cost of acting later "
        "had the chance been real.",
        "{Where}, wait for confirmation before acting on {kinds}; acting late costs less than {at} did.",
    ),
    (
        "What if I had tried it on a smaller scale first at {ref}?",
        "A smaller first step would have limited the damage{figure} and taught the same lesson.",
        "Try {kinds} {where} on a small scale first until they prove themselves; all at once, {at} went badly.",
    ),
    (
        "What if I had not acted at {ref}?",
        "Not acting would have avoided the whole setback{figure} and cost only the chance that it worked.",
        "Leave {kinds} {where} alone unless a second signal agrees; {at} shows what the first signal alone cost.",
    ),
    (
        "What if I had done the opposite at {ref}?",
        "The opposite would likely have gone about as well as this went badly{figure}.",
        "When {kinds} go badly {where}, test the opposite on a small scale before trusting the first idea.",
    ),
)
_AFTER_WELL: Final[tuple[_Alt, ...]] = (
    (
        "What if I had kept going longer at {ref}?",
        "It could have gone further while {the_conditions} held, and would have given some back at the first change.",
        "Keep going with {kinds} while {the_conditions} hold, and stop when they change rather than at a fixed point.",
    ),
    (
        "What if I had done it on half the scale at {ref}?",
        "It would have gone about half as well{figure}, for half the risk.",
        "Keep the full scale on {kinds} {where}; halving {at} would have given up half of what went well.",
    ),
    (
        "What if I had acted earlier at {ref}?",
        "Acting earlier would likely have caught more of what went well{figure}, with a higher chance of "
        "acting before the moment was right.",
        "Act on {kinds} {where} at the first confirmation instead of waiting for more; {at} went well from the start.",
    ),
    (
        "What if I had not acted at {ref}?",
        "Not acting would have given up what went well{figure}, with nothing to show for the caution.",
        "Trust the signal on {kinds} {where}; {at} went well{figure}.",
    ),
)
_AFTER_EVEN: Final[tuple[_Alt, ...]] = (
    (
        "What if I had acted sooner at {ref}?",
        "Acting sooner would likely have changed little, since the episode ended with no outcome to move.",
        "Record what follows {kinds} {where}, so the next decision like {at} has a measured outcome to weigh.",
    ),
    (
        "What if I had done the opposite at {ref}?",
        "The result would have hung on what this episode never showed, so only the next episode "
        "like it can judge the alternative.",
        "Watch the next {kinds} {where} for what would have happened either way before changing the rule.",
    ),
)


def _fill(template: str, scene: Scene) -> str:
    names = {name: getattr(scene, name.lower()) for name in re.findall(r"\{(\w+)\}", template)}
    return template.format_map({k: capitalize(v) if k[:1].isupper() else v for k, v in names.items()})


def _counterfactual(d: Draft) -> str:
    scene = d.scenes[0]
    alternatives = {1: _AFTER_WELL, -1: _AFTER_BADLY, 0: _AFTER_EVEN}[scene.sign]
    # Branches of one decision take different alternatives: the offset depends on the decision
    # alone, the branch number (from the call key) moves along from it.
    offset = rng_for(d.seed, "counterfactual", scene.line.summary).randrange(len(alternatives))
    branch = d.given.branch if d.given.branch is not None else d.rng.randrange(1, 5)
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
    mode = d.given.mode or "combinational"
    a, b = _ends(d)
    if mode == "exploratory":
        text = (
            f"Push the approach of {a.ref} to its boundary: it should still go well {a.where} at twice the "
            f"pace with half the resources"
        )
        if b is not a:
            text += f", and it will break first where {b.ref} did"
        test = (
            f"Replay {a.at} at twice the pace with half the resources, and keep the approach only if it "
            "still goes well."
        )
    elif mode == "transformational":
        w = b if b.sign < 0 else a
        approach = f"the {w.tag()} approach" if w.tags else "the approach"
        text = (
            f"Challenge the assumption behind {w.ref}: that it {w.result} may say more about {w.the_conditions} "
            f"than about {approach} itself, so the conditions, not the approach, should decide when to act"
        )
        like = f"tagged {w.tag()}" if w.tags else f"like {w.at}"
        test = (
            f"Find two live episodes {like} in different conditions; if one goes well and the other badly, "
            f"the conditions are what matter."
        )
    else:
        start = f"the {a.tag(b)} start" if a.tags else "the start"
        if b.sign < 0 and a.sign > 0:
            text = (
                f"Combine {start} of {a.ref}, which {a.result}, with a guard against what went wrong at {b.ref}: "
                f"begin the way {a.at} did, but stand aside when the conditions of {b.at} return"
            )
        else:
            finish = f"the {b.tag(a)} finish" if b.tags else "the finish"
            text = (
                f"Combine {start} of {a.ref} with {finish} of {b.ref}: "
                f"begin the way {a.at} did, and finish the way {b.at} did"
            )
        test = (
            f"On the next three {a.kinds}, try the combination beside the original and keep it only if it goes better."
        )
    return _json(hypothesis=sentence(text), test=test)


def _threat(d: Draft) -> str:
    s = d.scenes[0]
    if s.sign < 0:
        harm = f"what went badly there{s.figure} goes several times worse"
    elif s.sign > 0:
        harm = "what went well there turns bad"
    else:
        harm = "a quiet moment turns bad"
    scenario = f"It strikes in the middle of something like {s.ref}: {s.where}, {harm} before I can react."
    response = (
        f"Stop new work on {s.kinds} first, wait until things settle, and start again on a small scale "
        f"once {s.the_conditions} are orderly again."
    )
    return _json(scenario=scenario, response=response, severity=round(d.rng.uniform(0.4, 0.9), 3))


def _depotentiate(d: Draft) -> str:
    s = d.scenes[0]
    charge = f" (arousal {s.line.arousal:.2f})" if s.line.tick is not None else ""
    if s.sign < 0:
        felt = f"It felt bigger than that{charge}, as if the whole approach had failed."
        lesson = (
            f"One setback {s.where} is a cost of the approach, not a verdict on it; keep the fact and let the alarm go."
        )
    elif s.sign > 0:
        felt = f"It felt bigger than that{charge}, as if the approach could not miss."
        lesson = f"One success {s.where} is a single outcome, not proof; plan the next one as if it had not happened."
    else:
        felt = f"It felt bigger than that{charge}, as if something important had slipped past."
        lesson = (
            "An episode that came out even carries information, not danger; keep what happened and let the alarm go."
        )
    happened = f"At {s.ref}, {s.where}, it {s.result}." if s.known else f"What happened: {s.quote}."
    return _json(happened=happened, felt=felt, lesson=lesson)


def _insight(d: Draft) -> str:
    tag = d.given.tag or ""
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
        where = f"in {known[0].conditions}"
        count = "Both" if len(known) == 2 else f"All {len(known)}"
        text = f"{count} episodes {label} came {where} and {net(known)}; the best was {best.ref}"
        return _json(insight=sentence(text))
    groups = sorted(by_regime.values(), key=lambda g: (-sum(s.pnl or 0.0 for s in g), g[0].regime))
    parts = []
    for group in groups:
        ticks = ", ".join(str(s.tick) for s in group if s.tick is not None)
        where = f"in {group[0].conditions}" if group[0].regime else "elsewhere"
        plural = "s" if len(group) > 1 else ""
        parts.append(f"{where} they {net(group)}" + (f" (tick{plural} {ticks})" if ticks else ""))
    signs = {_sign(sum(s.pnl or 0.0 for s in g)) for g in groups}
    if len(signs) > 1:
        text = (
            f"Episodes {label} went with the conditions: {'; '.join(parts)}, "
            "so the conditions, more than the tag, decided the outcome"
        )
    else:
        verb = {1: "went well", -1: "went badly", 0: "came out even"}[signs.pop()]
        text = f"Episodes {label} {verb} in every condition: {'; '.join(parts)}"
    big = _largest(known)
    if big.sign:
        text += f". The outcome that moved most was {big.ref}, which {big.result}"
    return _json(insight=sentence(text))


def _sign(total: float) -> int:
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
