"""The offline generator's consolidation: observations, threads and summaries written from what the
episodes said, by rule (``_prose.py``), in the JSON shapes a model is asked for.

An observation restates one thing an episode said as a fact about whoever said it, dated: a
sentence whose "yesterday" or "last week" now names the day; an answer joined to the question
before it (sources: both episodes); an image an episode shared (its ``shared`` field); and,
whole, every episode that mattered (its significance at or above the request's threshold). A
sentence that adds nothing to its episode is not restated: the episode itself is already what
recall finds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Final

import msgspec

from oneiros._text import FUNCTION_WORDS, keywords
from oneiros.events._types import Episode, SharedImage
from oneiros.generators._lines import SaidLine
from oneiros.generators._prose import CHITCHAT, day_text, is_small_talk, resolve_dates, third_person
from oneiros.generators._protocol import GenerationRequest
from oneiros.generators._units import ASSISTANTS, Units, committed, units

__all__ = ["CONSOLIDATION", "priority_of", "said_of"]

_DEFAULT_SALIENT = 0.7


def _json(**fields: object) -> str:
    return msgspec.json.encode(fields).decode()


def priority_of(line: SaidLine) -> str:
    """OpenSeed's levels for a fact: RED for what mattered most or went badly by surprise, YLW for
    what mattered or surprised, GRN for the rest."""
    if line.significance >= 0.8 or (line.outcome < 0 and line.surprise >= 0.5):
        return "RED"
    if line.significance >= 0.6 or line.surprise >= 0.5:
        return "YLW"
    return "GRN"


class _Fact(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    ticks: tuple[int, ...]
    priority: str = "GRN"
    subject: str | None = None
    about: str | None = None


class _Update(_Fact, frozen=True, kw_only=True):
    """A fact that gives a new value for something said before ("now", "changed to"): its ``key``
    names the thing, so the one said last is current and an earlier one on it superseded."""

    key: str


_UPDATE_CUE: Final = re.compile(
    r"\b(?:now|no longer|changed to|updated to|moved to|switched to|instead of|has been changed|"
    r"was changed|is changing to|went up to|went down to|dropped to|rose to|increased to|decreased to)\b",
    re.IGNORECASE,
)
_VALUE: Final = re.compile(
    r"\d|\b(?:v\d|version|january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b",
    re.IGNORECASE,
)
_SUBJECT_END: Final = re.compile(
    r"\s(?:is|are|was|were|has|have|had|will|now|averages|costs|takes|runs|uses|sits|stands|moved|changed|"
    r"switched|went|dropped|rose|increased|decreased)\b",
    re.IGNORECASE,
)
_SUBJECT_WORDS = 3


def _updated_key(sentence: str) -> str | None:
    """What an update is about: the content words before its verb ("The dashboard API now averages
    250 ms" is about "dashboard api"); None unless it both cues an update and gives a value."""
    if not _UPDATE_CUE.search(sentence) or not _VALUE.search(sentence):
        return None
    end = _SUBJECT_END.search(sentence)
    if end is None:
        return None
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w-]*", sentence[: end.start()])]
    content = [w for w in words if w not in FUNCTION_WORDS and w not in CHITCHAT][-_SUBJECT_WORDS:]
    return f"value:{' '.join(content)}" if content else None


class _Voice:
    """Who speaks in a request, so "you" can name the other party when there is exactly one."""

    def __init__(self, lines: Sequence[SaidLine]) -> None:
        self.speakers = sorted({line.speaker for line in lines if line.speaker})
        self.names = frozenset(s.lower() for s in self.speakers)

    def other(self, speaker: str | None) -> str | None:
        rest = [s for s in self.speakers if s != speaker]
        return rest[0] if speaker is not None and len(rest) == 1 else None

    def fact(self, text: str, line: SaidLine) -> tuple[str, list[date]]:
        """``text`` as ``line``'s speaker's fact, dates absolute from when it was said."""
        days: list[date] = []
        if line.when is not None:
            text, days, _ = resolve_dates(text, line.when.date())
        return third_person(text, line.speaker, self.other(line.speaker)), days

    def named(self, text: str, line: SaidLine) -> str:
        """``text``, opened with the speaker's name where it does not name them already."""
        if line.speaker is None or line.speaker.lower() in text.lower():
            return text
        return f"{line.speaker}: {text}"


def _head(line: SaidLine) -> str:
    return f"{day_text(line.when.date())}: " if line.when is not None else ""


def _assistant(line: SaidLine) -> bool:
    return line.speaker is not None and line.speaker.lower() in ASSISTANTS


def _kept(line: SaidLine, raw: str) -> Units:
    """What of ``line`` a fact may be made of: every whole sentence of what it said, but of an
    assistant's turn only what it decided or committed to, never its explanations."""
    found = units(raw)
    if _assistant(line):
        return Units(sentences=tuple(s for s in found.sentences if committed(s)), artifacts=found.artifacts)
    return found


def _observations_of(  # noqa: PLR0913, PLR0917 - one line and what it is read against
    line: SaidLine,
    before: SaidLine | None,
    voice: _Voice,
    salient: float,
    raws: dict[int, str],
    image: SharedImage | None,
) -> Iterator[_Fact]:
    head, level = _head(line), priority_of(line)
    kept = _kept(line, raws.get(line.tick, line.text))
    said = " ".join(kept.sentences)
    who = line.speaker or "I"
    if image is not None:
        shown = image.caption.strip() if image.caption else "an image"
        yield _Fact(text=f"{head}{who} shared {shown}.", ticks=(line.tick,), subject=line.speaker)
    for artifact in kept.artifacts:
        # Code is kept apart: named by what it is, never pasted into a fact.
        yield _Fact(text=f"{head}{who} shared {artifact}.", ticks=(line.tick,), subject=line.speaker)
    asked = _question(before, voice, raws) if before is not None and before.speaker != line.speaker else ""
    if asked and before is not None and line.speaker is not None and said:
        answer, _ = voice.fact(_fitting(kept.sentences), line)
        text = f"{head}{before.speaker} asked: {asked} {line.speaker} answered: {answer}"
        yield _Fact(text=text, ticks=(before.tick, line.tick), priority=level, subject=line.speaker)
    if line.significance >= salient and said:
        whole, days = voice.fact(said, line)
        about = days[0].isoformat() if len(days) == 1 else None
        text = head + voice.named(whole, line)
        yield _Fact(text=text, ticks=(line.tick,), priority=level, subject=line.speaker, about=about)
        return
    if line.when is None:
        return
    for sentence in kept.sentences:
        if sentence.endswith("?") or is_small_talk(sentence, voice.names):
            continue
        text, days, resolved = resolve_dates(sentence, line.when.date())
        key = _updated_key(sentence)
        if key is not None:
            text = voice.named(third_person(text, line.speaker, voice.other(line.speaker)), line)
            yield _Update(text=head + text, ticks=(line.tick,), priority=level, subject=line.speaker, key=key)
            continue
        if not resolved:
            continue  # it says nothing its episode does not: recall finds the episode itself
        text = voice.named(third_person(text, line.speaker, voice.other(line.speaker)), line)
        about = days[0].isoformat() if len(days) == 1 else None
        yield _Fact(text=head + text, ticks=(line.tick,), priority=level, subject=line.speaker, about=about)


_ANSWER = 600
"""An answer joined to its question keeps its leading whole sentences up to this many characters."""


def _fitting(kept: Sequence[str], limit: int = _ANSWER) -> str:
    """The leading sentences of ``kept`` that fit in ``limit`` characters (the first one always)."""
    out: list[str] = []
    size = 0
    for sentence in kept:
        if out and size + len(sentence) + 1 > limit:
            break
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)


def _question(line: SaidLine | None, voice: _Voice, raws: dict[int, str]) -> str:
    """The question sentences of ``line`` that ask something, as facts of its speaker."""
    if line is None or line.speaker is None:
        return ""
    said = units(raws.get(line.tick, line.text)).sentences
    asked = [s for s in said if s.endswith("?") and not is_small_talk(s, voice.names)]
    return voice.fact(" ".join(asked), line)[0] if asked else ""


def said_of(request: GenerationRequest) -> list[tuple[SaidLine, str]]:
    """The request's episodes as said lines, each with its text as written (``Episode.said``: with
    the image it shared)."""
    said = {e.tick: e.said() for e in _episodes(request)}
    return [(line, said.get(line.tick, line.text)) for line in _said(request)]


def _episodes(request: GenerationRequest) -> list[Episode]:
    given = request.given
    return [*([given.before] if given.before is not None else []), *given.episodes]


def _raws(request: GenerationRequest) -> dict[int, str]:
    """Each episode's own text as it was written, its lines and markdown intact: the structure a
    said line flattens is what tells a heading, a list item and a code block apart."""
    return {e.tick: e.summary for e in _episodes(request)}


def _images(request: GenerationRequest) -> dict[int, SharedImage]:
    """The images the request's episodes shared, by tick."""
    return {e.tick: e.shared for e in _episodes(request) if e.shared is not None}


def _said(request: GenerationRequest) -> list[SaidLine]:
    """The request's episodes as their said lines show them, the one said before them first."""
    given = request.given
    before = [SaidLine.of(given.before, context=True)] if given.before is not None else []
    return [*before, *(SaidLine.of(e) for e in given.episodes)]


def _observe(request: GenerationRequest) -> str:
    lines = _said(request)
    raws, images = _raws(request), _images(request)
    voice = _Voice(lines)
    salient = request.given.salient if request.given.salient is not None else _DEFAULT_SALIENT
    facts: list[_Fact] = []
    for index, line in enumerate(lines):
        if not line.context:
            before = lines[index - 1] if index else None
            facts.extend(_observations_of(line, before, voice, salient, raws, images.get(line.tick)))
    return msgspec.json.encode({"observations": facts}).decode()


def _clause(line: SaidLine, raw: str, subject: str, voice: _Voice, limit: int = 200) -> str | None:
    """The whole sentence of ``line`` that names ``subject`` (its first sentence when none does),
    as a dated fact; None when that sentence is longer than ``limit`` characters or the line says
    no whole sentence: a clause is dropped, never cut."""
    every = _kept(line, raw).sentences
    if not every:
        return None
    word = re.compile(rf"\b{re.escape(subject)}", re.IGNORECASE)
    chosen = next((s for s in every if word.search(s)), every[0])
    text, _ = voice.fact(chosen, line)
    text = voice.named(text, line)
    return None if len(text) > limit else _head(line) + text


def _thread(request: GenerationRequest) -> str:
    lines = _said(request)
    raws = _raws(request)
    subject = request.given.subject or "this"
    voice = _Voice(lines)
    parts = [c for line in lines if (c := _clause(line, raws.get(line.tick, line.text), subject, voice))]
    return _json(thread=f"{subject}, across days. " + " | ".join(parts) if parts else "")


def _summary(request: GenerationRequest) -> str:
    """What the episodes talked about most, as a list of words, and the episodes (at most the
    request's cap) that hold most of them; only those episodes' words are named."""
    lines = _said(request)
    voice = _Voice(lines)
    cap = request.given.cap if request.given.cap is not None else 3
    excluded = FUNCTION_WORDS | CHITCHAT

    def words(line: SaidLine) -> set[str]:
        found = keywords(line.text, 50)
        return {w for w in found if w not in excluded and not any(n.startswith(w) for n in voice.names)}

    held = {line.tick: words(line) for line in lines}
    top = [w for w, _ in sorted(Counter(w for ws in held.values() for w in ws).items(), key=lambda kv: (-kv[1], kv[0]))]
    top = top[:12]
    chosen = sorted(lines, key=lambda line: (-len(held[line.tick] & set(top)), line.tick))[:cap]
    kept = [w for w in top if any(w in held[line.tick] for line in chosen)]
    if not kept:
        return _json(summary="", ticks=[])
    first = min(chosen, key=lambda line: line.tick)
    who = ", ".join(voice.speakers) or "I"
    day = f", {day_text(first.when.date())}" if first.when is not None else ""
    return _json(summary=f"{who}{day}, talked about: {', '.join(kept)}.", ticks=sorted(line.tick for line in chosen))


CONSOLIDATION: Final = {"observe": _observe, "thread": _thread, "summary": _summary}
"""The offline writers of the consolidation tasks, each from the request to the text a model would give."""
