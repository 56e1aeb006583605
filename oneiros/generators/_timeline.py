"""The offline generator's timelines: for one subject, what each of the user's turns on it brought
up, as one whole short clause a turn, in the JSON shape the ``timeline`` prompt asks a model for.

The phase gives the turns (in order) and the subject; the dates and the turn ids are the phase's to
write, from the episodes, so the generator only says what each turn brought up. A clause is the
turn's first sentence naming the subject (else its first), in the third person, whole or as its
first clause when the sentence is long; a turn with neither (a bare question, a code dump) gives no
entry. English only.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from oneiros.generators._observe import said_of
from oneiros.generators._prose import third_person
from oneiros.generators._protocol import GenerationRequest
from oneiros.generators._units import ASSISTANTS, clean_sentence, units

__all__ = ["TIMELINE", "clause_of"]

_MOST_WORDS: Final = 18
"""A clause longer than this is an explanation, not what was brought up."""
_LEAST_WORDS: Final = 4
_CLAUSE: Final = re.compile(r",\s+(?:and\s+|but\s+|so\s+)?")
_ASKING: Final = re.compile(
    r"^(?:can|could|would|will|do|does|did|is|are|should|how|what|why|which|where|when|who)\b", re.I
)
_FILLER: Final = re.compile(r"^(?:hmm+|um+|uh+|ok(?:ay)?|so|well|yeah|yes|thanks|sure)\b[,.!]?\s*", re.I)


class _Entry(msgspec.Struct, frozen=True):
    tick: int
    text: str


def _short(sentence: str) -> str | None:
    """``sentence`` whole when short, else its first clause when that stands alone; None else."""
    sentence = _FILLER.sub("", sentence).strip()
    if _ASKING.match(sentence):
        return None
    if not sentence or sentence.endswith("?"):
        # A question says what was asked, not what the user brought up of their own.
        head = _CLAUSE.split(sentence, maxsplit=1)[0] if sentence else ""
        if not head or head.endswith("?"):
            return None
        sentence = head
    if len(sentence.split()) <= _MOST_WORDS:
        return sentence
    head = _CLAUSE.split(sentence, maxsplit=1)[0]
    return head if len(head.split()) <= _MOST_WORDS else None


def clause_of(text: str, subject: str, speaker: str | None) -> str | None:
    """What a turn by ``speaker`` brought up about ``subject``: one whole short clause in the third
    person, without its full stop, or None when no sentence of it can be one."""
    found = units(text).sentences
    wanted = subject.lower()
    ordered = sorted(found, key=lambda s: wanted not in s.lower())
    for sentence in ordered:
        short = _short(sentence.rstrip(".!"))
        if short is None or len(short.split()) < _LEAST_WORDS:
            continue
        clean = clean_sentence(third_person(short, speaker))
        if clean is not None:
            return clean.rstrip(".")
    return None


def _timeline(request: GenerationRequest) -> str:
    """One entry for each of the request's user turns that can say what it brought up."""
    subject = request.given.subject or ""
    entries: list[_Entry] = []
    for line, raw in said_of(request):
        if line.context or (line.speaker is not None and line.speaker.lower() in ASSISTANTS):
            continue
        clause = clause_of(raw, subject, line.speaker)
        if clause is not None:
            entries.append(_Entry(tick=line.tick, text=clause))
    return msgspec.json.encode({"timeline": entries}).decode()


TIMELINE: Final = {"timeline": _timeline}
"""The offline writer of the timeline task."""
