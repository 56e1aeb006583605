"""LoCoMo, the benchmark (Maharana et al. 2024): its JSON format, read as dated sessions of
episodes with the reference observations and questions; its question categories; and its answer
score, token F1 after its own normalisation (docs/evaluation.md).

LoCoMo dates a session, not its turns: a session's turns are given its date and time plus one
minute per turn before them, so they stay in order and the days between sessions stay days. A
turn's image is the episode's ``shared`` field, its caption where the turn has one. ``oneiros
import --format locomo`` records a file with :func:`locomo_samples` and :func:`locomo_sessions`;
``oneiros eval locomo`` reads it with :func:`locomo_conversations`.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros._input import DECODE_ERRORS, unreadable
from oneiros.episodes._conversations import turn_episodes
from oneiros.events._types import Episode, SharedImage
from oneiros.lab._evidence import Conversation, Question, Session, golem_name

__all__ = [
    "LOCOMO_CATEGORIES",
    "LocomoSample",
    "LocomoSession",
    "answer_f1",
    "locomo_conversations",
    "locomo_date",
    "locomo_f1",
    "locomo_samples",
    "locomo_sessions",
    "normalised_ids",
]

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""The categories scored; 5 (adversarial) has no answer in the conversation and is left out."""
_TURN_STEP = timedelta(minutes=1)


class LocomoTurn(msgspec.Struct, frozen=True, kw_only=True):
    speaker: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    dia_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    text: str = ""
    blip_caption: str | None = None
    img_url: list[str] | str | None = None

    def shared(self) -> SharedImage | None:
        """The image the turn shared: with its caption, or none where it has only a URL."""
        if self.blip_caption:
            return SharedImage(caption=self.blip_caption)
        return SharedImage() if self.img_url else None


class LocomoQuestion(msgspec.Struct, frozen=True, kw_only=True):
    question: str
    category: int
    evidence: list[str] = []
    answer: str | int | float | None = None


class LocomoSample(msgspec.Struct, frozen=True, kw_only=True):
    """One LoCoMo conversation: its sessions (``session_<n>`` and ``session_<n>_date_time`` keys of
    ``conversation``), its questions and, per session, reference observations with their turns."""

    sample_id: Annotated[str, msgspec.Meta(min_length=1)]
    conversation: dict[str, str | list[LocomoTurn]]
    qa: list[LocomoQuestion] = []
    observation: dict[str, Any] = {}
    """``session_<n>_observation``: speaker -> [[fact, turn id or ids], ...]; read leniently (an
    entry of another shape is passed over), since only the reference arm uses it."""


class LocomoSession(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    when: datetime
    episodes: list[Episode]
    observations: list[tuple[str, str, tuple[str, ...]]]
    """LoCoMo's own observations of the session: (speaker, fact, the turns it comes from)."""


_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m) on (\d{1,2}) ([A-Za-z]+),? (\d{4})", re.IGNORECASE)
_ID = re.compile(r"D:?(\d+):(\d+)")


def locomo_date(text: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` as an aware datetime (UTC), or None when it is not one."""
    found = _DATE.search(text)
    if found is None:
        return None
    hour, minute, half, day, month, year = found.groups()
    hours = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    try:
        parsed = datetime.strptime(f"{day} {month[:3]} {year} {hours}:{minute}", "%d %b %Y %H:%M")
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC)


def normalised_ids(raw: str | list[str]) -> tuple[str, ...]:
    """Dialog ids as LoCoMo writes them, tidied: ``"D8:6; D9:17"`` is two, ``"D:11:26"`` is
    ``D11:26``, ``" D1:3 "`` is ``D1:3``, and ``"D"`` none."""
    parts = raw if isinstance(raw, list) else [raw]
    return tuple(f"D{int(a)}:{int(b)}" for part in parts for a, b in _ID.findall(str(part)))


def locomo_samples(path: str | Path) -> list[LocomoSample]:
    """Every conversation of a LoCoMo-format file; a bad one is one error naming the file and where."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EpisodeFileError(str(path), exc.strerror or str(exc)) from None
    try:
        samples = msgspec.json.decode(data, type=list[LocomoSample])
    except DECODE_ERRORS as exc:
        raise EpisodeFileError(str(path), f"not a LoCoMo file: {unreadable(exc, data)}") from None
    if not samples:
        raise EpisodeFileError(str(path), "no conversations in file")
    return samples


def _session_numbers(sample: LocomoSample) -> list[int]:
    return sorted(int(key.split("_")[1]) for key in sample.conversation if re.fullmatch(r"session_\d+", key))


def locomo_sessions(
    sample: LocomoSample, path: str, first_tick: int = 1, *, empty_ok: bool = False
) -> list[LocomoSession]:
    """The sample's sessions in order, as episodes ticked from ``first_tick``; a session without a
    date, or a turn id seen before, is an error naming the sample and the session or turn. Empty
    sessions and turns that say nothing (no text, no image) are passed over."""
    out: list[LocomoSession] = []
    tick = first_tick
    seen: set[str] = set()
    for number in _session_numbers(sample):
        turns = sample.conversation[f"session_{number}"]
        if not isinstance(turns, list):
            raise EpisodeFileError(path, f"{sample.sample_id} session_{number}: expected a list of turns")
        if not turns:
            continue
        raw = sample.conversation.get(f"session_{number}_date_time")
        when = locomo_date(raw) if isinstance(raw, str) else None
        if when is None:
            raise EpisodeFileError(
                path, f"{sample.sample_id} session_{number}_date_time: expected a date such as '1:56 pm on 8 May, 2023'"
            )
        episodes = []
        for n, turn in enumerate(turns):
            ref = turn.dia_id.strip()
            shared = turn.shared()
            if not turn.text.strip() and shared is None:
                continue
            if ref in seen:
                raise EpisodeFileError(
                    path, f"{sample.sample_id} turn {ref}: the id is already used by an earlier turn"
                )
            seen.add(ref)
            parts = turn_episodes(
                path, tick, turn.text, speaker=turn.speaker, ref=ref, when=when + n * _TURN_STEP, shared=shared
            )
            episodes.extend(parts)
            tick += len(parts)
        if not episodes:
            continue
        observed = _observed(sample.observation.get(f"session_{number}_observation"))
        out.append(LocomoSession(number=number, when=when, episodes=episodes, observations=observed))
    if not out and not empty_ok:
        raise EpisodeFileError(path, f"{sample.sample_id}: no sessions with turns")
    return out


def _observed(facts: object) -> list[tuple[str, str, tuple[str, ...]]]:
    """A session's reference observations, (speaker, fact, turn ids), from whatever shape is there."""
    if not isinstance(facts, dict):
        return []
    out: list[tuple[str, str, tuple[str, ...]]] = []
    for who, said in facts.items():
        for entry in said if isinstance(said, list) else ():
            if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str):
                ids = entry[1]
                ids = ids if isinstance(ids, str) else [str(i) for i in ids] if isinstance(ids, list) else ""
                out.append((str(who), entry[0], normalised_ids(ids)))
    return out


def locomo_conversations(path: str | Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file with its questions of categories 1-4; one with no
    turn at all is left out, its questions counted among the skipped (the file must have one)."""
    out: list[Conversation] = []
    for sample in locomo_samples(path):
        sessions = locomo_sessions(sample, str(path), empty_ok=True)
        questions: list[Question] = []
        skipped = 0
        for q in sample.qa:
            evidence = tuple(dict.fromkeys(e for raw in q.evidence for e in normalised_ids(raw)))
            if q.category not in LOCOMO_CATEGORIES or not evidence or not sessions:
                skipped += 1
                continue
            answer = None if q.answer is None else str(q.answer)
            questions.append(
                Question(question=q.question, evidence=evidence, category=LOCOMO_CATEGORIES[q.category], answer=answer)
            )
        out.append(
            Conversation(
                name=golem_name(sample.sample_id),
                sessions=[Session(when=s.when, episodes=s.episodes, observations=s.observations) for s in sessions],
                questions=questions,
                skipped=skipped,
            )
        )
    if not any(c.sessions for c in out):
        raise EpisodeFileError(str(path), "no conversation has a turn")
    return out


_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


@functools.cache
def _porter() -> Any:
    import Stemmer  # type: ignore[import-not-found]  # noqa: PLC0415 - PyStemmer ships no types; loaded on first use

    return Stemmer.Stemmer("porter")


def _answer_tokens(text: str) -> list[str]:
    """LoCoMo's normalisation: lower case, no punctuation, no articles, single spaces; each word cut
    to its Porter stem (Snowball's implementation of Porter's algorithm, which LoCoMo's NLTK one
    extends in a few rare suffixes)."""
    text = text.lower().replace(",", "")
    text = "".join(c for c in text if c not in string.punctuation)
    words: list[str] = _porter().stemWords(_ARTICLES.sub(" ", text).split())
    return words


def answer_f1(predicted: str, gold: str) -> float:
    """LoCoMo's token F1 between an answer and the gold one."""
    got, want = _answer_tokens(predicted), _answer_tokens(gold)
    common = sum((Counter(got) & Counter(want)).values())
    if not common:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(predicted: str, gold: str, category: str) -> float:
    """LoCoMo's score of an answer in its category: a multi-hop gold answer is a comma-separated
    list, each part scored by the best part of the answer, and their mean taken; an open-domain gold
    answer is its text before the first ``;``; any other, :func:`answer_f1`."""
    if category == LOCOMO_CATEGORIES[1]:
        parts = [p.strip() for p in predicted.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(answer_f1(p, g) for p in parts) for g in golds) / len(golds)
    if category == LOCOMO_CATEGORIES[3]:
        gold = gold.split(";", maxsplit=1)[0].strip()
    return answer_f1(predicted, gold)
