"""Words: what the offline generator writes from and what staged criteria are matched on."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator

__all__ = [
    "ASSISTANTS",
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
    "topic_phrases",
    "topics",
]

_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
ASSISTANTS = frozenset({"assistant", "ai", "bot", "model", "system", "tool"})
"""Speaker names of the assistant's side of a transcript (lower case): its turns explain, and an
assistant keeps from them only what it decided or committed to."""
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


# What the user owns or works on, named as "my ..." / "our ..." (or "the ... feature"): a subject a
# timeline can follow. The words that only say which version or part of it ("my current code", "my
# project") name no subject of their own.
_OWNED = re.compile(r"\b(?:my|our)\s+(?=((?:[A-Za-z][\w-]*\s+){0,3}[A-Za-z][\w-]*))", re.IGNORECASE)
_PART = re.compile(
    r"\bthe\s+(?=((?:[a-z][\w-]*\s+){1,2}(?:feature|module|component|page|project|app|website|site|tracker|system))\b)",
    re.IGNORECASE,
)
_TOPIC_WORD = re.compile(r"[a-z][a-z0-9+#-]*")
_VERSION_WORDS = frozenset(
    """current new old initial existing first final own whole entire latest main overall previous updated
    basic simple recent last next""".split()  # noqa: SIM905 - read as prose
)
_VERBS = frozenset(
    """needs looks seems works uses includes feels gets got went took makes made keeps started became runs
    shows says wants""".split()  # noqa: SIM905 - read as prose
)
_PART_WORDS = frozenset(["project", "code", "implementation", "setup", "version", "draft", "work", "progress"])
# Alone, these say which part or aspect of something, not what: "my app" is the subject of every
# coding question, "my weather app" is one.
_NO_SUBJECT = frozenset(
    """code implementation approach understanding goal goals progress time question questions work schedule
    experience skills idea ideas thoughts plan plans needs attempt solution solutions accuracy calculation
    calculations knowledge head score mind life way answer answers problem problems issue issues concern
    concerns confidence focus part point end side best day days week weeks month months year years
    knowledge background preference preferences decision decisions opinion feedback results result list
    options option notes thing things stuff job role team app apps application applications program
    software system systems website site page pages server environment configuration config setup database
    data script scripts function functions file files test tests error errors project projects deadline
    deadlines task tasks timeline""".split()  # noqa: SIM905 - read as prose
)
_TOPIC_WORDS = 2
"""A subject is keyed by its last two words at most: "my personal budget tracker" and "my budget
tracker" are one."""


def _topic(words: list[str]) -> str | None:
    """The key of a possessive phrase's words: cut at the first function word or -ing verb, without
    the words that only say which version of it, keyed by its last words."""
    kept: list[str] = []
    for word in words:
        lower = word.lower()
        verb = lower in _VERBS or lower.endswith("ing") or (kept and lower.endswith("ed"))
        if lower in FUNCTION_WORDS or lower in _CALENDAR or verb or not _TOPIC_WORD.fullmatch(lower):
            break
        kept.append(lower)
    while kept and kept[0] in _VERSION_WORDS:
        del kept[0]
    while len(kept) > 1 and kept[-1] in _PART_WORDS:
        del kept[-1]
    kept = kept[-_TOPIC_WORDS:]
    if not kept or (len(kept) == 1 and (kept[0] in _NO_SUBJECT or len(kept[0]) < 3)):
        return None
    return " ".join(kept)


def topics(text: str) -> list[str]:
    """The subjects ``text`` names as its speaker's own ("my budget tracker", "our API", "the city
    autocomplete feature"), each keyed in lower case by its last two words, in order. English only."""
    found: dict[str, None] = {}
    for pattern in (_OWNED, _PART):
        for match in pattern.finditer(text):
            key = _topic(match.group(1).split())
            if key is not None:
                found.setdefault(key)
    return list(found)


def topic_phrases(text: str) -> set[str]:
    """Every word and pair of adjacent words of ``text`` in lower case: what a topic key is looked
    up in, so a later "a budget tracker" counts for the subject "my budget tracker" named."""
    words = _TOPIC_WORD.findall(text.lower())
    return {*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))}
