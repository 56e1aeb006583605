"""A coding agent's session files as episodes: Claude Code's ``~/.claude/projects/<project>/*.jsonl``.

Each line of a Claude Code session is one event (``uuid``, ``parentUuid``, ``sessionId``,
``timestamp``, ``type``, ``message``). What the user and the assistant wrote becomes episodes of
their speaker (``user``, source ``user``; ``assistant``, source ``self``), each with the event's
``uuid`` as its ``ref``, as a chat turn keeps its id. A tool call (``tool_use``) and a tool's result
(``tool_result``) become episodes of their own kind, told apart by their first tag, ``tool-call`` or
``tool-result``, the tool's name as the second (``bash``, ``edit``), and ``error`` where the tool
failed; a call is the assistant's own doing (source ``self``), a result is what the tool said
(speaker and source ``tool``, trusted as tools are). Thinking is left out: it is the model's
scratch work, not something that happened.

An event of several pieces (a text and a tool call), or a piece longer than a summary holds, gives
several episodes with the ids ``<uuid>#1``, ``<uuid>#2`` ... in order (``_parts``).

A subagent's sidechain (``isSidechain``; its own ``agent-<id>.jsonl`` since Claude Code 2.0, inline
in the session before) is another agent's work, not the golem's own: its episodes go to a golem of
their own, ``<golem>-<agentId>`` (``<golem>-sidechain-<first 8 of the chain's root uuid>`` for an
inline chain with no ``agentId``), so the main golem's memory and dreams hold the conversation it
lived and every subagent's can still be dreamt on or recalled by name.

Compaction leaves a ``system`` event (``subtype: "compact_boundary"``) and a user message with
``isCompactSummary``, the summary Claude Code wrote of what came before. The summary is not
imported (the user never said it, and the turns it sums up are in the file already); the turns
before and after the boundary keep their order. Meta messages (``isMeta``: caveats Claude Code
adds), session titles (``summary``) and bookkeeping events (file snapshots, queue operations) are
passed over, as is an event seen already in an earlier file (a resumed session repeats it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros.episodes._conversations import json_lines, turn_episodes
from oneiros.events._types import Episode

__all__ = [
    "TOOL_KINDS",
    "OnFile",
    "Piece",
    "SessionGolem",
    "by_golem",
    "claude_code_golems",
    "is_tool_record",
    "piece_episodes",
    "session_files",
]

TOOL_KINDS = frozenset({"tool-call", "tool-result"})
"""The first tag of an episode that records a tool's use (its call, or what it gave back)."""


def is_tool_record(episode: Episode) -> bool:
    """Whether ``episode`` records a tool call or its output rather than something said."""
    return bool(episode.tags) and episode.tags[0] in TOOL_KINDS


class _Block(msgspec.Struct, frozen=True, kw_only=True):
    """One content block; only the fields of the kinds imported are read, the rest are ignored."""

    type: str = ""
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: Any = None
    tool_use_id: str | None = None
    content: Any = None
    is_error: bool | None = None


class _Message(msgspec.Struct, frozen=True, kw_only=True):
    role: str = ""
    content: str | list[_Block] = ""


class _Event(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One line of a session file. ``timestamp`` and ``message`` are read for what they must be only
    on a user or assistant event: bookkeeping lines (another tool's history, a snapshot) may give
    them other shapes, and are passed over whatever they hold."""

    type: Any = ""
    subtype: Any = None
    uuid: Any = None
    parent_uuid: Any = None
    timestamp: Any = None
    is_sidechain: Any = False
    agent_id: Any = None
    is_meta: Any = False
    is_compact_summary: Any = False
    message: Any = None


class _Spoken(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of a user or assistant event the import reads, as they must be."""

    uuid: Annotated[str, msgspec.Meta(min_length=1)]
    timestamp: datetime
    message: _Message
    parent_uuid: str | None = None
    is_sidechain: bool | None = False
    agent_id: str | None = None


_event = msgspec.json.Decoder(_Event)
_SPOKEN = ("user", "assistant")
_CONTINUED = "This session is being continued from a previous conversation"
"""How the summary a compaction leaves in the user's name begins, for files from before Claude
Code marked it ``isCompactSummary``."""


class SessionGolem(NamedTuple):
    """What one golem gets from an import: its episodes in order and how many session files fed it."""

    golem: str
    episodes: list[Episode]
    sessions: int


class Piece(NamedTuple):
    """Something an event says: a ``message`` (of the event's speaker), a ``tool-call`` or a
    ``tool-result``, with the tool's name and whether it failed."""

    kind: str
    text: str
    tool: str = ""
    error: bool = False


def session_files(path: Path, *, pattern: str = "*.jsonl") -> list[Path]:
    """``path`` itself when it is a file, else the session files under it (its subagents' folders
    too), oldest first by the first time each holds; a path that is not there is an error."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise EpisodeFileError(str(path), "no such file or folder")
    found = sorted(p for p in path.rglob(pattern) if p.is_file())
    if not found:
        raise EpisodeFileError(str(path), f"no session files ({pattern}) in this folder")
    return sorted(found, key=lambda p: (_first_time(p), str(p)))


def _first_time(path: Path) -> str:
    """The first timestamp a session file holds, as written (ISO 8601 sorts as text), else ``""``."""
    try:
        with path.open("rb") as lines:
            for line in lines:
                if b'"timestamp"' in line:
                    try:
                        stamp = json.loads(line).get("timestamp")
                    except (ValueError, AttributeError):
                        return ""  # the import itself names the bad line
                    if isinstance(stamp, str):
                        return stamp
    except OSError:
        return ""
    return ""


OnFile = Callable[[Path], object] | None


def claude_code_golems(
    files: list[Path], golem: str, first_tick: int = 1, *, on_file: OnFile = None
) -> list[SessionGolem]:
    """The episodes of Claude Code session ``files`` (in the order given), by golem: ``golem``
    first, then each subagent's in the order they first appear; every line is read and checked,
    and a bad one is an error naming its file and line. ``on_file`` hears of each file read."""
    seen: set[str] = set()
    roots: dict[str, str] = {}
    return by_golem(files, golem, first_tick, lambda path: _file_episodes(path, golem, seen, roots), on_file)


def by_golem(
    files: list[Path],
    golem: str,
    first_tick: int,
    read: Callable[[Path], Iterable[tuple[str, list[Episode]]]],
    on_file: OnFile,
) -> list[SessionGolem]:
    """What ``read`` finds in each file, (golem, an event's episodes), gathered by golem and
    ticked from ``first_tick`` in order; ``golem`` first, even when it gets nothing."""
    episodes: dict[str, list[Episode]] = {golem: []}
    sessions: dict[str, set[Path]] = {golem: set()}
    for path in files:
        for target, made in read(path):
            tick = first_tick + len(episodes.setdefault(target, []))
            episodes[target].extend(msgspec.structs.replace(e, tick=tick + n) for n, e in enumerate(made))
            sessions.setdefault(target, set()).add(path)
        if on_file is not None:
            on_file(path)
    return [SessionGolem(g, found, len(sessions[g])) for g, found in episodes.items() if found or g == golem]


def _file_episodes(
    path: Path, golem: str, seen: set[str], roots: dict[str, str]
) -> Iterator[tuple[str, list[Episode]]]:
    """(golem, the event's episodes, ticked from 0) for each event of ``path`` that says something."""
    tools: dict[str, str] = {}
    compacted = False
    for number, line in json_lines(path, _event):
        if line.type == "system" and line.subtype == "compact_boundary":
            compacted = True
        if line.type not in _SPOKEN or line.is_meta is True or line.is_compact_summary is True:
            continue
        event = _spoken(path, number, line)
        if compacted and line.type == "user":
            compacted = False
            if isinstance(event.message.content, str) and event.message.content.startswith(_CONTINUED):
                continue
        if event.uuid in seen:
            continue
        seen.add(event.uuid)
        target = golem
        if event.is_sidechain:
            root = roots.setdefault(event.uuid, roots.get(event.parent_uuid or "", event.uuid))
            target = f"{golem}-{event.agent_id or 'sidechain-' + root[:8]}"
        pieces = list(_pieces(event.message, tools))
        if pieces:
            yield target, piece_episodes(path, number, pieces, ref=event.uuid, when=event.timestamp, role=line.type)


def _spoken(path: Path, number: int, line: _Event) -> _Spoken:
    """A user or assistant event's fields as they must be, or an error naming the file and line."""
    if not line.uuid or line.timestamp is None:
        raise EpisodeFileError(str(path), f"a {line.type} event needs `uuid` and `timestamp`", number)
    fields = {f: getattr(line, f) for f in _Spoken.__struct_fields__}
    try:
        return msgspec.convert(fields, _Spoken)
    except msgspec.ValidationError as exc:
        raise EpisodeFileError(str(path), f"a {line.type} event: {exc}", number) from None


def _pieces(message: _Message, tools: dict[str, str]) -> Iterator[Piece]:
    """What a message says, piece by piece; ``tools`` maps a call's id to its tool, for its result."""
    content = message.content
    if isinstance(content, str):
        if content.strip():
            yield Piece("message", content)
        return
    for block in content:
        if block.type == "text" and block.text and block.text.strip():
            yield Piece("message", block.text)
        elif block.type == "tool_use" and block.name:
            tools[block.id or ""] = block.name
            yield Piece("tool-call", f"{block.name} {_plain(block.input)}".strip(), block.name)
        elif block.type == "tool_result":
            said = _result_text(block.content)
            tool = tools.get(block.tool_use_id or "", "tool")
            yield Piece("tool-result", said or "(no output)", tool, bool(block.is_error))
        # thinking and redacted_thinking are the model's scratch work; an image has no text to keep


def _plain(value: Any) -> str:
    """A tool call's input as one JSON object, keys in the order the model wrote them."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _result_text(content: Any) -> str:
    """A tool result's content (a string, or text and image blocks) as text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif isinstance(block, dict) and block.get("type") == "image":
            out.append("[image]")
    return "\n".join(out)


def piece_episodes(  # noqa: PLR0913 - keyword-only: an event's own fields, as the episode names them
    path: Path, number: int, pieces: list[Piece], *, ref: str, when: datetime, role: str
) -> list[Episode]:
    """The episodes of one event's pieces (line ``number`` of ``path``, said by ``role``, ``user``
    or ``assistant``), ticked from 0, with the ids ``<ref>`` or ``<ref>#1`` ..."""
    made: list[Episode] = []
    when = when if when.tzinfo else when.replace(tzinfo=UTC)  # a time without a zone is UTC, as in a chat
    for piece in pieces:
        speaker, source, tags = _who(role, piece)
        try:
            made.extend(
                turn_episodes(
                    str(path), len(made), piece.text, speaker=speaker, ref=ref, when=when, source=source, tags=tags
                )
            )
        except EpisodeFileError as exc:
            raise EpisodeFileError(str(path), exc.reason, number) from None
    if len(made) == 1:
        return made
    refs = [f"{ref}#{n}" for n in range(1, len(made) + 1)]
    return [msgspec.structs.replace(e, ref=r) for e, r in zip(made, refs, strict=True)]


def _who(kind: str, piece: Piece) -> tuple[str, str, tuple[str, ...]]:
    """(speaker, source, tags) of a piece of a ``user`` or ``assistant`` event."""
    if piece.kind == "message":
        return (kind, "user" if kind == "user" else "self", ())
    tool = piece.tool.lower()[:128]
    if piece.kind == "tool-call":
        return ("assistant", "self", ("tool-call", tool))
    return ("tool", "tool", ("tool-result", tool, "error") if piece.error else ("tool-result", tool))
