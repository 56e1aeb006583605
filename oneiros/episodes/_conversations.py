"""Conversations as episodes: plain chat transcripts (JSON lines), and the one way every
conversation format (this, agents' session files, a benchmark's in ``oneiros.lab``) turns a turn
into episodes.

Each turn becomes one episode that keeps its speaker, its time and its own id (``ref``), so whatever
a dream draws from it names the turn. Ticks count the turns from ``first_tick`` in the order they
were said. A turn longer than an episode's summary holds is recorded in parts, ``<id>#1``,
``<id>#2`` ..., each its own tick (:func:`turn_episodes`, ``_parts``).

A chat transcript is one message a line: ``speaker`` (or ``role``), ``content``, ``time`` (RFC 3339;
without a zone, UTC) and optionally ``id``; a message without one is known by its line number. It is
read a line at a time, so a transcript of any length is never held whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros._input import DECODE_ERRORS, unreadable
from oneiros.episodes._parts import part_refs, summary_parts
from oneiros.events._types import MAX_TICK, Episode, SharedImage

__all__ = [
    "ChatMessage",
    "chat_batches",
    "count_chat_messages",
    "json_lines",
    "turn_episodes",
]


def turn_episodes(  # noqa: PLR0913 - keyword-only: a turn's own fields, as the episode names them
    path: str,
    tick: int,
    text: str,
    *,
    speaker: str,
    ref: str,
    when: datetime,
    shared: SharedImage | None = None,
    **more: Any,
) -> list[Episode]:
    """A turn as episodes ticked from ``tick``: one, or the parts of a turn longer than a summary
    holds (:func:`~oneiros.episodes._parts.summary_parts`), ``<ref>#1``, ``<ref>#2`` ... in order;
    an image the turn ``shared`` goes with the last. ``more`` is any other field of the episodes
    (``source``, ``tags``)."""
    parts = summary_parts(text)
    if tick + len(parts) - 1 > MAX_TICK:
        raise EpisodeFileError(path, f"turn {ref}: tick {tick + len(parts) - 1} is past the largest, {MAX_TICK}")
    fields = {"speaker": speaker, "time": when, "source": "user", **more}
    last = len(parts) - 1
    try:
        return [
            msgspec.convert(
                # What the turn shared goes with its last part, after all it said.
                {"tick": tick + n, "summary": part, "ref": part_ref, "shared": shared if n == last else None, **fields},
                Episode,
                from_attributes=False,
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
