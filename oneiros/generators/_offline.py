"""A deterministic, seeded, offline generator that writes from the episodes' own words."""

from __future__ import annotations

import random
from collections.abc import Callable

import msgspec

from oneiros._deps import rng_for
from oneiros._text import keywords
from oneiros.generators._protocol import Generation, GenerationRequest

__all__ = ["OfflineGenerator", "keywords"]


def _tokens(text: str) -> int:
    # A rough count (about four characters a token) is all a rule-based path can claim.
    return max(1, len(text) // 4)


def _json(**fields: object) -> str:
    return msgspec.json.encode(fields).decode()


class _Draft:
    """What one call has to write with: its fragments shuffled by the call's own random source."""

    def __init__(self, request: GenerationRequest, rng: random.Random) -> None:
        fragments = list(request.fragments) or [request.prompt]
        rng.shuffle(fragments)
        self.rng = rng
        self.fragments = fragments
        keys = keywords(" ".join(fragments))
        self.focus = keys[0] if keys else "the pattern"
        self.other = keys[1] if len(keys) > 1 else "timing"
        self.third = keys[2] if len(keys) > 2 else "patience"
        self.a, self.b = fragments[0], fragments[-1]


def _partial(d: _Draft) -> str:
    image = d.rng.choice(["a tide", "a staircase", "a ledger", "a flock", "a slow fuse"])
    words = keywords(" ".join(d.fragments), 12) or [d.focus, d.other, d.third]
    a, b, c = d.rng.sample(words, 3) if len(words) >= 3 else [d.focus, d.other, d.third]
    return f"{a} becomes {image}, {b} folding into {c} as if"


def _novelty(d: _Draft) -> str:
    scores = []
    for fragment in d.fragments:
        words = set(keywords(fragment, 20))
        others = {w for f in d.fragments if f is not fragment for w in keywords(f, 20)}
        share = len(words - others) / len(words) if words else 0.0
        scores.append(round(min(1.0, 0.3 + 0.7 * share * d.rng.uniform(0.6, 1.0)), 3))
    return _json(scores=scores)


def _pattern(d: _Draft) -> str:
    return _json(pattern=f"Recurring thread: {d.focus} with {d.other}; '{d.a}' echoes '{d.b}'.")


def _reverse(d: _Draft) -> str:
    return _json(pattern=f"Tracing back from '{d.a}': the outcome was earned by how {d.focus} met {d.other} at entry.")


def _perturbed(d: _Draft) -> str:
    return _json(pattern=f"Under stress '{d.a}' would have hinged on {d.focus}; {d.other} is the fragile link.")


def _counterfactual(d: _Draft) -> str:
    alt = d.rng.choice(["earlier", "later", "at half size", "not at all"])
    verb = d.rng.choice(["shifted", "reversed", "held", "deepened"])
    return _json(
        hypothesis=f"Acting {alt} on '{d.a}'",
        outcome=f"{d.focus} would likely have {verb}",
        lesson=f"weigh {d.other} before {d.focus}",
    )


def _hypothesis(d: _Draft) -> str:
    verb = d.rng.choice(["precedes", "amplifies", "dampens", "predicts"])
    return _json(
        hypothesis=f"If {d.focus} {verb} {d.other}, then acting on '{d.a}' would change what followed '{d.b}'.",
        test=f"watch the next {d.focus} episode for {d.other} first",
    )


def _threat(d: _Draft) -> str:
    severity = round(d.rng.uniform(0.4, 0.9), 3)
    return _json(
        scenario=f"{d.focus} breaks while {d.other} is exposed, as in '{d.a}'",
        response=f"cut {d.other} exposure and wait for {d.focus} to settle",
        severity=severity,
    )


def _depotentiate(d: _Draft) -> str:
    return _json(
        happened=d.a, felt=f"the {d.focus} felt bigger than it was", lesson=f"{d.focus} moves of this size recur"
    )


def _dream(d: _Draft) -> str:
    images = [
        "water through invisible channels",
        "a door that opens onto the same room",
        "a clock with soft hands",
        "a market of silent birds",
        "stairs that descend upward",
        "a tide pulling at a ledger",
    ]
    d.rng.shuffle(images)
    count = d.rng.randint(3, 6)
    lines = []
    for i in range(count):
        word = (keywords(d.fragments[i % len(d.fragments)], 3) or [d.focus])[-1]
        lines.append(f"- the {word} is {images[i % len(images)]}")
    thread = f"{d.focus} and {d.other} move together, the pull felt before the wave arrives"
    return "FRAGMENTS:\n" + "\n".join(lines) + f"\nTHREAD: {thread}"


def _insight(d: _Draft) -> str:
    return _json(insight=f"{d.focus.capitalize()} and {d.other} travel together across episodes.")


_WRITERS: dict[str, Callable[[_Draft], str]] = {
    "partial": _partial,
    "novelty": _novelty,
    "pattern": _pattern,
    "reverse": _reverse,
    "perturbed": _perturbed,
    "counterfactual": _counterfactual,
    "hypothesis": _hypothesis,
    "threat": _threat,
    "depotentiate": _depotentiate,
    "dream": _dream,
    "insight": _insight,
}


class OfflineGenerator:
    """The [CORE] tier's rule-based path: no network, the same text for the same seed and call."""

    model = "offline-core"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def model_for(self, _request: GenerationRequest) -> str:
        return self.model

    def max_tokens_in(self, request: GenerationRequest) -> int:
        """Exactly what :meth:`generate` will count in, so the budget reserves no more than it needs."""
        return _tokens(request.system + request.prompt)

    def generate(self, request: GenerationRequest) -> Generation:
        draft = _Draft(request, rng_for(self.seed, request.call_key))
        text = _WRITERS[request.task](draft)
        if request.task == "partial":
            # The DaliInterrupt: token max_tokens + 1 is never generated.
            text = " ".join(text.split()[: max(1, request.max_tokens)])
        return Generation(
            text=text,
            model=self.model,
            tokens_in=_tokens(request.system + request.prompt),
            tokens_out=min(_tokens(text), request.max_tokens),
        )
