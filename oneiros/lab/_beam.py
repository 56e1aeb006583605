"""BEAM's chats as the evaluation's conversations (``oneiros eval beam DIR``, docs/evaluation.md).

BEAM (ICLR 2026) publishes each chat as a folder: ``chat.json``, a list of batches ``{batch_number,
time_anchor, turns: [[message, ...], ...]}`` whose messages carry ``role``, a global integer ``id``
and ``content`` (the first of a batch its ``time_anchor``, "March-15-2024"), and
``probing_questions/probing_questions.json``, ``{category: [question, ...]}`` over ten memory
abilities, each question naming the messages that hold its answer in ``source_chat_ids`` (a list, or
a dict of lists such as knowledge updates' ``original_info`` and ``updated_info``).

How a chat is lived: every message is an episode (speaker ``user`` or ``assistant``, its id as the
episode's ref, a message over the summary cap in parts ``<id>#1`` ...); each exchange (one of a
batch's inner lists) is a session. Only batches are dated, so a batch's exchanges are spread evenly
in order from its anchor to the next batch's (the last batch as long as the mean of the others, a
week when there is one), its messages a minute apart: the dream arm then dreams between exchanges
as the schedule allows, as an assistant's user would come back over the weeks a batch spans.

Which questions are scored: evidence is ``source_chat_ids`` (nested lists flattened), else the
``chat_id: N`` entries of ``conversation_references``; a question naming no message either way
(its references are free text only) is left out and counted, as is every abstention question
(they name no evidence, their answer is not in the chat). A knowledge update's ``updated_info``
is the current fact and ``original_info`` the outdated one, unless they share a message.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from oneiros._errors import EpisodeFileError, InputError
from oneiros._input import DECODE_ERRORS, unreadable
from oneiros.episodes._conversations import turn_episodes
from oneiros.events._types import Episode
from oneiros.lab._evidence import Conversation, Question, Session

__all__ = ["beam_chat_dirs", "beam_conversation", "beam_conversations"]

_ANCHOR_FORMATS = ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y")
_DAY_START = timedelta(hours=9)
"""A batch starts at nine in the morning (UTC) of its anchor's day."""
_MESSAGE_STEP = timedelta(minutes=1)
_LONE_SPAN = timedelta(days=7)
_CHAT_ID = re.compile(r"chat_id:\s*(\d+)", re.IGNORECASE)
_UNSCORED = "abstention"


class _Message(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    role: str
    id: int
    content: str
    time_anchor: str | None = None


class _Batch(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    turns: list[list[_Message]]
    batch_number: int | None = None
    time_anchor: str | None = None


def _read(path: Path, kind: type[Any], what: str) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EpisodeFileError(str(path), exc.strerror or str(exc)) from None
    try:
        return msgspec.json.decode(data, type=kind)
    except DECODE_ERRORS as exc:
        raise EpisodeFileError(str(path), f"not BEAM's {what}: {unreadable(exc, data)}") from None


def _anchor(text: str | None, path: Path, batch: int) -> datetime | None:
    if text is None or not text.strip():
        return None
    for form in _ANCHOR_FORMATS:
        try:
            return datetime.strptime(text.strip(), form).replace(tzinfo=UTC) + _DAY_START
        except ValueError:
            continue
    raise EpisodeFileError(str(path), f"batch {batch}: time_anchor {text!r} is not a date like 'March-15-2024'")


def _starts(batches: Sequence[_Batch], path: Path) -> list[tuple[datetime, timedelta]]:
    """Each batch's start and span: its anchor (the batch's, else its first message's), up to the next."""
    anchors: list[datetime | None] = []
    for n, batch in enumerate(batches, start=1):
        first = next((m for exchange in batch.turns for m in exchange), None)
        given = batch.time_anchor or (first.time_anchor if first is not None else None)
        anchors.append(_anchor(given, path, batch.batch_number or n))
    if not any(anchors):
        raise EpisodeFileError(str(path), "no batch has a time_anchor: the chat cannot be dated")
    known = [a for a in anchors if a is not None]
    gaps = [b - a for a, b in itertools.pairwise(known) if b > a]
    mean = sum(gaps, timedelta()) / len(gaps) if gaps else _LONE_SPAN
    # A batch with no anchor follows the one before by the mean span; the first, precedes the next.
    first_known = next(n for n, a in enumerate(anchors) if a is not None)
    filled: list[datetime] = []
    for n, a in enumerate(anchors):
        if a is not None:
            filled.append(a)
        elif n < first_known:
            filled.append(known[0] - mean * (first_known - n))
        else:
            filled.append(filled[-1] + mean)
    out: list[tuple[datetime, timedelta]] = []
    for n, start in enumerate(filled):
        following = filled[n + 1] if n + 1 < len(filled) else start + mean
        out.append((start, max(following - start, timedelta(days=1))))
    return out


def _sessions(path: Path) -> list[Session]:
    batches: list[_Batch] = _read(path, list[_Batch], "chat.json (a list of batches)")
    batches = [b for b in batches if any(b.turns)]
    if not batches:
        raise EpisodeFileError(str(path), "no messages in file")
    sessions: list[Session] = []
    tick = 1
    seen: set[str] = set()
    for batch, (start, span) in zip(batches, _starts(batches, path), strict=True):
        exchanges = [e for e in batch.turns if e]
        for n, exchange in enumerate(exchanges):
            when = start + span * n / len(exchanges)
            when = when.replace(second=0, microsecond=0)
            episodes: list[Episode] = []
            for m, message in enumerate(exchange):
                ref = str(message.id)
                if ref in seen:
                    raise EpisodeFileError(str(path), f"message id {ref} is used twice")
                seen.add(ref)
                if not message.content.strip():
                    continue
                parts = turn_episodes(
                    str(path), tick, message.content, speaker=message.role, ref=ref, when=when + m * _MESSAGE_STEP
                )
                episodes.extend(parts)
                tick += len(parts)
            if episodes:
                sessions.append(Session(when=when, episodes=episodes))
    return sessions


def _ids(value: object) -> Iterable[str]:
    """Every message id in a ``source_chat_ids`` value: an int, or lists and dicts of them."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield str(value)
    elif isinstance(value, str) and value.strip().isdigit():
        yield value.strip()
    elif isinstance(value, list):
        for v in value:
            yield from _ids(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _ids(v)


def _evidence(question: dict[str, Any]) -> tuple[str, ...]:
    found = list(_ids(question.get("source_chat_ids")))
    if not found:
        references = question.get("conversation_references")
        texts = references if isinstance(references, list) else [references]
        found = [n for t in texts if isinstance(t, str) for n in _CHAT_ID.findall(t)]
    return tuple(dict.fromkeys(found))


def _update(question: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A knowledge update's (current, outdated) messages; empty where they cannot be told apart."""
    ids = question.get("source_chat_ids")
    if not isinstance(ids, dict):
        return (), ()
    current = tuple(dict.fromkeys(_ids(ids.get("updated_info"))))
    outdated = tuple(dict.fromkeys(_ids(ids.get("original_info"))))
    if not current or not outdated or set(current) & set(outdated):
        return (), ()
    return current, outdated


def _questions(path: Path) -> tuple[list[Question], dict[str, int]]:
    asked: dict[str, list[dict[str, Any]]] = _read(path, dict[str, list[dict[str, Any]]], "probing questions")
    out: list[Question] = []
    left_out: dict[str, int] = {}
    for category, questions in asked.items():
        for q in questions:
            given = q.get("question")
            text = given if isinstance(given, str) else ""
            evidence = _evidence(q)
            reason = (
                "abstention (no evidence by design)"
                if category == _UNSCORED
                else "no question text"
                if not text.strip()
                else "evidence names no message id"
                if not evidence
                else None
            )
            if reason is not None:
                left_out[reason] = left_out.get(reason, 0) + 1
                continue
            current, outdated = _update(q) if category == "knowledge_update" else ((), ())
            answer = q.get("answer", q.get("ideal_answer"))
            out.append(
                Question(
                    question=text,
                    evidence=evidence,
                    category=category,
                    answer=answer if isinstance(answer, str) else None,
                    current=current,
                    outdated=outdated,
                )
            )
    return out, left_out


def beam_conversation(folder: str | Path, name: str | None = None) -> Conversation:
    """One BEAM chat folder (``chat.json``, ``probing_questions/probing_questions.json``)."""
    folder = Path(folder)
    sessions = _sessions(folder / "chat.json")
    questions, left_out = _questions(folder / "probing_questions" / "probing_questions.json")
    return Conversation(
        name=f"beam-{name or folder.name}",
        sessions=sessions,
        questions=questions,
        skipped=sum(left_out.values()),
        left_out=left_out,
    )


def beam_chat_dirs(directory: str | Path, chats: Sequence[str] | None = None) -> list[Path]:
    """The chat folders of ``directory``: itself when it holds ``chat.json``, else its sub-folders
    that do, in numeric order; ``chats`` picks some by name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory} is not a folder: give a BEAM chat folder or a folder of them (chats/100K)")
    if (directory / "chat.json").is_file():
        found = [directory]
    else:
        found = sorted(
            (d for d in directory.iterdir() if (d / "chat.json").is_file()),
            key=lambda d: (0, int(d.name), "") if d.name.isdigit() else (1, 0, d.name),
        )
    if not found:
        raise InputError(f"{directory} holds no chat.json, nor any folder with one: not BEAM's layout")
    if chats:
        by_name = {d.name: d for d in found}
        missing = [c for c in chats if c not in by_name]
        if missing:
            raise InputError(f"no chat {missing[0]!r} in {directory}; it has {', '.join(by_name)}")
        found = [by_name[c] for c in chats]
    return found


def beam_conversations(directory: str | Path, chats: Sequence[str] | None = None) -> list[Conversation]:
    """Every chat of a BEAM folder (or the ones ``chats`` names) as a conversation with its questions."""
    return [beam_conversation(d) for d in beam_chat_dirs(directory, chats)]
