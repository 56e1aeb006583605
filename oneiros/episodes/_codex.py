"""Codex CLI's rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``) as episodes.

Each line is ``{"timestamp", "type", "payload"}``; the first, ``session_meta``, names the session.
A ``response_item`` line is what the model saw: a ``message`` of the user or the assistant, a tool
call (``function_call``, ``custom_tool_call``, ``local_shell_call``) or its output
(``function_call_output``, ``custom_tool_call_output``). They become episodes as Claude Code's do
(``_sessions``): speaker, time, tool calls and results tagged ``tool-call`` and ``tool-result``.
A rollout's items carry no id of their own, so an episode's ``ref`` is ``<session id>:<line>``: a
rollout is only ever appended to, so a line keeps its number and a rerun finds it.

Reasoning is left out, as Claude Code's thinking is; so are the context Codex puts in the user's
name (``<environment_context>``, ``<user_instructions>``, AGENTS.md), ``developer`` and ``system``
messages, the ``event_msg`` lines that echo the items for the terminal, and a ``compacted`` line's
summary (the turns it sums up are in the file already).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros.episodes._conversations import json_lines
from oneiros.episodes._sessions import OnFile, Piece, SessionGolem, by_golem, piece_episodes
from oneiros.events._types import Episode

__all__ = ["codex_golems"]


class _Line(msgspec.Struct, frozen=True, kw_only=True):
    type: str = ""
    timestamp: datetime | None = None
    payload: dict[str, Any] = {}


_line = msgspec.json.Decoder(_Line)
_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<user_shell_command>")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def codex_golems(files: list[Path], golem: str, first_tick: int = 1, *, on_file: OnFile = None) -> list[SessionGolem]:
    """The episodes of Codex rollout ``files`` (in the order given), all the golem's own: Codex
    writes no subagent sidechains. A bad line is an error naming its file and line."""
    return by_golem(files, golem, first_tick, lambda path: ((golem, made) for made in _file_episodes(path)), on_file)


def _file_episodes(path: Path) -> Iterator[list[Episode]]:
    session = ""
    tools: dict[str, str] = {}
    for number, line in json_lines(path, _line):
        if line.type == "session_meta":
            session = str(line.payload.get("id") or "")
            continue
        if line.type != "response_item":
            continue
        if not session:
            raise EpisodeFileError(str(path), "a rollout starts with its session_meta line", number)
        if line.timestamp is None:
            raise EpisodeFileError(str(path), "a response_item needs `timestamp`", number)
        role, pieces = _pieces(line.payload, tools)
        if pieces:
            yield piece_episodes(path, number, pieces, ref=f"{session}:{number}", when=line.timestamp, role=role)


def _pieces(item: dict[str, Any], tools: dict[str, str]) -> tuple[str, list[Piece]]:
    """(the role that said it, what one response item says)."""
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return "", []
        texts = [b.get("text") for b in item.get("content") or () if isinstance(b, dict)]
        said = [t for t in texts if isinstance(t, str) and t.strip() and not t.lstrip().startswith(_CONTEXT)]
        return str(role), [Piece("message", t) for t in said]
    if kind in _CALLS:
        name = str(item.get("name") or ("shell" if kind == "local_shell_call" else "tool"))
        tools[str(item.get("call_id") or "")] = name
        given = item.get("arguments", item.get("input", item.get("action")))
        return "assistant", [Piece("tool-call", f"{name} {_text(given)}".strip(), name)]
    if kind in _OUTPUTS:
        output, failed = _output(item.get("output"))
        return "user", [
            Piece("tool-result", output or "(no output)", tools.get(str(item.get("call_id")), "tool"), failed)
        ]
    return "", []


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _output(raw: Any) -> tuple[str, bool]:
    """A call's output and whether it failed: Codex writes a shell's as a JSON string of
    ``{"output", "metadata": {"exit_code"}}``, other tools' as plain text."""
    if isinstance(raw, dict):
        raw = raw.get("content", raw)
    text = _text(raw)
    try:
        shaped = json.loads(text)
    except ValueError:
        return text, False
    if isinstance(shaped, dict) and isinstance(shaped.get("output"), str):
        meta = shaped.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return shaped["output"], isinstance(code, int) and code != 0
    return text, False
