"""Words: what the offline generator writes from and what staged criteria are matched on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["IMAGERY", "STOPWORDS", "article", "content_words", "keywords", "rank"]

_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
# The imagery of the offline generator's hypnagogic partials. A partial joins words of the waking
# residue with these; only the residue's words should say what a live episode must show to echo it.
IMAGERY = frozenset(
    [
        "becomes",
        "breathing",
        "flock",
        "folds",
        "fuse",
        "hold",
        "keeps",
        "lantern",
        "ledger",
        "like",
        "margin",
        "page",
        "room",
        "same",
        "sand",
        "sleep",
        "slow",
        "somewhere",
        "sound",
        "staircase",
        "tide",
        "turning",
        "under",
        "water",
        "way",
    ]
)
# Function words, and the connective words of the offline generator's own templates ("acting",
# "followed"…), which would otherwise match every outcome against every criterion.
STOPWORDS = (
    frozenset(
        [
            "a",
            "acting",
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
            "change",
            "changed",
            "during",
            "followed",
            "for",
            "from",
            "had",
            "has",
            "have",
            "if",
            "in",
            "into",
            "is",
            "it",
            "its",
            "kept",
            "not",
            "of",
            "on",
            "one",
            "or",
            "per",
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
            "what",
            "when",
            "which",
            "while",
            "will",
            "with",
            "within",
            "would",
        ]
    )
    | IMAGERY
)


def content_words(text: str) -> Iterator[str]:
    """The lower-case words of three letters or more in ``text`` that carry meaning, in order."""
    return (w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def content_word_set(text: str) -> set[str]:
    """The distinct words :func:`content_words` gives, as a set: the set difference runs in C, where
    filtering word by word does not (the recall index takes every episode's words)."""
    found = set(_WORD.findall(text.lower()))
    found -= STOPWORDS
    return found


def rank(words: Iterable[str], limit: int) -> list[str]:
    """The ``limit`` most frequent of ``words``, ties broken alphabetically."""
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def keywords(text: str, limit: int = 4) -> list[str]:
    """The ``limit`` most frequent content words of ``text``, ties broken alphabetically."""
    return rank(content_words(text), limit)


def article(word: str) -> str:
    """'a' or 'an' before ``word``, by how it is spoken (numbers included: 'an 8.0%', 'an 11%')."""
    head = word.lstrip("\"'(")
    if not head:
        return "a"
    if head[0].isdigit():
        whole = re.match(r"\d+", head)
        digits = whole.group(0) if whole else ""
        return "an" if head[0] == "8" or digits in ("11", "18") else "a"
    lower = head.lower()
    if lower[0] == "u":
        # "an unknown", but "a user", "a unit": a sounded "you" takes "a".
        return "a" if lower.startswith(("uni", "use", "usu", "uti", "ura", "ubi")) else "an"
    return "an" if lower[0] in "aeio" else "a"
