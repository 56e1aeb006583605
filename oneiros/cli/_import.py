"""``oneiros import``: a conversation recorded as episodes (LoCoMo's JSON, a chat transcript in JSON
lines, or episodes in JSON lines), each turn keeping its speaker, time and own id."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

import typer

from oneiros.cli._common import GolemOpt, JsonOpt, StoreOpt, application, console, emit_json, one_line_errors, table
from oneiros.cli._config import ConfigOpt, flag, load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.events._types import Episode

__all__ = ["register"]

Format = Literal["locomo", "chat-jsonl", "episodes"]


def sniff_format(path: Path) -> Format:
    """A ``.json`` file is LoCoMo's; a JSON-lines file whose first object has ``content`` is a chat
    transcript, else episodes."""
    if path.suffix == ".json":
        return "locomo"
    try:
        with path.open("rb") as lines:
            first = next((line for line in lines if line.strip()), b"")
    except OSError:
        return "episodes"  # the reader says what is wrong with the file
    return "chat-jsonl" if b'"content"' in first else "episodes"


def import_cmd(  # noqa: PLR0917 - typer maps one parameter to each option
    file: Annotated[Path, typer.Argument(help="The conversation to record.", show_default=False)],
    store: StoreOpt = None,
    golem: GolemOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="locomo (LoCoMo's JSON), chat-jsonl (one message a line: speaker or role, content, time, id) or "
            "episodes (oneiros episodes, one a line); default: locomo for .json, else by the first line.",
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
    D3:12, a message's id), checked whole before anything is written; run again, it records only
    the turns the golem does not have yet."""
    from oneiros._errors import InputError
    from oneiros.cli._commands import record_batches

    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "golem", golem, "--golem")
    effective = load(config, None, flags)
    chosen: Format
    with one_line_errors():
        kind = fmt or sniff_format(file)
        if kind not in ("locomo", "chat-jsonl", "episodes"):
            raise InputError(f"unknown --format {kind!r}; use locomo, chat-jsonl or episodes")
        chosen = kind  # type: ignore[assignment]
        if conversation is not None and chosen != "locomo":
            raise InputError("--conversation names a LoCoMo sample; this file is not LoCoMo's")
        plans = _plans(file, chosen, effective.golem, conversation, first_tick)
    rows: list[dict[str, object]] = []
    with application(effective.store_url, config=effective, create=True) as app:
        for plan in plans:
            imported = record_batches(app, plan.golem, plan.batches(), plan.turns, quiet=as_json)
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


def _plans(file: Path, fmt: Format, golem: str, conversation: str | None, first_tick: int) -> list[_Plan]:
    """(golem, turns, the batches to record, sessions) for each golem the file fills; every turn
    is read and checked here, before the store is opened."""
    from oneiros.episodes._conversations import chat_batches, count_chat_messages, locomo_samples, locomo_sessions
    from oneiros.episodes._episodes import count_episodes, episode_batches

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
