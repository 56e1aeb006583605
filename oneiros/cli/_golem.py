"""``oneiros golem create``: the one command that makes a golem with no episodes.

Every other command that names a golem takes only one that exists (a typo gets the nearest known
name and exit 2, and writes nothing); ``dream --episodes``/``--sample``, ``run --sample`` and
``import`` create the golem they record episodes into, as they always did."""

from __future__ import annotations

from typing import Annotated

import typer

from oneiros.cli._common import JsonOpt, StoreOpt, application, console, emit_json
from oneiros.cli._config import ConfigOpt, flag, load

__all__ = ["register"]

golem_app = typer.Typer(help="Create a golem (every other command takes only one that exists).", no_args_is_help=True)


@golem_app.command("create")
def create(
    golem_id: Annotated[str, typer.Argument(metavar="NAME", help="The new golem's id.", show_default=False)],
    name: Annotated[str, typer.Option("--name", help="A display name.")] = "",
    store: StoreOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create golem NAME with no episodes (an error if it exists)."""
    flags: dict[str, tuple[object, str]] = {}
    flag(flags, "store", store, "--store")
    effective = load(config, None, flags)
    with application(effective.store_url, config=effective, create=True) as app:
        made = app.create_golem(golem_id, name)
    if as_json:
        emit_json(made)
        return
    console.print(f"created golem [bold]{made.golem_id}[/bold] ({made.machine_state})")


def register(app: typer.Typer) -> None:
    app.add_typer(golem_app, name="golem")
