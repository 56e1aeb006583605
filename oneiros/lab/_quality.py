"""A text-quality line per arm: the share of dream outputs (observations, threads, summaries) a
reader would stumble on, by simple rules (docs/evaluation.md has them with examples):

* **cut**: ends mid-thought, in ``...`` (or ``…``), or with no sentence end (``.``, ``!``, ``?``,
  maybe inside a closing quote or bracket) after a comma, colon, dash or opening bracket, or a
  last word no sentence ends on (an article, a conjunction, a preposition that needs an object,
  a possessive);
* **markup**: carries markdown or code: a heading (a line opening with ``#``, or ``##`` to
  ``######`` before a space anywhere), ``**`` or ``__``, LaTeX (``\\(``, ``\\[``, ``\\text{``),
  a backtick, a tree drawing (``|--``, ``├``, ``└``, ``│``), a table row (a line opening with ``|``, or a
  ``|---`` rule);
* **ungrammatical**: a contraction on a word that is no pronoun ("user and others'll"), a word
  said twice in a row ("the the"), or a date running into another date or number with nothing
  between ("on 27 February 2026 20 March").

``flawed`` is the share with any of the three. The rules read text only, so the figures come the
same from a kept log (``--from``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from oneiros.events._observations import DreamObservation
from oneiros.lab._evidence import Conversation
from oneiros.store._store import EventStore

__all__ = ["TextQuality", "flaws", "text_quality"]

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_ELLIPSIS = re.compile(r"(\.\.\.|…)[\"')\]]*$")
_CLOSERS = "\"')]”’»"
# Words no sentence ends on: articles, conjunctions, prepositions that need an object, possessives.
# (Particles and auxiliaries, "log on", "it is", "like that", can end one, so they are not here.)
_DANGLING_WORDS = frozenset(
    (
        *("a", "an", "the", "and", "or", "but", "nor", "because", "than", "if", "whose"),
        *("of", "to", "with", "from", "into", "onto", "for", "by", "at", "via", "per", "between", "during"),
        *("my", "your", "our", "their", "its"),
    )
)
# A heading opens a line; run into a thread's text it is still two to six hashes before a space.
_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s|(?:^|\s)#{2,6}\s")
_LATEX = re.compile(r"\\[(\[]|\\[a-z]+\{")
_EMPHASIS = re.compile(r"\*\*|__")
_TREE = re.compile(r"\|--|\+--|[├└│]")
# A table row opens with a pipe or is a header rule; a pipe between words is how a thread joins its turns.
_TABLE = re.compile(r"(?m)^\s*\|.*\||\|\s*:?-{3,}")
_CONTRACTION = re.compile(r"\b([A-Za-z]+)['’](ll|ve|re|d)\b")
_PRONOUNS = frozenset(
    [
        "i",
        "you",
        "we",
        "they",
        "he",
        "she",
        "it",
        "that",
        "there",
        "who",
        "what",
        "where",
        "how",
        "here",
        "this",
        "those",
        "these",
        "one",
        "someone",
        "everyone",
        "anyone",
        "nobody",
        "somebody",
        "everybody",
        "let",
    ]
)
_DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.IGNORECASE)
_DOUBLING_ALLOWED = frozenset({"that", "had", "is", "do", "very", "bye", "ha", "no", "yes", "so", "really"})
_DATE = rf"\b\d{{1,2}}\s+(?:{_MONTHS})\s+\d{{4}}"
_DATE_RUN_ON = re.compile(rf"{_DATE}\s+(?:\d|(?:{_MONTHS})\b)", re.IGNORECASE)


class TextQuality(msgspec.Struct, frozen=True, kw_only=True):
    """Dream outputs read and the share of them with each flaw (0 when there are none)."""

    outputs: int = 0
    cut: float = 0.0
    markup: float = 0.0
    ungrammatical: float = 0.0
    flawed: float = 0.0


def _cut(text: str) -> bool:
    body = text.rstrip()
    if _ELLIPSIS.search(body):
        return True
    bare = body.rstrip(_CLOSERS)
    if not bare or bare[-1] in ".!?":
        return False
    if bare[-1] in ",;:-–—(":
        return True
    last = re.findall(r"[A-Za-z]+", bare[-40:])
    return bool(last) and last[-1].lower() in _DANGLING_WORDS


def _markup(text: str) -> bool:
    return any(p.search(text) for p in (_HEADING, _EMPHASIS, _TREE, _TABLE, _LATEX)) or "`" in text


def _ungrammatical(text: str) -> bool:
    if any(m.group(1).lower() not in _PRONOUNS for m in _CONTRACTION.finditer(text)):
        return True
    if any(m.group(1).lower() not in _DOUBLING_ALLOWED for m in _DOUBLED.finditer(text)):
        return True
    return bool(_DATE_RUN_ON.search(text))


def flaws(text: str) -> tuple[str, ...]:
    """Which of ``cut``, ``markup`` and ``ungrammatical`` ``text`` has."""
    found = (("cut", _cut(text)), ("markup", _markup(text)), ("ungrammatical", _ungrammatical(text)))
    return tuple(name for name, has in found if has)


def _shares(texts: Iterable[str]) -> TextQuality:
    counts = {"cut": 0, "markup": 0, "ungrammatical": 0, "flawed": 0}
    total = 0
    for text in texts:
        total += 1
        found = flaws(text)
        for name in found:
            counts[name] += 1
        counts["flawed"] += bool(found)
    if not total:
        return TextQuality()
    return TextQuality(outputs=total, **{k: round(v / total, 4) for k, v in counts.items()})


def text_quality(store: EventStore, conversations: Sequence[Conversation]) -> TextQuality:
    """The shares over every observation, thread and summary the conversations' golems' logs hold."""
    return _shares(
        record.event.text
        for conversation in conversations
        for record in store.read_stream(conversation.name, types=(DreamObservation,))
        if isinstance(record.event, DreamObservation)
    )
