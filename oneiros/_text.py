"""Words: what the offline generator writes from and what staged criteria are matched on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = [
    "FUNCTION_WORDS",
    "IMAGERY",
    "STOPWORDS",
    "article",
    "content_words",
    "counted",
    "entities",
    "keywords",
    "plural",
    "rank",
]

_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
FUNCTION_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their theirs
    themselves what which who whom this that that'll these those am is are was were be been being have
    has had having do does did doing a an the and but if or because as until while of at by for with
    about against between into through during before after above below to from up down in out on off
    over under again further then once here there when where why how all any both each few more most
    other some such no nor not only own same so than too very s t can will just don don't should
    should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't
    hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't
    shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()  # noqa: SIM905 - read as prose
)
"""NLTK's English stop words (179): what recall leaves out of a query, and what says no fact."""
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


def plural(noun: str) -> str:
    """``noun``'s plural, for the nouns oneiros counts: "entry" "entries", "hypothesis"
    "hypotheses", "batch" "batches", else an s; of several words, the last one's ("staged output")."""
    head, space, word = noun.rpartition(" ")
    if word.endswith("is"):
        word = word[:-2] + "es"
    elif word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u", ""):
        word = word[:-1] + "ies"
    elif word.endswith(("s", "x", "z", "ch", "sh")):
        word += "es"
    else:
        word += "s"
    return head + space + word


def counted(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun`` in the number it takes: "1 entry", "2 entries", "0 ticks", "12,000 episodes" (a count
    the CLI prints said "1 entries moved", "stopped after 1 ticks"). ``plural_form`` where the
    plural is not :func:`plural`'s."""
    return f"{count:,} {noun if count == 1 else plural_form or plural(noun)}"


_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december mon tue tues wed thu thur thurs fri sat sun jan feb mar apr
    jun jul aug sep sept oct nov dec""".split()  # noqa: SIM905 - read as prose
)
_RUN = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?: [A-Z][a-z]+(?:[A-Z][a-z]+)*)*")


def entities(text: str, tags: Iterable[str] = ()) -> dict[str, str]:
    """What ``text`` names that a thread can follow across days: its ``tags``, and the runs of
    capitalised words it uses inside a sentence (a name, a place, a product: "Shadow", "Door
    Dash"), never a sentence's first word, a weekday, a month or a function word. Keyed by the
    lower-case form, each with the form shown. One pass of one expression: it reads every episode."""
    found: dict[str, str] = {}
    for tag in tags:
        key = tag.strip().lower()
        if key:
            found.setdefault(key, tag.strip())
    for match in _RUN.finditer(text):
        words = match.group(0).split(" ")
        if _opens(text, match.start()):
            words = words[1:]  # a sentence's first word is capitalised whatever it names
        run: list[str] = []
        for word in [*words, ""]:  # "" ends the last run
            lower = word.lower()
            if word and lower not in FUNCTION_WORDS and lower not in _CALENDAR:
                run.append(word)
                continue
            if run and (len(run) > 1 or len(run[0]) > 2):
                name = " ".join(run)
                found.setdefault(name.lower(), name)
            run = []
    return found


def _opens(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens a sentence: after ". ", "! ", "? " or a new line."""
    before = text[max(0, at - 3) : at]
    return before.endswith("\n") or before.rstrip(" \"'(").endswith((".", "!", "?")) or not before.strip(" \"'(")
