"""The ``oneiros`` command line.

``main`` answers ``oneiros --version`` and ``oneiros --help`` before building the Typer app (see
:mod:`oneiros.cli._help`); ``oneiros COMMAND ...`` builds only the module that registers COMMAND
(named by the help index), anything else the whole app. The app (:mod:`oneiros.cli._app`) is found
on first use of ``oneiros.cli.app``: each command module of this package that defines
``register(app)`` adds its commands there, with no edit here.
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
    from oneiros.cli._app import app_for

    app_for(sys.argv[1:])(prog_name="oneiros")
