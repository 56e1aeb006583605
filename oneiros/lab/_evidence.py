"""What an evaluation asks and how it is scored: conversations as dated sessions of episodes, the
questions with the turns that hold their answer (evidence), and evidence recall@k. A benchmark's
own format and answer score live beside this (LoCoMo's in ``_locomo.py``, BEAM's in ``_beam.py``);
a chat transcript with a file of questions is read here.

Evidence recall@k is the share of a question's evidence turns covered by the turns the first k
items of recall's one ranking stand for (results and related dreams merged by rank, each item one
slot). A question whose evidence names no turn is left out and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros.episodes._conversations import chat_batches, json_lines
from oneiros.episodes._parts import refs_of
from oneiros.events._types import Episode
from oneiros.projections._recall import RecallItem

__all__ = [
    "Conversation",
    "Question",
    "Session",
    "chat_conversation",
    "evidence_recall",
    "golem_name",
]

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class Question(msgspec.Struct, frozen=True, kw_only=True):
    question: str
    evidence: tuple[str, ...]
    category: str = "all"
    answer: str | None = None
    current: tuple[str, ...] = ()
    """For a knowledge update: the turns that state the current fact (BEAM's ``updated_info``)."""
    outdated: tuple[str, ...] = ()
    """And those that state the fact it replaced, which a reader should get after the current."""


class Session(msgspec.Struct, frozen=True, kw_only=True):
    when: datetime
    episodes: list[Episode]
    observations: list[tuple[str, str, tuple[str, ...]]] = []
    """Reference observations: (speaker, fact, the turns it comes from); LoCoMo's own."""

    @property
    def ends(self) -> datetime:
        last = self.episodes[-1].time
        return last if last is not None else self.when


class Conversation(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    sessions: list[Session]
    questions: list[Question]
    skipped: int = 0
    """Questions left out: another category, or evidence naming no turn."""
    left_out: dict[str, int] = {}
    """Why they were left out, where the reader says: reason -> questions."""

    @property
    def has_reference(self) -> bool:
        return any(s.observations for s in self.sessions)


def golem_name(sample_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", sample_id).strip("-._") or "conversation"
    return cleaned[:128]


class _QuestionLine(msgspec.Struct, frozen=True, kw_only=True):
    question: str
    evidence: list[str | int]
    category: str | None = None
    answer: str | int | float | None = None


def _question_lines(path: Path) -> Iterator[Question]:
    for number, q in json_lines(path, msgspec.json.Decoder(_QuestionLine)):
        if not q.evidence:
            raise EpisodeFileError(str(path), "`evidence` names no message", number)
        answer = None if q.answer is None else str(q.answer)
        yield Question(
            question=q.question,
            evidence=tuple(str(e) for e in q.evidence),
            category=q.category or "all",
            answer=answer,
        )


def chat_conversation(transcript: str | Path, questions: str | Path, *, name: str, gap: timedelta) -> Conversation:
    """A chat transcript cut into sessions where ``gap`` or more passes between two messages, and
    the questions of a JSON-lines file (``question``, ``evidence``: message ids, optional
    ``category`` and ``answer``); evidence naming no message of the transcript is an error."""
    sessions: list[list[Episode]] = []
    for batch in chat_batches(transcript):
        for episode in batch:
            last = sessions[-1][-1].time if sessions else None
            if last is None or episode.time is None or episode.time - last >= gap:
                sessions.append([])
            sessions[-1].append(episode)
    if not sessions:
        raise EpisodeFileError(str(transcript), "no messages in file")
    known = {r for s in sessions for e in s if e.ref for r in refs_of(e.ref)}
    asked = list(_question_lines(Path(questions)))
    for n, q in enumerate(asked, start=1):
        unknown = [e for e in q.evidence if e not in known]
        if unknown:
            raise EpisodeFileError(str(questions), f"evidence {unknown[0]!r} names no message of {transcript}", n)
    if not asked:
        raise EpisodeFileError(str(questions), "no questions in file")
    return Conversation(
        name=golem_name(name),
        sessions=[Session(when=s[0].time or datetime.min, episodes=s) for s in sessions],
        questions=asked,
    )


def evidence_recall(evidence: Sequence[str], ranked: Sequence[RecallItem], k: int) -> float:
    """The share of ``evidence`` among the turns the first ``k`` items stand for (a part of a long
    turn, ``<id>#2``, stands for its turn)."""
    covered = {r for item in ranked[:k] for ref in item.source_refs for r in refs_of(ref)}
    return sum(1 for e in evidence if e in covered) / len(evidence)
