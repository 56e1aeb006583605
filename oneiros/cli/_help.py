"""``oneiros --help`` and ``oneiros --version`` without Typer, Rich or any command module.

Both are answered before the command line is built: building it imports Typer, Rich and every command
module (most of the log, config and settings packages behind them), which costs several times what
Python itself takes to start. The top-level help is rendered here, by :func:`render`, on both paths:
the real app's root group (:mod:`oneiros.cli._app`) feeds it the commands it actually registered, and
the fast path feeds it :data:`oneiros.cli._help_index.INDEX`, a copy of the same made by
``python -m oneiros.cli._app``.

The copy can go stale when a command module changes, so it carries a digest of every module of this
package, checked on each use (reading and hashing them takes well under a millisecond). When the
digest differs, the fast path steps aside and the real app answers: a new command is always listed,
only slower until the copy is made again. ``tests/test_cli_startup.py`` fails while the copy is stale,
naming the command that makes it again.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from oneiros.cli._help_shape import HelpIndex

__all__ = [
    "INDEX_PATH",
    "HelpIndex",
    "fast_path",
    "index_source",
    "one_line",
    "owner_of",
    "render",
    "sources_digest",
    "version_text",
]

_HERE = Path(__file__).resolve().parent
_INDEX_FILE = "_help_index.py"
INDEX_PATH = _HERE / _INDEX_FILE
_MIN_WIDTH = 40


def sources_digest(directory: Path = _HERE) -> str:
    """A digest of every module of the CLI package but the index itself: names and bytes."""
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py") and name != _INDEX_FILE:
            digest.update(name.encode() + b"\0" + (directory / name).read_bytes() + b"\0")
    return digest.hexdigest()


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
    """Answer ``--version`` or ``--help`` (alone) here; False for anything else, or a stale index."""
    if list(argv) == ["--version"]:
        _print(version_text())
        return True
    if list(argv) != ["--help"] or not _fresh_index():
        return False
    from oneiros.cli._help_index import INDEX

    _print(render(INDEX, terminal_width()))
    return True


def _fresh_index() -> bool:
    """Whether the committed index was made from the CLI's sources as they are."""
    try:
        from oneiros.cli._help_index import INDEX
    except ImportError:  # no index made yet: the real app answers
        return False
    try:
        return INDEX.digest == sources_digest()
    except OSError:  # the sources cannot be read (an unusual install): the real app answers
        return False


def owner_of(command: str) -> str | None:
    """The module that registers top-level ``command``, from the index; None for a name the index
    does not know, or a stale index (the whole app is built then, which knows every command)."""
    try:
        from oneiros.cli._help_index import OWNERS
    except ImportError:
        return None
    owner = OWNERS.get(command)
    return owner if owner is not None and _fresh_index() else None


def _print(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`oneiros --help | head -1`): exit 1 with no traceback, as Typer does,
        # and send what is left unflushed nowhere so that closing stdout at exit does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


def index_source(index: HelpIndex, owners: dict[str, str] | None = None) -> str:
    """The text of ``_help_index.py`` holding ``index``, and ``owners``: each command's module."""

    def rows(pairs: tuple[tuple[str, str], ...]) -> str:
        return "".join(f"        ({name!r}, {text!r}),\n" for name, text in pairs)

    return (
        '"""Made by ``python -m oneiros.cli._app``: do not edit. The top-level help as the app registers it."""\n\n'
        "# ruff: noqa: E501\n\n"
        "from oneiros.cli._help_shape import HelpIndex\n\n"
        "# fmt: off\n"
        "INDEX = HelpIndex(\n"
        f"    digest={index.digest!r},\n"
        f"    usage={index.usage!r},\n"
        f"    text={index.text!r},\n"
        f"    options=(\n{rows(index.options)}    ),\n"
        f"    commands=(\n{rows(index.commands)}    ),\n"
        ")\n\n"
        "OWNERS = {\n" + "".join(f"    {name!r}: {module!r},\n" for name, module in (owners or {}).items()) + "}\n"
    )
