"""The offline generator's consolidation: observations, threads and summaries written from what the
episodes said, by rule (``_prose.py``), in the JSON shapes a model is asked for.

An observation restates one thing an episode said as a fact about whoever said it, dated: a
sentence whose "yesterday" or "last week" now names the day; an answer joined to the question
before it (sources: both episodes); an image an episode shared; and, whole, every episode that
mattered (its significance at or above the request's threshold). A sentence that adds nothing to
its episode is not restated: the episode itself is already what recall finds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Final

import msgspec

from oneiros._text import FUNCTION_WORDS, keywords
from oneiros.generators._lines import SaidLine
from oneiros.generators._prose import CHITCHAT, day_text, is_small_talk, resolve_dates, sentences, third_person
from oneiros.generators._protocol import GenerationRequest

__all__ = ["CONSOLIDATION", "priority_of"]

_IMAGE: Final = re.compile(r"\s*\[shares? ([^\]]+)\]")
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


def _observations_of(line: SaidLine, before: SaidLine | None, voice: _Voice, salient: float) -> Iterator[_Fact]:
    head, level = _head(line), priority_of(line)
    image = _IMAGE.search(line.text)
    said = _IMAGE.sub("", line.text).strip()
    if image is not None:
        who = line.speaker or "I"
        yield _Fact(text=f"{head}{who} shared {image.group(1).strip()}.", ticks=(line.tick,), subject=line.speaker)
    asked = _question(before, voice) if before is not None and before.speaker != line.speaker else ""
    if asked and before is not None and line.speaker is not None and said:
        answer, _ = voice.fact(said, line)
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
    for sentence in sentences(said):
        if sentence.endswith("?") or is_small_talk(sentence, voice.names):
            continue
        text, days, resolved = resolve_dates(sentence, line.when.date())
        if not resolved:
            continue  # it says nothing its episode does not: recall finds the episode itself
        text = voice.named(third_person(text, line.speaker, voice.other(line.speaker)), line)
        about = days[0].isoformat() if len(days) == 1 else None
        yield _Fact(text=head + text, ticks=(line.tick,), priority=level, subject=line.speaker, about=about)


def _question(line: SaidLine | None, voice: _Voice) -> str:
    """The question sentences of ``line`` that ask something, as facts of its speaker."""
    if line is None or line.speaker is None:
        return ""
    asked = [s for s in sentences(_IMAGE.sub("", line.text)) if s.endswith("?") and not is_small_talk(s, voice.names)]
    return voice.fact(" ".join(asked), line)[0] if asked else ""


def _said(request: GenerationRequest) -> list[SaidLine]:
    """The request's episodes as their said lines show them, the one said before them first."""
    given = request.given
    before = [SaidLine.of(given.before, context=True)] if given.before is not None else []
    return [*before, *(SaidLine.of(e) for e in given.episodes)]


def _observe(request: GenerationRequest) -> str:
    lines = _said(request)
    voice = _Voice(lines)
    salient = request.given.salient if request.given.salient is not None else _DEFAULT_SALIENT
    facts: list[_Fact] = []
    for index, line in enumerate(lines):
        if not line.context:
            before = lines[index - 1] if index else None
            facts.extend(_observations_of(line, before, voice, salient))
    return msgspec.json.encode({"observations": facts}).decode()


def _clause(line: SaidLine, subject: str, voice: _Voice, limit: int = 200) -> str:
    """The sentence of ``line`` that names ``subject`` (its first sentence when none does), as a
    dated fact, cut at ``limit`` characters on a word."""
    said = _IMAGE.sub("", line.text).strip() or line.text
    every = sentences(said) or [said]
    word = re.compile(rf"\b{re.escape(subject)}", re.IGNORECASE)
    chosen = next((s for s in every if word.search(s)), every[0])
    text, _ = voice.fact(chosen, line)
    text = voice.named(text, line)
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " ..."
    return _head(line) + text


def _thread(request: GenerationRequest) -> str:
    lines = _said(request)
    subject = request.given.subject or "this"
    voice = _Voice(lines)
    parts = [_clause(line, subject, voice) for line in lines]
    return _json(thread=f"{subject}, across days. " + " | ".join(parts))


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
