"""The offline generator's contradictions: a user's "I've never ..." and another turn of theirs
that says they did it, found by rule in the JSON shape the ``contradiction`` prompt asks a model for.

A never-statement is a clause "I've never ...", "I have never ...", "I haven't ever ..." or
"I've not ..."; what it is about is its content words after the negation. Another of the user's
clauses affirms it when it speaks in the first person, is neither negated nor a question or a
condition, and shares two of those words, or one that is a name ("Zotero", "Flask"). Precision
over reach: a wrong contradiction makes an agent doubt what the user said, so the rule asks a lot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import msgspec

from oneiros._text import FUNCTION_WORDS
from oneiros.generators._lines import SaidLine
from oneiros.generators._observe import said_of
from oneiros.generators._protocol import GenerationRequest
from oneiros.generators._units import ASSISTANTS, prose_sentences

__all__ = ["CONTRADICTION", "negated_object", "stems"]

# What was never done runs to the clause's end, with an example given after it (", like Zotero").
_OBJECT: Final = r"[^,;:.?!]+(?:,\s*(?:like|such as|including|say)\s+[^,;:.?!]+)?"
_NEVER: Final = re.compile(
    r"\bI(?:'ve|\s+have)\s+(?:(?:really|actually|honestly|truly)\s+)?(?:never|not)\s+(?:(?:ever|really|actually)\s+)?"
    rf"(?P<what>{_OBJECT})|\bI\s+haven'?t\s+ever\s+(?P<ever>{_OBJECT})",
    re.IGNORECASE,
)
_CLAUSE: Final = re.compile(r"[,;:.?!]\s+|\s+(?:but|so|and then|although|though|because)\s+", re.IGNORECASE)
_NEGATED: Final = re.compile(r"\b(?:never|not|no|none|nothing|n't|without|neither|nor)\b|n't\b", re.IGNORECASE)
_FIRST_PERSON: Final = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|we|our|we've|we're)\b")
_NOT_A_STATEMENT: Final = re.compile(
    r"^\s*(?:how|what|which|why|where|when|who|can|could|would|should|shall|will|is|are|do|does|did|if|unless|"
    r"whether|maybe|perhaps)\b",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"[A-Za-z][\w+#-]*")
# Words an experience is told with, not what it is about: "never used any X before" is about X.
_GENERIC_WORDS: Final = """
    any anything ever before really actually yet project projects thing things one time times kind
    sort able much many some something used use using done do doing tried try trying been had have
    got get getting made make work worked working related such like also sure still just even this
    that these those other new
"""
_GENERIC: Final = frozenset(_GENERIC_WORDS.split())
_PLACE: Final = frozenset({"to", "of", "at", "in", "from", "with", "for", "outside", "near", "by"})
# A plan or a worry about doing something is not having done it.
_PLAN: Final = re.compile(
    r"\b(?:worried|nervous|anxious|thinking|planning|plan|going to|want|wanted|hope|hoping|need|should|"
    r"will|would|might|could|deadline)\b|'ll\b",
    re.IGNORECASE,
)
_SUFFIXES: Final = ("ings", "ing", "ies", "ed", "es", "s")
_SHARED = 2
_LONGEST_CLAUSE = 240


def _stem(word: str) -> str:
    """A crude English stem, enough to meet "missed" with "missing" and "routes" with "route"."""
    lower = word.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 3:
            lower = lower[: -len(suffix)]
            break
    return lower[:-1] if len(lower) > 4 and lower.endswith("e") else lower


def stems(text: str) -> dict[str, bool]:
    """The content words of ``text`` as stems, each with whether it was written as a name (a
    capital inside the sentence, a digit, a dot or a plus: "Zotero", "Flask-Login", "C++")."""
    out: dict[str, bool] = {}
    for n, word in enumerate(_WORD.findall(text)):
        lower = word.lower()
        if len(lower) < 3 or lower in FUNCTION_WORDS or lower in _GENERIC:
            continue
        named = (word[0].isupper() and n > 0 and word != "I") or any(c.isdigit() or c in "+#" for c in word)
        stem = _stem(word)
        out[stem] = out.get(stem, False) or named
    return out


def negated_object(sentence: str) -> tuple[str, str] | None:
    """The never-statement in ``sentence``, as written, and what it says was never done; None without one."""
    found = _NEVER.search(sentence)
    if found is None:
        return None
    what = (found.group("what") or found.group("ever") or "").strip()
    if not what:
        return None
    return found.group(0).strip(), what


def _clauses(text: str) -> Iterable[str]:
    for sentence in prose_sentences(text):
        yield from (c.strip() for c in _CLAUSE.split(sentence) if c and c.strip())


def _standalone(what: str, about: dict[str, bool]) -> list[set[str]]:
    """The names in ``what`` that say what it is about, each with the content words it makes a
    compound with ("API key" is about keys of one API: both must be said); a place or a person it
    was done at or for ("outside of Montserrat", "to Greg") says too little alone and is left out."""
    words = _WORD.findall(what)
    out: list[set[str]] = []
    for n, word in enumerate(words):
        stem = _stem(word)
        if not about.get(stem) or (n and words[n - 1].lower() in _PLACE):
            continue
        near = {_stem(w) for w in words[max(0, n - 1) : n + 2]} & about.keys()
        out.append(near | {stem})
    return out


def _affirms(clause: str, what: str, about: dict[str, bool]) -> bool:
    """Whether ``clause`` says the user did what ``what`` (its stems ``about``) says they never did:
    it shares the verb and another word, or half of the words, or a name that says alone what it
    is about."""
    if len(clause) > _LONGEST_CLAUSE or _NEGATED.search(clause) or _NOT_A_STATEMENT.search(clause):
        return False
    if not _FIRST_PERSON.search(clause):
        return False
    said = stems(clause).keys() | {_stem(w) for w in _WORD.findall(clause)}
    shared = about.keys() & said
    verb = _stem(_WORD.findall(what)[0]) if _WORD.findall(what) else ""
    if verb in said and len(shared - {verb}) >= 1 and not _PLAN.search(clause):
        return True
    if len(shared) >= max(_SHARED, (len(about) + 1) // 2):
        return True
    return any(name <= said for name in _standalone(what, about))


def _day(line: SaidLine) -> str | None:
    day = line.when
    return None if day is None else f"{day.day} {day:%B %Y}"


def _who(line: SaidLine) -> str:
    speaker = line.speaker or "user"
    return "the user" if speaker.lower() == "user" else speaker


_JOINER: Final = re.compile(r"^(?:and|so|but|then|also)\s+", re.IGNORECASE)


def _quoted(clause: str) -> str:
    """``clause`` as a quotation that stands alone: no joining word before it, no stop or question mark after."""
    words = _JOINER.sub("", " ".join(clause.replace('"', "'").split()))
    return '"' + words.rstrip(",;:.?!") + '"'


def _sentence(never: SaidLine, said: str, other: SaidLine, clause: str) -> str:
    """Both statements, each with when it was said, in one whole sentence."""
    first, then = _day(never), _day(other)
    opening = f"On {first} {_who(never)} said" if first else f"{_who(never).capitalize()} said"
    later = f"on {then} they said" if then else "elsewhere they said"
    return f"{opening} {_quoted(said)}, but {later} {_quoted(clause)}."


def _contradiction(request: GenerationRequest) -> str:
    """Each user never-statement with the first other user clause that affirms it."""
    users = [
        (line, raw)
        for line, raw in said_of(request)
        if not line.context and line.speaker is not None and line.speaker.lower() not in ASSISTANTS
    ]
    found: list[dict[str, object]] = []
    # The first message is the never-statement asked about; the others are weighed against it.
    for line, raw in users[:1]:
        for sentence in prose_sentences(raw):
            negated = negated_object(sentence)
            about = stems(negated[1]) if negated is not None else {}
            if negated is None or not about:
                continue
            match = next(
                (
                    (other, clause)
                    for other, text in users
                    if other.tick != line.tick and other.speaker == line.speaker
                    for clause in _clauses(text)
                    if _affirms(clause, negated[1], about)
                ),
                None,
            )
            if match is not None:
                other, clause = match
                text = _sentence(line, negated[0], other, clause)
                found.append({"text": text, "ticks": [line.tick, other.tick]})
                break
    return msgspec.json.encode({"contradictions": found}).decode()


CONTRADICTION: Final = {"contradiction": _contradiction}
"""The offline writer of the contradiction task."""
