"""A deterministic, seeded, offline generator that writes from the episodes' own words.

Reasoning outputs (patterns, counterfactuals, hypotheses, insights...) are plain sentences about
the episodes in the request (see ``_reasoning.py``); observations, threads and summaries restate
what the episodes said, as facts (``_observe.py``). The hypnagogic partials, the FRAGMENTS and the
THREAD stay dreamlike, as Bumblebee's are: first-person, surreal, built around the words of
the memories they recombine.
"""

from __future__ import annotations

import msgspec

from oneiros._deps import rng_for
from oneiros._text import keywords
from oneiros.generators._contradiction import CONTRADICTION
from oneiros.generators._observe import CONSOLIDATION
from oneiros.generators._phrases import pick, topics
from oneiros.generators._profile import PROFILE
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.generators._reasoning import REASONING, Draft
from oneiros.generators._timeline import TIMELINE

__all__ = ["OfflineGenerator", "dali_cut", "keywords"]


def _tokens(text: str) -> int:
    # A rough count (about four characters a token) is all a rule-based path can claim.
    return max(1, len(text) // 4)


def _json(**fields: object) -> str:
    return msgspec.json.encode(fields).decode()


_IMAGES = ("a tide", "a staircase", "a ledger", "a flock", "a slow fuse", "a lantern under water")
_FOLDS = ("a room folds into sleep", "a tide folds into sand", "a page folds into its margin")


def _partial(d: Draft) -> str:
    theme = d.given.theme or ""
    words = list(dict.fromkeys([w for w in (theme,) if w and w != "none"] + topics(d.scenes, 6)))
    while len(words) < 3:
        words.append(("sleep", "water", "the hour")[len(words)])
    a, b, c = d.rng.sample(words, 3)
    form = d.rng.randrange(3)
    if form == 0:
        return f"{a} becomes {pick(d.rng, _IMAGES)}, and {b} folds into {c} the way {pick(d.rng, _FOLDS)}."
    if form == 1:
        return f"I hold {a} like {pick(d.rng, _IMAGES)}; {b} keeps turning into {c}, slow as breathing."
    return f"Somewhere {a} is {pick(d.rng, _IMAGES)}, and {b} and {c} are the same sound."


def dali_cut(text: str, max_tokens: int) -> str:
    """The DaliInterrupt (Bardo): token ``max_tokens + 1`` is never generated. Offline,
    a word is a token; the cut falls after the last whole clause that fits, so what survives
    is a complete phrase."""
    words = text.split()
    if len(words) <= max_tokens:
        return text
    kept = words[: max(1, max_tokens)]
    for end in range(len(kept), 0, -1):
        if kept[end - 1].endswith((".", ";", ",", "!", "?")):
            return " ".join(kept[:end]).rstrip(",;") + ("" if kept[end - 1].endswith((".", "!", "?")) else ".")
    return " ".join(kept)


def _novelty(d: Draft) -> str:
    """A fragment is novel by what it joins: residue words from different episodes score high,
    words one episode already held together score low (the HomuncularObserver's judgement)."""
    held = [set(keywords(f"{s.line.summary} {' '.join(s.tags)}", 50)) for s in d.scenes]
    scores = []
    for fragment in d.fragments:
        words = set(keywords(fragment, 20))
        known = {w for w in words if any(w in h for h in held)}
        if known:
            together = max(len(known & h) for h in held) / len(known)
            novelty = 1.0 - together + (1.0 / len(known) if len(known) > 1 else 0.0)
        else:
            others = {w for f in d.fragments if f is not fragment for w in keywords(f, 20)}
            novelty = len(words - others) / len(words) if words else 0.0
        scores.append(round(min(1.0, 0.3 + 0.7 * min(1.0, novelty) * d.rng.uniform(0.6, 1.0)), 3))
    return _json(scores=scores)


_FRAGMENTS = (
    "the {w} is water through invisible channels",
    "i carry the {w} through a door that opens onto the same room",
    "{w} and {v} sit at one table and neither remembers arriving",
    "i keep counting the {w} and the numbers lift off like birds",
    "a clock with soft hands keeps {w} time",
    "i am looking for {v} in the current",
    "the stairs down to the {w} lead upward",
    "someone says {v} and the whole room tilts",
)
_THREADS = (
    "{w} and {v} move in one tide — the pull is felt before the wave arrives",
    "{w} and {v} were never apart — what one night lost, the other was already holding",
    "{w} and {v} keep the same hour — each returns when the other is forgotten",
)


def _dream(d: Draft) -> str:
    """Bumblebee's two sections from the memory pairs (the prompt lists them in pairs): each
    fragment turns on words of the memories, the thread joins the two halves of one pair."""
    scenes = d.scenes
    pairs = [(scenes[i], scenes[i + 1] if i + 1 < len(scenes) else scenes[0]) for i in range(0, len(scenes), 2)]
    joined = [(a.word(), b.word() if b.word() != a.word() else b.tag(a) or "the other") for a, b in pairs]
    words = list(dict.fromkeys(w for pair in joined for w in pair)) or ["the hour", "the water"]
    forms = list(_FRAGMENTS)
    d.rng.shuffle(forms)
    lines = []
    for i in range(d.rng.randint(3, 6)):
        w, v = words[i % len(words)], words[(i + 1) % len(words)]
        lines.append("- " + forms[i % len(forms)].format(w=w, v=v))
    w, v = joined[d.rng.randrange(len(joined))]
    return "FRAGMENTS:\n" + "\n".join(lines) + "\nTHREAD: " + pick(d.rng, _THREADS).format(w=w, v=v)


def _consolidating(d: Draft) -> str:
    return {**CONSOLIDATION, **PROFILE, **TIMELINE, **CONTRADICTION}[d.request.task](d.request)


_WRITERS = {
    **REASONING,
    **dict.fromkeys({**CONSOLIDATION, **PROFILE, **TIMELINE, **CONTRADICTION}, _consolidating),
    "partial": _partial,
    "novelty": _novelty,
    "dream": _dream,
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
        draft = Draft(request, rng_for(self.seed, request.call_key), self.seed)
        text = _WRITERS[request.task](draft)
        if request.task == "partial":
            text = dali_cut(text, request.max_tokens)
        return Generation(
            text=text,
            model=self.model,
            tokens_in=_tokens(request.system + request.prompt),
            tokens_out=min(_tokens(text), request.max_tokens),
        )
