"""The Typer app, whose root group imports a command's module only when that command is used.

The root lists the commands declared in :data:`oneiros.cli._listing.COMMANDS` (name, module,
summary): ``oneiros status`` imports and builds ``oneiros/cli/_commands.py`` alone, ``oneiros token
--help`` only ``_server.py`` (importing and building every module's commands took most of a
command's time). A command module adds its commands with ``register(app)``; the table names the
module, and ``tests/test_cli_startup.py`` holds the table to what the modules register. The root's
own help is drawn by :func:`oneiros.cli._help.render` from the same table, as ``oneiros --help``
draws it before Typer is imported, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
import pkgutil
from difflib import get_close_matches
from functools import cache
from types import ModuleType
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from oneiros.cli._help import listed_index, one_line, owner_of, render, terminal_width, version_text
from oneiros.cli._listing import COMMANDS, ROOT_HELP

__all__ = ["app", "command_modules"]

_NOT_COMMANDS = frozenset({"_app", "_help", "_listing"})


class _LazyRoot(TyperGroup):
    """The root group: commands listed from the table, each module imported when its command is used."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [row.name for row in COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        owner = owner_of(cmd_name)
        return None if owner is None else _registered(owner).get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # Typer suggests near names from the commands added up front, and this group adds none.
        name = args[0] if args else ""
        if name and not name.startswith("-") and owner_of(name) is None and not ctx.resilient_parsing:
            near = get_close_matches(name, self.list_commands(ctx))
            if near:
                ctx.fail(f"No such command {name!r}. Did you mean {', '.join(map(repr, near))}?")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # Typer's click objects, read by attribute: some Typer versions vendor click, others use it.
        options = tuple(
            (", ".join([*param.opts, *param.secondary_opts]), getattr(param, "help", None) or "")
            for param in self.get_params(ctx)
            if param.param_type_name == "option" and not getattr(param, "hidden", False)
        )
        usage = " ".join([ctx.command_path, *self.collect_usage_pieces(ctx)])
        formatter.write(render(listed_index(usage, options, one_line(self.help)), terminal_width()))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # Typer prints the help of a bare `oneiros` from inside its Rich formatter and then stays
        # silent about the error; with the light formatter the help must be printed here.
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())
            ctx.exit(2)
        return list(super().parse_args(ctx, args))


@cache
def _registered(module: str) -> dict[str, Any]:
    """The commands ``module`` registers, by name, built on first use."""
    probe = typer.Typer()
    importlib.import_module(module).register(probe)
    return dict(typer.main.get_group(probe).commands)


def _version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit


def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """An event-sourced dream state for autonomous agents."""


def command_modules(package: str = "oneiros.cli") -> list[ModuleType]:
    """Every module of ``package`` that registers commands (defines ``register``), by module name."""
    path = importlib.import_module(package).__path__
    names = sorted(m.name for m in pkgutil.iter_modules(path) if m.name not in _NOT_COMMANDS)
    modules = [importlib.import_module(f"{package}.{name}") for name in names]
    return [module for module in modules if callable(getattr(module, "register", None))]


app = typer.Typer(
    name="oneiros",
    cls=_LazyRoot,
    help=ROOT_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    callback=_root,
)
