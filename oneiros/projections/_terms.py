"""How recall reads text: the terms a text is indexed and queried by, and Okapi BM25's arithmetic.

A text's terms are its words of two or more word characters, lower-cased, less NLTK's 179 English
stop words, each cut to its Snowball ("Porter 2") stem: "adopting" and "adoption" are one term,
"the" and "was" none. On LoCoMo's dev conversations these settings without the stemmer give what the
textbook BM25 of issue 29 gives (evidence recall@10 within 0.007 of it in each category), and the
stemmer adds to every category (docs/evaluation.md). Query terms count once, documents' as often as
they occur; a document's length is its number of terms.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from oneiros._text import FUNCTION_WORDS

__all__ = [
    "SEPARATOR",
    "STOP_WORDS",
    "bm25_weight",
    "idf",
    "spelled_terms",
    "stemmed",
    "term_counts",
    "terms",
    "terms_of",
    "unique_terms",
    "words_of",
]

STOP_WORDS = FUNCTION_WORDS
"""NLTK's English stop words (179), the list bm25s calls "en_plus"."""
_WORD = re.compile(r"\b\w\w+\b")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # type: ignore[import-not-found]  # noqa: PLC0415 - PyStemmer ships no types; loaded on first use

    return Stemmer.Stemmer("english")


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order, repeats kept."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
    return list(_stemmer().stemWords(words)) if words else []


def terms_of(texts: Sequence[str]) -> list[list[str]]:
    """What :func:`terms` gives for each of ``texts``, each distinct word stemmed once."""
    words = [_WORD.findall(text.lower()) for text in texts]
    distinct = list(set().union(*words) - STOP_WORDS)
    stem = dict(zip(distinct, _stemmer().stemWords(distinct) if distinct else [], strict=True))
    return [[s for s in map(stem.get, each) if s] for each in words]


SEPARATOR = b"\x00"
"""What :func:`words_of` puts between two texts' words."""
_ASCII_WORDS = bytes(
    c if c == 0 or c >= 128 else (ord(chr(c).lower()) if chr(c).isalnum() or chr(c) == "_" else ord(" "))
    for c in range(256)
)
"""ASCII's word characters (what ``\\w`` matches there) lower-cased, every other ASCII character a
space but the separator; the bytes of other characters (UTF-8) as they are."""


def words_of(texts: Sequence[str]) -> list[bytes] | None:
    """Every word of ``texts`` that :data:`_WORD` finds in each lower-cased, in UTF-8, text after
    text, with :data:`SEPARATOR` between two texts, and words of one character kept (:func:`stemmed`
    leaves them out): one ``bytes.translate`` and one ``bytes.split`` for the whole batch rather than
    a regular expression per text, which cost a catch-up a sixth of its time. None when a text holds
    the separator itself."""
    # An ASCII text's words are its runs of [a-z0-9_] once the rest are spaces; any other text is
    # cut by the expression first, and its words joined by spaces hold no byte the table changes.
    pieces = [t if t.isascii() else " ".join(_WORD.findall(t.lower())) for t in texts]
    joined = " \x00 ".join(pieces)
    if joined.count("\x00") != len(pieces) - 1:
        return None
    return joined.encode().translate(_ASCII_WORDS).split()


def stemmed(words: Iterable[bytes]) -> dict[bytes, str]:
    """The term of each of ``words`` (UTF-8) that is one: two characters or more, not a stop word."""
    spelled = {w: w.decode() for w in words if w != SEPARATOR}
    kept = [w for w, text in spelled.items() if len(text) > 1 and text not in STOP_WORDS]
    stems = _stemmer().stemWords([spelled[w] for w in kept]) if kept else []
    return dict(zip(kept, stems, strict=True))


def spelled_terms(text: str) -> list[tuple[str, str]]:
    """Each term of ``text`` in order, with the word it was cut from (to show a person)."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
    return list(zip(_stemmer().stemWords(words), words, strict=True)) if words else []


def term_counts(text: str) -> dict[str, int]:
    """Each term of ``text`` with how often it occurs."""
    return dict(Counter(terms(text)))


def unique_terms(text: str) -> list[str]:
    """The distinct terms of ``text`` (a query's), in the order they first occur."""
    return list(dict.fromkeys(terms(text)))


def idf(documents: int, holding: int) -> float:
    """Lucene's inverse document frequency, never negative: a term in every document still counts a
    little, where Robertson's original goes below zero past half of them."""
    return math.log(1 + (documents - holding + 0.5) / (holding + 0.5))


def bm25_weight(tf: int, length: int, avgdl: float, k1: float, b: float) -> float:
    """One term's share of a document's score, before its idf."""
    norm = 1 - b + (b * length / avgdl if avgdl > 0 else 0.0)
    return tf * (k1 + 1) / (tf + k1 * norm)
