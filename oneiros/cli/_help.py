"""``oneiros --help`` and ``oneiros --version`` without Typer, Rich or any command module.

Both are answered before the command line is built: importing Typer and Rich alone costs several
times what Python itself takes to start. The top-level help is drawn here, by :func:`render`, on
both paths: ``oneiros --help`` feeds it :data:`oneiros.cli._listing.COMMANDS` directly, and the app's
root group (:mod:`oneiros.cli._app`) feeds it the same table with the options it actually has, so the
two print the same bytes (``tests/test_cli_startup.py`` checks it at several widths).
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import NamedTuple

from oneiros.cli._listing import COMMANDS, ROOT_HELP, ROOT_OPTIONS

__all__ = ["HelpIndex", "fast_path", "listed_index", "one_line", "owner_of", "render", "terminal_width", "version_text"]

_MIN_WIDTH = 40
_USAGE = "oneiros [OPTIONS] COMMAND [ARGS]..."
_OWNERS = {row.name: f"oneiros.cli.{row.module}" for row in COMMANDS}


class HelpIndex(NamedTuple):
    """What the top-level help shows: usage, the app's help text, its options and its commands."""

    usage: str
    text: str
    options: tuple[tuple[str, str], ...]
    commands: tuple[tuple[str, str], ...]


def listed_index(
    usage: str = _USAGE, options: tuple[tuple[str, str], ...] = ROOT_OPTIONS, text: str = ROOT_HELP
) -> HelpIndex:
    """The top-level help of the declared commands, with the root's usage, options and text."""
    return HelpIndex(usage, text, options, tuple((row.name, row.summary) for row in COMMANDS))


def owner_of(command: str) -> str | None:
    """The module that registers top-level ``command``; None for a name no module registers."""
    return _OWNERS.get(command)


def version_text() -> str:
    """What ``oneiros --version`` prints: the package's version (which is the distribution's, as
    ``tests/test_cli_startup.py`` checks; reading it from the metadata would cost more than the rest)."""
    from oneiros import __version__

    return f"oneiros {__version__}"


def one_line(help_text: str | None) -> str:
    """A command's help as its row in the list: the first paragraph, on one line."""
    first = inspect.cleandoc(help_text or "").split("\n\n", 1)[0]
    return " ".join(first.replace("\b", "").split())


def _panel(title: str, rows: Sequence[tuple[str, str]], width: int) -> list[str]:
    name_width = max((len(name) for name, _ in rows), default=0)
    text_width = max(width - name_width - 6, 10)
    lines = [f"╭─ {title} " + "─" * max(width - len(title) - 5, 0) + "╮"]
    for name, text in rows:
        wrapped = textwrap.wrap(text, text_width, break_on_hyphens=False) or [""]
        for i, part in enumerate(wrapped):
            cell = f"{name if i == 0 else '':<{name_width}}  {part}"
            lines.append(f"│ {cell:<{width - 4}} │")
    lines.append("╰" + "─" * (width - 2) + "╯")
    return lines


def render(index: HelpIndex, width: int) -> str:
    """The top-level help at ``width`` columns, without a trailing newline."""
    width = max(width, _MIN_WIDTH)
    lines = ["", f" Usage: {index.usage}", ""]
    if index.text:
        lines += [f" {line}" for line in textwrap.wrap(index.text, width - 2, break_on_hyphens=False)] + [""]
    if index.options:
        lines += _panel("Options", index.options, width)
    if index.commands:
        lines += _panel("Commands", index.commands, width)
    return "\n".join(lines)


def terminal_width() -> int:
    """The width both paths render at: ``$COLUMNS``, else the terminal's, else 80."""
    return shutil.get_terminal_size((80, 24)).columns


def fast_path(argv: Sequence[str]) -> bool:
    """Answer ``--version`` or ``--help`` (alone) here; False for anything else."""
    if list(argv) == ["--version"]:
        _print(version_text())
        return True
    if list(argv) == ["--help"]:
        _print(render(listed_index(), terminal_width()))
        return True
    return False


def _print(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`oneiros --help | head -1`): exit 1 with no traceback, as Typer does,
        # and send what is left unflushed nowhere so that closing stdout at exit does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
