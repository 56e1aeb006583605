"""Which staged entries a waking outcome bears on: ranked by relevance, as recall ranks what it finds.

An outcome is a query (its summary, tags and regime); each active entry a document of two fields,
its criterion (the terms and regime that say what would bear it out) and its text. Okapi BM25, with
recall's terms, idf and weights (``oneiros/projections/_terms.py``, ``RecallSettings``' k1 and b),
scores each field against the outcome, each term weighed by how few of the golem's active entries
have it (never below ``_IDF_FLOOR``: in a buffer of ten entries a term all of them share still says
something). ``relevance`` is the criterion's score over what the criterion scores against itself,
so how much of what would bear the entry out the outcome shows, plus what the text adds
(``_TEXT_WEIGHT`` of its score on the same scale, at most ``_TEXT_CAP``), capped at 1. An outcome
that carries every term of an entry's criterion and its regime scores 1, as it matched before
relevance; terms of the text alone never pass ``_TEXT_CAP``.

Terms are recall's Snowball stems (``deployed``, ``deploys`` and ``deploy`` are one term), and each
two neighbours also count joined (``rolled back`` meets the tag ``rollback``), so that a person's
wording finds a criterion's tags. The arithmetic is plain floats in a fixed order, rounded, so the
sweep decides the same on every replay of the same log.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence

import msgspec

from oneiros._text import keywords
from oneiros.events._staging import OutcomeRecorded
from oneiros.projections._recall import RecallSettings
from oneiros.projections._staging import StagedEntry
from oneiros.projections._terms import bm25_weight, idf, spelled_terms

__all__ = ["Match", "criterion_words", "outcome_words", "relevance", "spelled", "words_of"]

_IDF_FLOOR = idf(2, 1)
"""The least a term weighs: what idf gives a term half the entries have."""
_TEXT_WEIGHT = 0.3
"""What a term of the entry's text weighs beside one of its criterion: the criterion says what
would bear the entry out; the text echoes it (and quotes its episodes)."""
_TEXT_CAP = 0.25
"""The most the text adds to an entry's relevance: its terms alone never move it."""
_DIGITS = 6


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """How far an outcome bears on one entry."""

    entry_id: str
    relevance: float
    """0-1: the outcome's BM25 score for the entry over what the entry's own criterion scores."""
    shared: tuple[str, ...]
    """The outcome's words the entry has, as the outcome spells them, its criterion's first."""
    missing: tuple[str, ...]
    """The entry's criterion terms (and regime) the outcome lacks."""


def spelled(text: str) -> dict[str, str]:
    """``text``'s terms, then each two neighbours joined (``rolled back`` -> ``rollback``), each
    with the words it was cut from, first seen first."""
    found = spelled_terms(text)
    pairs = [*found, *((a + b, f"{x} {y}") for (a, x), (b, y) in itertools.pairwise(found))]
    return dict(reversed(pairs))  # reversed: the first spelling wins


def words_of(text: str) -> list[str]:
    """``text``'s terms, repeats kept, then each two neighbours joined."""
    found = [term for term, _word in spelled_terms(text)]
    return found + [a + b for a, b in itertools.pairwise(found)]


def outcome_words(outcome: OutcomeRecorded) -> dict[str, str]:
    """The distinct terms an outcome is matched on, in the order it gives them, each with its spelling."""
    found: dict[str, str] = {}
    for part in (outcome.summary, *outcome.tags, outcome.regime or ""):
        for term, as_written in spelled(part).items():
            found.setdefault(term, as_written)
    return found


def criterion_words(entry: StagedEntry) -> dict[str, str]:
    """What bears the entry out: its criterion's terms and regime (else its text's keywords), each
    with its spelling (a tag of two words, ``ask-first``, is both, and the two joined)."""
    criterion = entry.criterion
    named = [*criterion.all_of, criterion.regime or ""] if criterion.all_of or criterion.regime else []
    found: dict[str, str] = {}
    for term in named or keywords(entry.text, 4):
        for word in spelled(term):
            found.setdefault(word, term)
    return found


class _Field:
    """One field of every document: each document's term counts and length, and the mean length."""

    def __init__(self, documents: Sequence[Counter[str]], settings: RecallSettings) -> None:
        self.documents = documents
        self.lengths = [sum(d.values()) for d in documents]
        self.mean = sum(self.lengths) / len(documents) if documents else 0.0
        self.k1, self.b = settings.k1, settings.b

    def score(self, index: int, query: Iterable[str], weights: dict[str, float]) -> float:
        document, length = self.documents[index], self.lengths[index]
        return sum(
            weights[term] * bm25_weight(document[term], length, self.mean, self.k1, self.b)
            for term in query
            if document.get(term, 0)
        )


def relevance(outcome: OutcomeRecorded, entries: Sequence[StagedEntry]) -> list[Match]:
    """How far ``outcome`` bears on each of ``entries`` (the active entries of its golem: the
    collection BM25 weighs terms over), in their order. An outcome that names an entry bears on it
    alone, fully."""
    if outcome.entry_id is not None:
        return [
            Match(entry_id=e.entry_id, relevance=float(e.entry_id == outcome.entry_id), shared=(), missing=())
            for e in entries
        ]
    settings = RecallSettings()
    owns = [criterion_words(e) for e in entries]
    criteria = _Field([Counter(own.keys()) for own in owns], settings)
    texts = _Field([Counter(words_of(e.text)) for e in entries], settings)
    having: Counter[str] = Counter()
    for criterion, text in zip(criteria.documents, texts.documents, strict=True):
        having.update(set(criterion) | set(text))
    weights = {term: max(_IDF_FLOOR, idf(len(entries), n)) for term, n in having.items()}
    query = outcome_words(outcome)
    out: list[Match] = []
    for index, (entry, own) in enumerate(zip(entries, owns, strict=True)):
        best = criteria.score(index, own, weights)
        if best > 0:
            echo = min(_TEXT_CAP, _TEXT_WEIGHT * texts.score(index, query, weights) / best)
            ratio = min(1.0, criteria.score(index, query, weights) / best + echo)
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
