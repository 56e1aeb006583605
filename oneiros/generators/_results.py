"""Model output parsed into typed results. Anything that does not parse raises MalformedOutput."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from oneiros._errors import MalformedOutput
from oneiros.events._observations import Priority

__all__ = [
    "CounterfactualResult",
    "DepotentiationResult",
    "DreamResult",
    "HypothesisResult",
    "InsightResult",
    "NoveltyResult",
    "ObservationResult",
    "ObservedFact",
    "PatternResult",
    "ProfileFact",
    "ProfileResult",
    "SummaryResult",
    "ThreadResult",
    "ThreatResult",
    "TimelineEntry",
    "TimelineResult",
    "parse_dream",
    "parse_json",
    "parse_partial",
]

Text = Annotated[str, msgspec.Meta(min_length=1)]
Score = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class PatternResult(msgspec.Struct, frozen=True):
    pattern: Text


class NoveltyResult(msgspec.Struct, frozen=True):
    scores: list[Score]


class CounterfactualResult(msgspec.Struct, frozen=True):
    hypothesis: Text
    outcome: Text
    lesson: Text


class HypothesisResult(msgspec.Struct, frozen=True):
    hypothesis: Text
    test: str = ""


class ThreatResult(msgspec.Struct, frozen=True):
    scenario: Text
    response: Text
    severity: Score


class DepotentiationResult(msgspec.Struct, frozen=True):
    happened: Text
    felt: str
    lesson: Text


class InsightResult(msgspec.Struct, frozen=True):
    insight: Text


class ObservedFact(msgspec.Struct, frozen=True, kw_only=True):
    """One fact of an observation step: its text, the episodes (by tick) it restates, OpenSeed's
    level, whom it is about and the day it happened (ISO ``YYYY-MM-DD``) where it says one."""

    text: Text
    ticks: tuple[int, ...] = ()
    priority: Priority = "GRN"
    subject: str | None = None
    about: str | None = None
    key: str | None = None
    """What a fact giving a new value is about: a later fact with the same key supersedes it."""


class ObservationResult(msgspec.Struct, frozen=True):
    observations: tuple[ObservedFact, ...] = ()


class ProfileFact(msgspec.Struct, frozen=True, kw_only=True):
    """One profile entry of a profile step: what the user stands by (an instruction, a preference,
    a fact about themselves or their project), what it is about (``key``), and its messages."""

    text: Text
    key: str
    kind: Literal["instruction", "preference", "identity", "project"] = "preference"
    ticks: tuple[int, ...] = ()


class ProfileResult(msgspec.Struct, frozen=True):
    profile: tuple[ProfileFact, ...] = ()


class TimelineEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a timeline step: the turn (``tick``) and what the user brought up in it, as one
    whole short clause (the phase adds its date and the turn's id)."""

    tick: int
    text: Text


class TimelineResult(msgspec.Struct, frozen=True):
    timeline: tuple[TimelineEntry, ...] = ()


class ContradictionFact(msgspec.Struct, frozen=True, kw_only=True):
    """Two of the user's statements that cannot both hold, in one sentence naming both and when
    each was said, and the ticks of their messages."""

    text: Text
    ticks: tuple[int, ...] = ()


class ContradictionResult(msgspec.Struct, frozen=True):
    contradictions: tuple[ContradictionFact, ...] = ()


class ThreadResult(msgspec.Struct, frozen=True):
    thread: str


class SummaryResult(msgspec.Struct, frozen=True):
    summary: str
    ticks: tuple[int, ...] = ()


class DreamResult(msgspec.Struct, frozen=True):
    fragments: tuple[str, ...]
    thread: str


_R = TypeVar("_R")
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json(call_key: str, task: str, text: str, result: type[_R]) -> _R:
    """The first JSON object in ``text`` (models like to wrap it in prose or a code fence) as ``result``."""
    match = _OBJECT.search(text)
    if match is None:
        raise MalformedOutput(call_key, task, "no JSON object in the output")
    try:
        raw: Any = msgspec.json.decode(match.group(0))
        return msgspec.convert(raw, result)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise MalformedOutput(call_key, task, str(exc)) from None


def parse_partial(call_key: str, text: str) -> str:
    """A hypnagogic partial completion: any non-empty text, on one line."""
    cleaned = " ".join(text.split())
    if not cleaned:
        raise MalformedOutput(call_key, "partial", "empty completion")
    return cleaned


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def parse_dream(call_key: str, text: str, *, most: int = 6) -> DreamResult:
    """Bumblebee's two sections: ``FRAGMENTS:`` (one fragment a line) and ``THREAD:`` (one sentence)."""
    head, sep, tail = text.partition("THREAD:")
    if not sep:
        raise MalformedOutput(call_key, "dream", "no THREAD: section")
    _, fsep, body = head.partition("FRAGMENTS:")
    if not fsep:
        raise MalformedOutput(call_key, "dream", "no FRAGMENTS: section")
    fragments = tuple(line for line in (_BULLET.sub("", raw).strip() for raw in body.splitlines()) if line)[:most]
    thread = " ".join(tail.split())
    if not fragments:
        raise MalformedOutput(call_key, "dream", "FRAGMENTS: is empty")
    if not thread:
        raise MalformedOutput(call_key, "dream", "THREAD: is empty")
    return DreamResult(fragments=fragments, thread=thread)
