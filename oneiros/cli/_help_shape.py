"""The shape of the top-level help, apart from the code that renders it and the copy made of it
(``_help_index.py``), so that the copy and the renderer each import it and not each other."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["HelpIndex"]


class HelpIndex(NamedTuple):
    """What the top-level help shows: usage, the app's help text, its options and its commands."""

    digest: str
    usage: str
    text: str
    options: tuple[tuple[str, str], ...]
    commands: tuple[tuple[str, str], ...]
