"""``oneiros import``: a conversation recorded as episodes (LoCoMo's JSON, a chat transcript in JSON
lines, episodes in JSON lines, or a coding agent's session files: Claude Code's or Codex CLI's),
each turn keeping its speaker, time and own id."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

import typer

from oneiros.cli._common import GolemOpt, JsonOpt, StoreOpt, application, console, emit_json, one_line_errors, table
from oneiros.cli._config import ConfigOpt, flag, load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.app._oneiros import Oneiros
    from oneiros.app._records import Imported
    from oneiros.events._types import Episode

__all__ = ["register"]

Format = Literal["locomo", "chat-jsonl", "episodes", "claude-code", "codex"]
FORMATS: tuple[Format, ...] = ("locomo", "chat-jsonl", "episodes", "claude-code", "codex")
_SESSIONS: tuple[Format, ...] = ("claude-code", "codex")
"""The formats whose PATH may be a folder of session files, recorded by their events' ids."""
_BATCH = 500
"""Episodes of session files recorded a transaction: small enough for a progress bar to move."""


def sniff_format(path: Path) -> Format:
    """A ``.json`` file is LoCoMo's; a JSON-lines file (or a folder's first) whose first object has
    ``sessionId`` and ``parentUuid`` is Claude Code's, one with ``session_meta`` Codex's, one with
    ``content`` a chat transcript, else episodes."""
    if path.suffix == ".json":
        return "locomo"
    if path.is_dir():
        path = next(iter(sorted(path.rglob("*.jsonl"))), path)
    try:
        with path.open("rb") as lines:
            heads = [line for line, _ in zip((line for line in lines if line.strip()), range(5), strict=False)]
    except OSError:
        return "episodes"  # the reader says what is wrong with the file
    # A Claude Code session may open with a title (`summary`) line; its events come right after.
    if any(b'"sessionId"' in line and b'"parentUuid"' in line for line in heads):
        return "claude-code"
    first = heads[0] if heads else b""
    if b'"session_meta"' in first:
        return "codex"
    return "chat-jsonl" if b'"content"' in first else "episodes"


def import_cmd(
    *,
    file: Annotated[
        Path,
        typer.Argument(
            metavar="path",
            help="The conversation to record: a file, or for claude-code and codex a folder of session files.",
            show_default=False,
        ),
    ],
    store: StoreOpt = None,
    golem: GolemOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="locomo (LoCoMo's JSON), chat-jsonl (one message a line: speaker or role, content, time, id), "
            "episodes (oneiros episodes, one a line), claude-code (~/.claude/projects session files) or codex "
            "(~/.codex/sessions rollout files); default: locomo for .json, else by the first line.",
        ),
    ] = None,
    conversation: Annotated[
        str | None,
        typer.Option(
            "--conversation",
            help="LoCoMo: only this sample_id, into --golem (default: every conversation, each into "
            "<golem>-<sample_id>, or into --golem when the file holds one).",
        ),
    ] = None,
    first_tick: Annotated[
        int, typer.Option("--first-tick", min=0, help="Tick of the first turn; the turns after it count up.")
    ] = 1,
    as_json: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """Record a conversation as episodes: every turn with its speaker, time and own id (LoCoMo's
    D3:12, a message's id, a session event's uuid), checked whole before anything is written; run
    again, it records only the turns the golem does not have yet."""
    from oneiros._errors import InputError
    from oneiros.cli._commands import record_batches

    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "golem", golem, "--golem")
    effective = load(config, None, flags)
    chosen: Format
    with one_line_errors():
        kind = fmt or sniff_format(file)
        if kind not in FORMATS:
            raise InputError(f"unknown --format {kind!r}; use {', '.join(FORMATS[:-1])} or {FORMATS[-1]}")
        chosen = kind
        if conversation is not None and chosen != "locomo":
            raise InputError("--conversation names a LoCoMo sample; this file is not LoCoMo's")
        if chosen in _SESSIONS:
            plans = _session_plans(file, chosen, effective.golem, first_tick, quiet=as_json)
        else:
            plans = _plans(file, chosen, effective.golem, conversation, first_tick)
    rows: list[dict[str, object]] = []
    with application(effective.store_url, config=effective, create=True) as app:
        recorded = (
            _record_sessions(app, plans, quiet=as_json or not file.is_dir())
            if chosen in _SESSIONS
            else [record_batches(app, plan.golem, plan.batches(), plan.turns, quiet=as_json) for plan in plans]
        )
        for plan, imported in zip(plans, recorded, strict=True):
            rows.append(
                {
                    "golem": plan.golem,
                    "turns": plan.turns,
                    "recorded": imported.recorded,
                    "skipped": imported.skipped,
                    "sessions": plan.sessions,
                }
            )
    if as_json:
        emit_json({"file": str(file), "format": chosen, "golems": rows})
        return
    shown = table(f"imported {file} ({chosen})", "golem", "turns", "recorded", "skipped", "sessions", whole=("golem",))
    for row in rows:
        shown.add_row(*(str(row[k]) for k in ("golem", "turns", "recorded", "skipped", "sessions")))
    console.print(shown)


class _Plan(NamedTuple):
    golem: str
    turns: int
    batches: Callable[[], Iterator[list[Episode]]]
    sessions: int


def _session_plans(path: Path, fmt: Format, golem: str, first_tick: int, *, quiet: bool) -> list[_Plan]:
    """A plan for each golem a coding agent's session files fill (the main one, then each
    subagent's), every line read and checked first; a folder's files with a progress bar."""
    from oneiros.episodes._codex import codex_golems
    from oneiros.episodes._sessions import claude_code_golems, session_files

    files = session_files(path, pattern="*.jsonl")
    read = codex_golems if fmt == "codex" else claude_code_golems
    with _progress("reading sessions", len(files), quiet=quiet or len(files) == 1, transient=True) as advance:
        golems = read(files, golem, first_tick, on_file=lambda _path: advance(1))
    plans = [
        _Plan(g.golem, len(g.episodes), lambda e=g.episodes: _chunks(e), g.sessions)  # type: ignore[misc]
        for g in golems
        if g.episodes
    ]
    if not plans:
        from oneiros._errors import EpisodeFileError

        raise EpisodeFileError(str(path), "no user or assistant message in the session files")
    return plans


def _chunks(episodes: list[Episode]) -> Iterator[list[Episode]]:
    for start in range(0, len(episodes), _BATCH):
        yield episodes[start : start + _BATCH]


def _record_sessions(app: Oneiros, plans: list[_Plan], *, quiet: bool) -> list[Imported]:
    """Record each plan's episodes by their ids (``import_episodes(by_ref=True)``): a session file
    that grew records only its new events; a progress bar over every golem's when not ``quiet``."""
    from rich.markup import escape

    from oneiros.cli._common import err_console

    out: list[Imported] = []
    with _progress("recording episodes", sum(p.turns for p in plans), quiet=quiet) as advance:
        for plan in plans:
            out.append(app.import_episodes(plan.golem, plan.batches(), on_batch=advance, by_ref=True))
    for plan, imported in zip(plans, out, strict=True):
        if imported.skipped:
            have = "episode" if imported.skipped == 1 else "episodes"
            err_console.print(
                escape(f"skipped {imported.skipped:,} {have} golem {plan.golem!r} already has"), highlight=False
            )
    return out


@contextlib.contextmanager
def _progress(what: str, total: int, *, quiet: bool, transient: bool = False) -> Iterator[Callable[[int], None]]:
    """A rich progress bar over ``total`` steps, or nothing when ``quiet``."""
    if quiet or not total:
        yield lambda _n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        what, BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console, transient=transient
    ) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


def _plans(file: Path, fmt: Format, golem: str, conversation: str | None, first_tick: int) -> list[_Plan]:
    """(golem, turns, the batches to record, sessions) for each golem the file fills; every turn
    is read and checked here, before the store is opened."""
    from oneiros.episodes._conversations import chat_batches, count_chat_messages
    from oneiros.episodes._episodes import count_episodes, episode_batches
    from oneiros.lab._locomo import locomo_samples, locomo_sessions

    if fmt == "episodes":
        count = count_episodes(file)
        return [_Plan(golem, count, lambda: episode_batches(file), 0)]
    if fmt == "chat-jsonl":
        count = count_chat_messages(file)
        return [_Plan(golem, count, lambda: chat_batches(file, first_tick), 0)]
    samples = locomo_samples(file)
    if conversation is not None:
        samples = [s for s in samples if s.sample_id == conversation]
        if not samples:
            from oneiros._errors import InputError

            raise InputError(f"no conversation {conversation!r} in {file}")
    plans: list[_Plan] = []
    for sample in samples:
        sessions = locomo_sessions(sample, str(file), first_tick)
        episodes = [e for s in sessions for e in s.episodes]
        target = golem if len(samples) == 1 else f"{golem}-{sample.sample_id}"
        plans.append(_Plan(target, len(episodes), lambda e=episodes: iter([e]), len(sessions)))  # type: ignore[misc]
    return plans


def register(app: typer.Typer) -> None:
    app.command("import")(import_cmd)
