"""Words: what the offline generator writes from and what staged criteria are matched on."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["STOPWORDS", "content_words", "keywords"]

_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
# Function words, and the connective words of the offline generator's own templates ("acting",
# "followed"…), which would otherwise match every outcome against every criterion.
STOPWORDS = frozenset(
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


def content_words(text: str) -> Iterator[str]:
    """The lower-case words of three letters or more in ``text`` that carry meaning, in order."""
    return (w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def keywords(text: str, limit: int = 4) -> list[str]:
    """The ``limit`` most frequent content words of ``text``, ties broken alphabetically."""
    counts: dict[str, int] = {}
    for word in content_words(text):
        counts[word] = counts.get(word, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
