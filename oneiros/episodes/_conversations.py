"""Conversations as episodes: LoCoMo's JSON and plain chat transcripts (JSON lines).

Each turn becomes one episode that keeps its speaker, its time and its own id (``ref``), so whatever
a dream draws from it names the turn. Ticks count the turns from ``first_tick`` in the order they
were said. LoCoMo dates a session, not its turns: a session's turns are given its date and time
plus one minute per turn before them, so they stay in order and the days between sessions stay days.
A shared image's caption is kept in the text: ``[shares a photo of a dog ...]``. A turn longer
than an episode's summary holds is recorded in parts, ``<id>#1``, ``<id>#2`` ..., each its own
tick (:func:`turn_episodes`, ``_parts``).

A chat transcript is one message a line: ``speaker`` (or ``role``), ``content``, ``time`` (RFC 3339;
without a zone, UTC) and optionally ``id``; a message without one is known by its line number. It is
read a line at a time, so a transcript of any length is never held whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros._input import DECODE_ERRORS, unreadable
from oneiros.episodes._parts import part_refs, summary_parts
from oneiros.events._types import MAX_TICK, Episode

__all__ = [
    "ChatMessage",
    "LocomoSample",
    "LocomoSession",
    "chat_batches",
    "count_chat_messages",
    "json_lines",
    "locomo_date",
    "locomo_samples",
    "locomo_sessions",
    "normalised_ids",
    "turn_episodes",
]

_TURN_STEP = timedelta(minutes=1)


class LocomoTurn(msgspec.Struct, frozen=True, kw_only=True):
    speaker: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    dia_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    text: str = ""
    blip_caption: str | None = None
    img_url: list[str] | str | None = None

    def said(self) -> str:
        """The turn's text with what it shared: the image's caption, or that there was an image."""
        if self.blip_caption:
            return f"{self.text} [shares {self.blip_caption}]".strip()
        if self.img_url:
            return f"{self.text} [shares an image]".strip()
        return self.text


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
            text = turn.said()
            if not text.strip():
                continue
            if ref in seen:
                raise EpisodeFileError(
                    path, f"{sample.sample_id} turn {ref}: the id is already used by an earlier turn"
                )
            seen.add(ref)
            parts = turn_episodes(path, tick, text, speaker=turn.speaker, ref=ref, when=when + n * _TURN_STEP)
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


def turn_episodes(  # noqa: PLR0913 - keyword-only: a turn's own fields, as the episode names them
    path: str, tick: int, text: str, *, speaker: str, ref: str, when: datetime, **more: Any
) -> list[Episode]:
    """A turn as episodes ticked from ``tick``: one, or the parts of a turn longer than a summary
    holds (:func:`~oneiros.episodes._parts.summary_parts`), ``<ref>#1``, ``<ref>#2`` ... in order.
    ``more`` is any other field of the episodes (``source``, ``tags``)."""
    parts = summary_parts(text)
    if tick + len(parts) - 1 > MAX_TICK:
        raise EpisodeFileError(path, f"turn {ref}: tick {tick + len(parts) - 1} is past the largest, {MAX_TICK}")
    fields = {"speaker": speaker, "time": when, "source": "user", **more}
    try:
        return [
            msgspec.convert(
                {"tick": tick + n, "summary": part, "ref": part_ref, **fields}, Episode, from_attributes=False
            )
            for n, (part, part_ref) in enumerate(zip(parts, part_refs(ref, len(parts)), strict=True))
        ]
    except msgspec.ValidationError as exc:
        raise EpisodeFileError(path, f"turn {ref}: {exc}") from None


class ChatMessage(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """One line of a chat transcript."""

    content: str
    time: datetime
    speaker: str | None = None
    role: str | None = None
    id: str | int | None = None


_chat = msgspec.json.Decoder(ChatMessage)
T = TypeVar("T")


def json_lines(path: Path, decoder: msgspec.json.Decoder[T]) -> Iterator[tuple[int, T]]:
    """Each line of a JSON-lines file that is not blank, decoded, with its number; a file that
    cannot be opened or a line that cannot be read is an EpisodeFileError naming it."""
    try:
        lines = path.open("rb")
    except OSError as exc:
        raise EpisodeFileError(str(path), exc.strerror or str(exc)) from None
    with lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, decoder.decode(line)
            except DECODE_ERRORS as exc:
                raise EpisodeFileError(str(path), unreadable(exc, line), number) from None


def _chat_lines(path: Path) -> Iterator[tuple[int, ChatMessage]]:
    for number, message in json_lines(path, _chat):
        if not (message.speaker or message.role):
            raise EpisodeFileError(str(path), "a message needs `speaker` or `role`", number)
        if not message.content.strip():
            raise EpisodeFileError(str(path), "`content` is empty", number)
        yield number, message


def chat_batches(path: str | Path, first_tick: int = 1, size: int = 10_000) -> Iterator[list[Episode]]:
    """The messages of a chat transcript as episodes, ``size`` at a time, read a line at a time."""
    path = Path(path)
    batch: list[Episode] = []
    tick = first_tick
    seen: set[str] = set()
    for number, message in _chat_lines(path):
        ref = str(message.id) if message.id is not None else str(number)
        if ref in seen:
            raise EpisodeFileError(str(path), f"id {ref!r} is already used by an earlier message", number)
        seen.add(ref)
        when = message.time if message.time.tzinfo else message.time.replace(tzinfo=UTC)
        speaker: Any = message.speaker or message.role
        try:
            parts = turn_episodes(str(path), tick, message.content, speaker=speaker, ref=ref, when=when)
        except EpisodeFileError as exc:
            raise EpisodeFileError(str(path), exc.reason, number) from None
        batch.extend(parts)
        tick += len(parts)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def count_chat_messages(path: str | Path) -> int:
    """How many episodes a transcript's messages make (a long one several), every line checked as
    :func:`chat_batches` checks it, none kept: a transcript is validated whole before anything is
    written."""
    count = sum(len(batch) for batch in chat_batches(path))
    if not count:
        raise EpisodeFileError(str(path), "no messages in file")
    return count
