"""The ``oneiros`` command line. Each command group lives in its own module and registers here."""

from __future__ import annotations

from typing import Annotated

import typer

from oneiros.cli import _commands, _content, _insight, _lab, _projections, _recover, _schedule, _server, _workers

__all__ = ["app", "main"]

app = typer.Typer(
    name="oneiros",
    help="An event-sourced dream state for autonomous agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"oneiros {version('oneiros')}")
        raise typer.Exit


@app.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """An event-sourced dream state for autonomous agents."""


_commands.register(app)
_schedule.register(app)
_content.register(app)
_projections.register(app)
_workers.register(app)
_recover.register(app)
_lab.register(app)
_insight.register(app)
_server.register(app)


def main() -> None:
    app()
