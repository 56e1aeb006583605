"""The ``oneiros`` command line.

``main`` answers ``oneiros --version`` and ``oneiros --help`` before Typer is imported (see
:mod:`oneiros.cli._help`); anything else goes to the Typer app (:mod:`oneiros.cli._app`), whose root
group imports only the module of the command used, named in :mod:`oneiros.cli._listing`. The app is
found on first use of ``oneiros.cli.app``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

    from oneiros.cli._app import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        from oneiros.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """The ``oneiros`` command: the console script's entry point."""
    from oneiros.cli._help import fast_path

    if fast_path(sys.argv[1:]):
        return
    from oneiros.cli._app import app

    app(prog_name="oneiros")
