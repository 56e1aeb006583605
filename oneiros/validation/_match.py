"""Which staged entries a waking outcome bears on: ranked by relevance, as recall ranks what it finds.

An outcome is a query (its summary, tags and regime); each active entry a document of two fields,
its criterion (the terms and regime that say what would bear it out) and its text. Okapi BM25
scores each field against the outcome, each word weighed by how few of the golem's active entries
have it (never below ``_IDF_FLOOR``: in a buffer of ten entries a word all of them share still
says something). ``relevance`` is the criterion's score over what the criterion scores against
itself, so how much of what would bear the entry out the outcome shows, plus what the text adds
(``_TEXT_WEIGHT`` of its score on the same scale, at most ``_TEXT_CAP``), capped at 1. An outcome
that carries every term of an entry's criterion and its regime scores 1, as it matched before
relevance; words of the text alone never pass ``_TEXT_CAP``.

Words are the content words recall and the criteria use, cut to a stem (``deployed``, ``deploys``,
``deploying`` and ``deploy`` are one word) with hyphens dropped, and each two neighbours also
joined (``rolled back`` meets the tag ``rollback``, ``ask first`` the tag ``ask-first``), so that a
person's wording finds a criterion's tags. The arithmetic is plain floats in a fixed order,
rounded, so the sweep decides the same on every replay of the same log.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence

import msgspec

from oneiros._text import content_words, keywords
from oneiros.events._staging import OutcomeRecorded
from oneiros.projections._staging import StagedEntry

__all__ = ["Match", "criterion_words", "outcome_words", "relevance", "spelled", "stem", "words_of"]

_K1 = 1.2
"""BM25's term-frequency saturation (the usual figure)."""
_B = 0.75
"""BM25's length normalization (the usual figure)."""
_IDF_FLOOR = math.log(2)
"""The least a word weighs: what BM25's idf gives a word half the entries have."""
_TEXT_WEIGHT = 0.3
"""What a word of the entry's text weighs beside one of its criterion: the criterion says what
would bear the entry out; the text echoes it (and quotes its episodes)."""
_TEXT_CAP = 0.25
"""The most the text adds to an entry's relevance: its words alone never move it."""
_DIGITS = 6
_SUFFIXES = ("ies", "ing", "ed", "es", "ly", "s")


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """How far an outcome bears on one entry."""

    entry_id: str
    relevance: float
    """0-1: the outcome's BM25 score for the entry over what the entry's own criterion scores."""
    shared: tuple[str, ...]
    """The outcome's words the entry has, as the outcome spells them, its criterion's first."""
    missing: tuple[str, ...]
    """The entry's criterion terms (and regime) the outcome lacks."""


def stem(word: str) -> str:
    """``word`` without its inflection or hyphens: ``deployed`` -> ``deploy``, ``canaries`` ->
    ``canary``, ``merged`` and ``merge`` -> ``merg``, ``stopped`` -> ``stop``, ``ask-first`` ->
    ``askfirst``. Deliberately small: it only has to make a person's wording meet a tag, the same
    way on both sides."""
    word = word.replace("-", "").replace("'", "")
    base = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            base = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # stopped -> stop, committed -> commit; rolled, passed stay
            break
    return base[:-1] if len(base) > 3 and base.endswith("e") else base


def spelled(text: str) -> dict[str, str]:
    """``text``'s stems, each with the word (or two neighbouring words, ``rolled back`` ->
    ``rollback``) it was cut from, first seen first."""
    raw = list(content_words(text))
    pairs = [(stem(w), w) for w in raw] + [(stem(a + b), f"{a} {b}") for a, b in itertools.pairwise(raw)]
    return dict(reversed(pairs))  # reversed: the first spelling wins


def words_of(text: str) -> list[str]:
    """``text``'s stems, then each two neighbouring words joined (``rolled back`` -> ``rollback``)."""
    raw = list(content_words(text))
    return [stem(w) for w in raw] + [stem(a + b) for a, b in itertools.pairwise(raw)]


def outcome_words(outcome: OutcomeRecorded) -> dict[str, str]:
    """The distinct words an outcome is matched on, in the order it gives them, each with its spelling."""
    found: dict[str, str] = {}
    for part in (outcome.summary, *outcome.tags, outcome.regime or ""):
        for word, as_written in spelled(part).items():
            found.setdefault(word, as_written)
    return found


def criterion_words(entry: StagedEntry) -> dict[str, str]:
    """What bears the entry out: its criterion's terms and regime (else its text's keywords), each
    with its spelling."""
    criterion = entry.criterion
    terms = [*criterion.all_of, criterion.regime or ""] if criterion.all_of or criterion.regime else []
    found: dict[str, str] = {}
    for term in terms or keywords(entry.text, 4):
        for word in content_words(term.replace("-", "")):
            found.setdefault(stem(word), term)
    return found


class _Field:
    """One field of every document: each document's word counts and length, and the mean length."""

    def __init__(self, documents: Sequence[Counter[str]]) -> None:
        self.documents = documents
        self.lengths = [float(sum(d.values())) for d in documents]
        self.mean = sum(self.lengths) / len(documents) if documents else 0.0

    def score(self, index: int, query: Iterable[str], idf: dict[str, float]) -> float:
        document, length = self.documents[index], self.lengths[index]
        norm = _K1 * (1 - _B + _B * length / self.mean) if self.mean else _K1
        score = 0.0
        for word in query:
            tf = document.get(word, 0)
            if tf:
                score += idf[word] * tf * (_K1 + 1) / (tf + norm)
        return score


def relevance(outcome: OutcomeRecorded, entries: Sequence[StagedEntry]) -> list[Match]:
    """How far ``outcome`` bears on each of ``entries`` (the active entries of its golem: the
    collection BM25 weighs words over), in their order. An outcome that names an entry bears on it
    alone, fully."""
    if outcome.entry_id is not None:
        return [
            Match(entry_id=e.entry_id, relevance=float(e.entry_id == outcome.entry_id), shared=(), missing=())
            for e in entries
        ]
    owns = [criterion_words(e) for e in entries]
    criteria = _Field([Counter(own.keys()) for own in owns])
    texts = _Field([Counter(words_of(e.text)) for e in entries])
    count = len(entries)
    having: Counter[str] = Counter()
    for criterion, text in zip(criteria.documents, texts.documents, strict=True):
        having.update(set(criterion) | set(text))
    idf = {word: max(_IDF_FLOOR, math.log(1 + (count - n + 0.5) / (n + 0.5))) for word, n in having.items()}
    query = outcome_words(outcome)
    out: list[Match] = []
    for index, (entry, own) in enumerate(zip(entries, owns, strict=True)):
        best = criteria.score(index, own, idf)
        if best > 0:
            echo = min(_TEXT_CAP, _TEXT_WEIGHT * texts.score(index, query, idf) / best)
            ratio = min(1.0, criteria.score(index, query, idf) / best + echo)
        else:
            ratio = 0.0
        in_text = texts.documents[index]
        echoed = [s for w, s in query.items() if w in in_text and w not in own and " " not in s]
        shared = [query[w] for w in own if w in query] + echoed
        out.append(
            Match(
                entry_id=entry.entry_id,
                relevance=round(ratio, _DIGITS),
                shared=tuple(dict.fromkeys(shared)),
                missing=tuple(dict.fromkeys(s for w, s in own.items() if w not in query)),
            )
        )
    return out
