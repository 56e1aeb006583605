"""A deterministic, seeded, offline generator that writes from the episodes' own words."""

from __future__ import annotations

import re

from oneiros._deps import rng_for
from oneiros.generators._protocol import Generation, GenerationRequest

__all__ = ["OfflineGenerator"]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]+")
_STOP = frozenset(
    [
        "a",
        "after",
        "ahead",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "before",
        "both",
        "but",
        "by",
        "during",
        "for",
        "from",
        "had",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "kept",
        "of",
        "on",
        "or",
        "same",
        "so",
        "that",
        "the",
        "then",
        "this",
        "to",
        "two",
        "was",
        "were",
        "while",
        "with",
        "within",
    ]
)


def _keywords(text: str, limit: int = 4) -> list[str]:
    seen: dict[str, int] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP and len(word) > 2:
            seen[word] = seen.get(word, 0) + 1
    return [w for w, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _tokens(text: str) -> int:
    # A rough count (about four characters a token) is all a rule-based path can claim.
    return max(1, len(text) // 4)


class OfflineGenerator:
    """The [CORE] tier's rule-based path: no network, the same text for the same seed and call."""

    model = "offline-core"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def generate(self, request: GenerationRequest) -> Generation:
        rng = rng_for(self.seed, request.call_key)
        fragments = list(request.fragments) or [request.prompt]
        rng.shuffle(fragments)
        keys = _keywords(" ".join(fragments))
        a, b = fragments[0], fragments[-1]
        focus = keys[0] if keys else "the pattern"
        other = keys[1] if len(keys) > 1 else "timing"
        if request.task == "pattern":
            text = f"Recurring thread: {focus} with {other}; '{a}' echoes '{b}'."
        elif request.task == "hypothesis":
            verb = rng.choice(["precedes", "amplifies", "dampens", "predicts"])
            text = f"If {focus} {verb} {other}, then acting on '{a}' would change what followed '{b}'."
        elif request.task == "counterfactual":
            alt = rng.choice(["earlier", "later", "at half size", "not at all"])
            text = (
                f"Had I acted {alt} on '{a}', {focus} would likely have shifted | lesson: weigh {other} before {focus}."
            )
        else:
            text = f"{focus.capitalize()} and {other} travel together across episodes."
        words = text.split()
        text = " ".join(words[: max(1, request.max_tokens)])
        return Generation(
            text=text,
            model=self.model,
            tokens_in=_tokens(request.prompt),
            tokens_out=min(_tokens(text), request.max_tokens),
        )
